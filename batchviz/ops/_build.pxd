# C types for batchviz/ops/_build.py when it is compiled (batchviz/compiled.py): the graph
# and its lists, node ids and depths. The steps are those of the .py.
import cython
from batchviz.graph cimport ExpressionBase, LazyGraph, live_graph


@cython.locals(ids=list, e=ExpressionBase)
cpdef tuple as_nodes(xs)

@cython.locals(e=ExpressionBase, g=LazyGraph, node=Py_ssize_t)
cpdef build_memoized(op, x, attrs)

@cython.locals(g=LazyGraph, depths=list, ids=list, x=ExpressionBase, depth=Py_ssize_t,
               d=Py_ssize_t, args=tuple)
cpdef build_over_nodes(op, xs)

@cython.locals(shapes=list, first=Py_ssize_t, second=Py_ssize_t)
cpdef tuple shapes_memo_key(op, LazyGraph graph, tuple args)

@cython.locals(shapes=list, x=Py_ssize_t)
cpdef tuple terms_memo_key(op, prefix, LazyGraph graph, tuple args)

cpdef parameter_node_of(LazyGraph graph, x)

@cython.locals(x=ExpressionBase, g=LazyGraph, depths=list, ids=list,
               depth=Py_ssize_t, d=Py_ssize_t, args=tuple, k=Py_ssize_t)
cpdef build_over_parameters(op, terms)

@cython.locals(g=LazyGraph, n=Py_ssize_t)
cpdef unary_node(op, sig, ExpressionBase x)

@cython.locals(g=LazyGraph, a=Py_ssize_t, b=Py_ssize_t, shapes=list, depths=list, da=Py_ssize_t,
               db=Py_ssize_t)
cpdef binary_node(op, sig, ExpressionBase x, ExpressionBase y)
