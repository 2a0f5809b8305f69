# C types for batchviz/plan/reads.py when it is compiled (batchviz/compiled.py); the steps
# are those of the .py.
import cython


@cython.locals(first=Py_ssize_t, i=Py_ssize_t, step_=Py_ssize_t)
cpdef bint _evenly_spaced(list addresses, Py_ssize_t step) except -1
