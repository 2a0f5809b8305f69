# C types for batchviz/ops/structure.py when it is compiled (batchviz/compiled.py): the
# concatenation that DyNet programs build at every tree node or word, called from
# batchviz.dynet by C. The steps are those of the .py.
import cython
from batchviz.ops._build cimport build_over_nodes, shapes_memo_key


cpdef concatenate(xs)
