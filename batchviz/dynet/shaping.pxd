# C types for batchviz/dynet/shaping.py when it is compiled (batchviz/compiled.py): the
# expressions that a concatenation reads (a Tree-LSTM's [h_l; h_r] at every tree node). The
# steps are those of the .py.
import cython
from batchviz.graph cimport shape_of
from batchviz.ops.structure cimport concatenate as bv_concatenate
from batchviz.dynet.expression cimport ExpressionCore, expression_of, node_of


@cython.locals(first=ExpressionCore, e=ExpressionCore, bd=Py_ssize_t, nodes=list, shape=tuple)
cpdef _rows_of(list xs)


@cython.locals(first=ExpressionCore)
cpdef concatenate(xs, d=*)

@cython.locals(e=ExpressionCore, bd=Py_ssize_t)
cpdef _aligned(list xs, who)

@cython.locals(bd=Py_ssize_t, dims=list, ndim=Py_ssize_t, have=tuple, nodes=list, columns=list)
cpdef concatenate_aligned(xs, Py_ssize_t d)

@cython.locals(x=ExpressionCore)
cpdef transpose(x, dims=*)
