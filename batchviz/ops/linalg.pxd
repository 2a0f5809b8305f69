# C types for batchviz/ops/linalg.py when it is compiled (batchviz/compiled.py): the
# constructors' graph and node ids. The steps are those of the .py.
import cython
from batchviz.graph cimport ExpressionBase, LazyGraph, live_graph
from batchviz.ops._build cimport build_over_parameters, parameter_node_of, terms_memo_key


@cython.locals(shapes=list)
cpdef tuple product_memo_key(op, LazyGraph graph, tuple args)

@cython.locals(e=ExpressionBase, g=LazyGraph, n=Py_ssize_t, args=tuple)
cpdef matmul(a, x)


cpdef activated_affine(activation, terms)


cpdef _mm_forward(xp, A, x, shared, rows=*)
