# C types for batchviz/schedule/view.py when it is compiled (batchviz/compiled.py); the
# steps are those of the .py.
import cython


@cython.locals(k=Py_ssize_t)
cpdef list pending_nodes(const unsigned char[::1] pending, Py_ssize_t start)


@cython.locals(n=Py_ssize_t, k=Py_ssize_t, a=Py_ssize_t, total=Py_ssize_t, arguments=tuple)
cpdef count_dependencies(list args, const unsigned char[::1] pending, Py_ssize_t start,
                         long long[::1] unresolved, long long[::1] user_end)


@cython.locals(k=Py_ssize_t, a=Py_ssize_t, arguments=tuple)
cpdef place_users(list args, const unsigned char[::1] pending, Py_ssize_t start,
                  long long[::1] user_end, long long[::1] users)
