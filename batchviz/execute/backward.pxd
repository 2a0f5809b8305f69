# C types for batchviz/execute/backward.py when it is compiled (batchviz/compiled.py): the
# walk's counters, flags and the record of the batches the loss reaches, so that the loop
# over batches and reads tests and counts in C. The steps are those of the .py.
import cython


@cython.locals(reached=bytearray, weight_terms=dict, check=bint, defer=bint, ran=Py_ssize_t,
               scatters=Py_ssize_t, b=Py_ssize_t, need=bint)
cpdef tuple execute_backward(graph, loss, xp, bint keep=*)
