# C types for batchviz/schedule/agenda.py when it is compiled (batchviz/compiled.py); the
# steps are those of the .py.
import cython


cdef class Agenda:
    cdef public list signature, group
    cdef public dict ready
    cdef public Py_ssize_t start, waiting
    cdef public long long[::1] unresolved, user_start, users

    @cython.locals(unresolved='long long[::1]', start=Py_ssize_t, k=Py_ssize_t)
    cpdef _join_ready(self, const unsigned char[::1] pending)

    @cython.locals(s=Py_ssize_t, nodes=list)
    cdef _join(self, Py_ssize_t node)

    @cython.locals(batch=list, ready=list, unresolved='long long[::1]',
                   user_start='long long[::1]', users='long long[::1]', start=Py_ssize_t,
                   i=Py_ssize_t, k=Py_ssize_t, e=Py_ssize_t, u=Py_ssize_t)
    cpdef tuple run(self, signature, nodes=*)


@cython.locals(batches=list, agenda=Agenda)
cpdef list run_agenda(view, rule, log=*)


@cython.locals(total='long long[::1]', count='long long[::1]', order=list, k=Py_ssize_t,
               s=Py_ssize_t)
cpdef dict depth_averages(list signature, list depth, const unsigned char[::1] pending,
                          Py_ssize_t start, Py_ssize_t n_signatures)


@cython.locals(chosen=Py_ssize_t, lowest=Py_ssize_t, s=Py_ssize_t, here=Py_ssize_t)
cpdef Py_ssize_t lowest_place(dict ready, list place) except? -2
