# C types for batchviz/dynet/losses.py when it is compiled (batchviz/compiled.py): the
# expression of the scores of a loss (built at every word or tree node). The steps are those
# of the .py.
import cython
from batchviz.graph cimport shape_of
from batchviz.ops.losses cimport pickneglogsoftmax as bv_pickneglogsoftmax
from batchviz.dynet.expression cimport ExpressionCore, as_expression, expression_of, node_of


@cython.locals(e=ExpressionCore)
cpdef pickneglogsoftmax(x, v)


cpdef _scores(ExpressionCore x, who)
