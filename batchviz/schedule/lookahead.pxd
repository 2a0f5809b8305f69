# C types for batchviz/schedule/lookahead.py when it is compiled (batchviz/compiled.py); the
# steps are those of the .py.
import cython


cdef class WaitingLevels:
    cdef public list signature
    cdef public Py_ssize_t start
    cdef public long long[::1] latest, first, count, earliest

    @cython.locals(signature=list, latest='long long[::1]', count='long long[::1]',
                   first='long long[::1]', earliest='long long[::1]', start=Py_ssize_t,
                   u=Py_ssize_t, s=Py_ssize_t, level=Py_ssize_t)
    cpdef joined(self, list nodes)

    @cython.locals(signature=list, latest='long long[::1]', count='long long[::1]',
                   first='long long[::1]', earliest='long long[::1]', start=Py_ssize_t,
                   i=Py_ssize_t, s=Py_ssize_t, level=Py_ssize_t)
    cpdef wait(self, list nodes, const long long[::1] unresolved)
