# C types for batchviz/dynet/expression.py when it is compiled (batchviz/compiled.py): a
# DyNet expression's node and minibatch size, and a pending affine transform's terms, are C
# fields; the functions that every gate and element-wise op runs take them as such. The
# steps are those of the .py.
import cython
from batchviz.graph cimport ExpressionBase, shape_of
from batchviz.ops._build cimport build_over_parameters
from batchviz.ops.linalg cimport matmul as linalg_matmul


cdef dict _ACTIVATED_AFFINE


cdef class ExpressionCore:
    cdef public object _x
    cdef public Py_ssize_t bd


cdef class Expression(ExpressionCore):
    pass


cdef class Affine(Expression):
    cdef public object terms, _built
    cdef public tuple _activated
    cdef public Py_ssize_t rows

    @cython.locals(terms=tuple, bd=Py_ssize_t, other=Affine, bias_expression=ExpressionCore,
                   rows=Py_ssize_t, shape=tuple)
    cpdef plus(self, b)
    @cython.locals(terms=tuple)
    cpdef activated(self, activation)
    @cython.locals(terms=tuple)
    cpdef _build(self)
    @cython.locals(node=ExpressionBase)
    cpdef built_node(self)


cpdef computed_if_immediate(ExpressionCore e)

@cython.locals(e=ExpressionCore)
cpdef expression_of(x, Py_ssize_t bd=*, type kind=*)

@cython.locals(pending=Affine)
cpdef node_of(ExpressionCore e)

cpdef as_expression(e, who)

@cython.locals(x=ExpressionCore, y=ExpressionCore)
cpdef elementwise(op, a, b, who, bint right_only=*)

cpdef tuple with_bias(bias, tuple terms)

@cython.locals(e=Affine)
cpdef pending_affine(tuple terms, Py_ssize_t bd, Py_ssize_t rows)

@cython.locals(pending=Affine)
cpdef add(a, b)

@cython.locals(x=ExpressionCore, y=ExpressionCore, ls=tuple, rs=tuple)
cpdef matmul(a, b)

@cython.locals(da=tuple, db=tuple, ls=tuple, bd=Py_ssize_t)
cpdef matmul_checked(ExpressionCore a, ExpressionCore b)

@cython.locals(bd=Py_ssize_t)
cpdef matmul_other(ExpressionCore a, ExpressionCore b, tuple da, tuple db)
