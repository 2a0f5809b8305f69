# C types for batchviz/ops/leaves.py when it is compiled (batchviz/compiled.py): the
# graph a word's lookup is added to. The steps are those of the .py.
import cython
from batchviz.graph cimport LazyGraph, current_graph


@cython.locals(graph=LazyGraph)
cpdef lookup(table, index)
