# C types for batchviz/signature.py when it is compiled (batchviz/compiled.py); the steps
# are those of the .py. (Compiled so that the layout and the planner call size_of, asked
# for every batch, as a C function.)
import cython


cdef dict _SIZES


cpdef size_of(shape)
