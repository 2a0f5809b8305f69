# C types for batchviz/execute/forward.py when it is compiled (batchviz/compiled.py); the
# steps are those of the .py. (cpdef: the executor calls them per batch and per read as C
# functions.)
import cython

from batchviz.execute.memory cimport batch_outputs, copy_index, gather, strided_view
from batchviz.plan.reads cimport record


@cython.locals(ins=list, indices=list, n=Py_ssize_t)
cpdef run_batch(graph, list arenas, arena, batch, xp, bint check=*)


cpdef tuple read_block(graph, list arenas, read, xp)
