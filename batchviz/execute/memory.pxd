# C types for batchviz/execute/memory.py when it is compiled (batchviz/compiled.py); the
# steps are those of the .py. (cpdef: the executor calls them per batch and per read as C
# functions.)
import cython

from batchviz.plan.batch cimport BatchPlan


@cython.locals(stride=Py_ssize_t)
cpdef rows_view(flat, Py_ssize_t width)


cpdef tuple copy_index(starts, size)


cpdef gather(flat, index, Py_ssize_t width)


cpdef strided_view(xp, flat, Py_ssize_t start, Py_ssize_t n, Py_ssize_t size, Py_ssize_t step)


cpdef segment(xp, flat, Py_ssize_t start, Py_ssize_t length, shape)


cpdef strided_array(xp, flat, Py_ssize_t start, tuple shape, tuple strides)


@cython.locals(item=Py_ssize_t, axis=Py_ssize_t, strides=list, shape=tuple)
cpdef batch_outputs(xp, flat, BatchPlan batch)
