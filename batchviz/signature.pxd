# C types for batchviz/signature.py when it is compiled (batchviz/compiled.py); the steps
# are those of the .py. Compiled, a SignatureInfo keeps its fields in C (still a frozen
# dataclass): the layout and the planner read them for every batch, and call size_of as a
# C function.
import cython


cdef class SignatureInfo:
    cdef readonly tuple key
    cdef readonly object op
    cdef readonly object shared
    cdef readonly object cheap
    cdef readonly object reads
    cdef readonly Py_ssize_t blocks
    cdef readonly Py_ssize_t arity


cdef dict _SIZES


cpdef size_of(shape)
