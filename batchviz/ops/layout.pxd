# C types for batchviz/ops/layout.py when it is compiled (batchviz/compiled.py): the shapes
# and indices that a broadcast or a pick is built with (DyNet's broadcasting of an
# element-wise op's arguments, at every step of an attention model). The steps are those of
# the .py.
import cython
from batchviz.ops._build cimport build_memoized


@cython.locals(out=list)
cpdef tuple _ints(values, who)

cpdef tuple _shape(shape, who)
