# C types for batchviz/expression.py when it is compiled (batchviz/compiled.py): an
# expression, made for every node, is a C type (its fields are ExpressionBase's), made and
# freed without the generic steps of a Python class. The steps are those of the .py.
import cython
from batchviz.graph cimport ExpressionBase


cdef class Expression(ExpressionBase):
    pass
