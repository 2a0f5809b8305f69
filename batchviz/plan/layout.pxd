# C types for batchviz/plan/layout.py when it is compiled (batchviz/compiled.py); the steps
# are those of the .py.
import cython


@cython.locals(shapes=list, sigs=list, infos=list, address=list, batch_of=list, sizes=list,
               strides=list, next_free=Py_ssize_t, first_free=Py_ssize_t,
               first_batch=Py_ssize_t, k=Py_ssize_t, i=Py_ssize_t, node=Py_ssize_t,
               size=Py_ssize_t, blocks=Py_ssize_t)
cpdef tuple place_batches(graph, batches, layout, Py_ssize_t start)


@cython.locals(shapes=list, node=Py_ssize_t, sizes=list)
cpdef _sizes_if_several(batch, shapes)
