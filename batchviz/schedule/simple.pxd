# C types for batchviz/schedule/simple.py when it is compiled (batchviz/compiled.py); the
# steps are those of the .py.
import cython


@cython.locals(deepest=Py_ssize_t, k=Py_ssize_t, d=Py_ssize_t, j=Py_ssize_t, node=Py_ssize_t,
               s=Py_ssize_t, level_start='long long[::1]', by_depth='long long[::1]',
               batches=list, group=list, present=list)
cpdef list depth_batches(list depth, list signature, const unsigned char[::1] pending,
                         Py_ssize_t start, Py_ssize_t n_signatures)
