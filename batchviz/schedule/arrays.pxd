# C types for batchviz/schedule/arrays.py when it is compiled (batchviz/compiled.py); the
# steps are those of the .py.
import cython


@cython.locals(k=Py_ssize_t)
cpdef copy_ints(list ints, long long[::1] values)
