# C types for batchviz/plan/batch.py when it is compiled (batchviz/compiled.py); the steps
# are those of the .py.


cdef class BatchPlan:
    cdef readonly Py_ssize_t index
    cdef readonly Py_ssize_t signature
    cdef readonly object op
    cdef readonly tuple nodes
    cdef readonly tuple attrs
    cdef readonly Py_ssize_t arena
    cdef readonly Py_ssize_t start
    cdef readonly Py_ssize_t length
    cdef readonly object sizes
    cdef readonly tuple out_shape
    cdef readonly Py_ssize_t block_stride
    cdef readonly tuple reads
    cdef readonly tuple in_shapes
    cdef readonly tuple needs
    cdef readonly tuple origins
    cdef readonly tuple sources
    cdef readonly bint requires_grad
    cdef readonly bint together
    cdef readonly object counts
