# C types for batchviz/dynet/expression.py when it is compiled (batchviz/compiled.py): a
# DyNet expression's node and minibatch size, and a pending affine transform's terms, are C
# fields. The steps are those of the .py.
import cython


cdef class ExpressionCore:
    cdef public object _x
    cdef public Py_ssize_t bd


cdef class AffineCore(ExpressionCore):
    cdef public object terms, _built, _activated
