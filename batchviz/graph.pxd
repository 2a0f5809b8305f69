# C types for batchviz/graph.py when it is compiled (batchviz/compiled.py): an expression's
# fields and the graph's lists are C fields, so that the compiled op constructors read
# them without a dictionary lookup. The steps are those of the .py.
import cython

cdef class ExpressionBase:
    cdef public object graph
    cdef public Py_ssize_t node


cdef class LazyGraph:
    cdef public list ops, args, attrs, shapes, sigs, depths
    cdef public object sources, _made, sigtab, _previous, number, finished_because
    cdef public object expression_class
    cdef public dict memo, param_node, param_of_node, shape_objects
    cdef public bint finished
    cdef public list checkpoints
    cdef public Py_ssize_t revision
    cdef dict __dict__

    cpdef push(self, op, tuple args, attrs, tuple shape, sig, Py_ssize_t depth)
    @cython.locals(kind=type, e=ExpressionBase)
    cpdef expression(self, Py_ssize_t node)
    @cython.locals(depths=list, depth=Py_ssize_t, a=Py_ssize_t, d=Py_ssize_t)
    cpdef add(self, op, tuple args, attrs=*)
    cpdef add_memoized(self, op, tuple args, attrs, Py_ssize_t depth)
    cpdef add_known(self, op, tuple args, attrs, Py_ssize_t depth, key)


@cython.locals(e=ExpressionBase, graph=LazyGraph)
cpdef shape_of(x)


@cython.locals(live=LazyGraph)
cpdef LazyGraph live_graph(ExpressionBase e)


@cython.locals(graph=LazyGraph)
cpdef LazyGraph current_graph()
