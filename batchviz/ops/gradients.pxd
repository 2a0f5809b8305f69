# C types for batchviz/ops/gradients.py when it is compiled (batchviz/compiled.py): each kind
# of gradient an extension type whose fields are C slots, so that a kernel makes one (a
# Tree-LSTM's gates make a weight's and a bias's per batch) without running an __init__ in
# the interpreter, and the executor reads its fields and calls value() in C. The steps are
# those of the .py.


cdef class WeightGradient:
    cdef readonly object g
    cdef readonly object x

    cpdef value(self, xp, out=*)


cdef class RowSums:
    cdef readonly object g

    cpdef value(self, xp, out=*)


cdef class BlockGradient:
    cdef readonly tuple shape
    cdef readonly Py_ssize_t lo
    cdef readonly Py_ssize_t hi
    cdef readonly object values

    cpdef dense(self, xp)


cdef class SparseRows:
    cdef readonly object rows
    cdef readonly object values
