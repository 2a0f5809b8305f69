# C types for batchviz/ops/losses.py when it is compiled (batchviz/compiled.py): the loss
# that DyNet programs build at every word or tree node, called from batchviz.dynet by C.
# The steps are those of the .py.
import cython
from batchviz.graph cimport ExpressionBase, shape_of
from batchviz.ops._build cimport build_memoized


cpdef pickneglogsoftmax(x, index)
