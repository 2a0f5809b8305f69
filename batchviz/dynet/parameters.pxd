# C types for batchviz/dynet/parameters.py when it is compiled (batchviz/compiled.py): DyNet's
# parameters, lookup tables and looked-up rows are C types, as the expressions they are
# (``.expression``): ``W * x`` and ``b + W * x``, of every gate of every word, start at a
# parameter, and reach DyNet's operators by the type's own slot. The steps are those of
# the .py.
import cython
from batchviz.ops.leaves cimport lookup as bv_lookup
from batchviz.dynet.expression cimport Expression, expression_of


cdef class _Stored(Expression):
    cdef public object _p, _name, _updated, _offset, _const


cdef class Parameters(_Stored):
    pass


cdef class OffsetParameters(Parameters):
    pass


cdef class LookupParameters(_Stored):
    cdef public object row_dims

    cpdef _rows(self, node, Py_ssize_t batch=*)


cdef class LookupExpression(Expression):
    cdef public object table, looked_up


@cython.locals(table=LookupParameters)
cpdef lookup(p, index=*, update=*)

@cython.locals(e=LookupExpression)
cpdef looked_up(x, Py_ssize_t bd, LookupParameters table, node)
