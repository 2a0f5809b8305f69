# C types for batchviz/dynet/dims.py when it is compiled (batchviz/compiled.py): the shapes
# that DyNet's broadcasting compares (an attention model's ``colwise_add`` of a query to every
# key at every step). The steps are those of the .py.
import cython
from batchviz.graph cimport shape_of


@cython.locals(shape=tuple)
cpdef dims_of(e)

cpdef tuple layout(dims, Py_ssize_t bd)

@cython.locals(da=tuple, db=tuple, longer=tuple, dims=tuple, common=Py_ssize_t, i=Py_ssize_t,
               x=Py_ssize_t, y=Py_ssize_t)
cpdef combine_dims(first, second, who, bint right_only=*)

@cython.locals(target=tuple, have=tuple, mine=tuple, view=tuple)
cpdef to_shape(e, dims, Py_ssize_t bd)
