# C types for batchviz/dynet/arith.py when it is compiled (batchviz/compiled.py): the
# expression that an activation or another op of one argument is applied to. The steps are
# those of the .py.
import cython
from batchviz.graph cimport shape_of
from batchviz.dynet.expression cimport (Affine, ExpressionCore, as_expression,
                                         elementwise, expression_of, node_of)


@cython.locals(e=ExpressionCore)
cpdef unary(op, name, x)

@cython.locals(pending=Affine)
cpdef activation(op, name, x)

@cython.locals(xs=list, first=ExpressionCore, e=ExpressionCore, nodes=list)
cpdef _common(xs, who)
