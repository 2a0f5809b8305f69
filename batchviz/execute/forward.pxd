# C types for batchviz/execute/forward.py when it is compiled (batchviz/compiled.py); the
# steps are those of the .py. (cpdef: the executor calls run_batch per batch as a C function;
# read_block stays a Python function, which benchmarks/hosttime.py times by replacing it.)
import cython

from batchviz.execute.memory cimport batch_outputs, copy_index, gather, segment, strided_view
from batchviz.plan.batch cimport BatchPlan


cdef class BatchRun:
    cdef readonly list ins
    cdef readonly object out
    cdef readonly tuple indices


@cython.locals(ins=list, indices=list, reads=tuple, shapes=tuple, sources=tuple, j=Py_ssize_t,
               source=Py_ssize_t, earlier=BatchRun)
cpdef run_batch(graph, list runs, list arenas, arena, BatchPlan batch, xp, bint check=*)


@cython.locals(n=Py_ssize_t)
cpdef run_kernel(BatchPlan batch, list ins, out, xp)


cpdef tuple _copied_or_strided(graph, list arenas, read, xp)
