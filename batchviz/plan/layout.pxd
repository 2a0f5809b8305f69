# C types for batchviz/plan/layout.py when it is compiled (batchviz/compiled.py); the steps
# are those of the .py.
import cython

from batchviz.signature cimport SignatureInfo, size_of


@cython.locals(shapes=list, sigs=list, infos=list, address=list, batch_of=list, sizes=list,
               strides=list, next_free=Py_ssize_t, first_free=Py_ssize_t,
               first_batch=Py_ssize_t, k=Py_ssize_t, i=Py_ssize_t, node=Py_ssize_t,
               size=Py_ssize_t, blocks=Py_ssize_t, info=SignatureInfo)
cpdef tuple place_batches(graph, batches, layout, Py_ssize_t start)


@cython.locals(shapes=list, node=Py_ssize_t, sizes=list)
cpdef _sizes_if_several(batch, shapes)


cdef class Layout:
    cdef public list address
    cdef public list batch_of
    cdef public list bases
    cdef public object next_address
    cdef public list batches

    @cython.locals(bases=list, low=Py_ssize_t, high=Py_ssize_t, middle=Py_ssize_t,
                    base=Py_ssize_t)
    cpdef Py_ssize_t arena_of(self, Py_ssize_t address) except? -2

    @cython.locals(address=list, addresses=list, node=Py_ssize_t)
    cpdef list addresses_of(self, nodes, Py_ssize_t block=*)

    @cython.locals(address=Py_ssize_t)
    cpdef Py_ssize_t address_of(self, Py_ssize_t node, Py_ssize_t block=*) except? -2

    @cython.locals(address=Py_ssize_t, arena=Py_ssize_t)
    cpdef tuple where(self, Py_ssize_t node, Py_ssize_t block=*)
