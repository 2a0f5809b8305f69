# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled twins of the definitions marked ``@compiled_twin`` (see :mod:`batchviz.twins`).

Each twin here takes the same steps as the readable version named in its comment, with C
types where they save the interpreter's work: the graph's lists are C fields
(:class:`NodeLists`), an expression's graph and node id too (:class:`ExpressionBase`), and
a DyNet expression's node and minibatch size (:class:`ExpressionCore`). Change a readable
version, change its twin: ``tests/test_compiled_twins.py`` compares the two.

The Python objects the twins use (the op constructors' general path, DyNet's Expression
class, ...) are imported on first use, when the modules that define them are complete.
"""
import numbers

cdef extern from *:
    """
    /* An instance of the type `kind`, from its tp_new (what `kind.__new__(kind)` does, without
       looking `__new__` up and checking its argument: the callers pass subtypes of the
       extension types below, which keep their tp_new). */
    static PyObject *twins_new_instance(PyObject *kind) {
        PyObject *none = PyTuple_New(0);
        PyObject *made;
        if (none == NULL) return NULL;
        made = ((PyTypeObject *)kind)->tp_new((PyTypeObject *)kind, none, NULL);
        Py_DECREF(none);
        return made;
    }
    """
    object twins_new_instance(object kind)


# --- batchviz/graph.py -----------------------------------------------------------------

cdef class ExpressionBase:
    """Twin of :class:`batchviz.graph.ExpressionBase`."""

    cdef public object graph
    cdef public Py_ssize_t node

    def __init__(self, graph, Py_ssize_t node):
        self.graph = graph
        self.node = node

    @property
    def shape(self) -> tuple:
        graph = self.graph
        if isinstance(graph, NodeLists):
            return (<NodeLists>graph).shapes[self.node]
        return graph.shapes[self.node]


cdef class NodeLists:
    """Twin of :class:`batchviz.graph.NodeLists`: what building a node reads and writes, as
    C fields."""

    cdef public list ops, args, attrs, shapes, sigs, depths
    cdef public object sources, _made
    cdef public dict memo, param_node, param_of_node
    cdef public bint finished


def LazyGraph_push(NodeLists self, op, args, attrs, shape, sig, depth):
    """Twin of :meth:`batchviz.graph.LazyGraph.push`."""
    return append_node(self, op, args, attrs, shape, sig, depth)


cdef object append_node(NodeLists self, op, args, attrs, shape, sig, depth):
    cdef Py_ssize_t node = len(self.ops)
    self.ops.append(op)
    self.args.append(args)
    self.attrs.append(attrs)
    self.shapes.append(shape)
    self.sigs.append(sig)
    self.depths.append(depth)
    if self.sources is not None:
        from batchviz.graph import user_source_line
        self.sources.append(user_source_line())
    e = new_handle(self.expression_type, self, node)
    if self._made is not None:   # (LazyGraph.expression: a mark is set)
        self._made.append(e)
    return e


cdef type _plain_handle_type = None     # the last expression type found to be plain


cdef inline object new_handle(kind, graph, Py_ssize_t node):
    """``kind(graph, node)``. When ``kind`` is an ExpressionBase that keeps its ``__new__``
    and ``__init__`` (``bv.Expression``: it only adds methods), the struct is filled in
    directly, as that ``__init__`` would."""
    global _plain_handle_type
    cdef ExpressionBase e
    if kind is not _plain_handle_type:
        if not (isinstance(kind, type) and issubclass(kind, ExpressionBase)
                and kind.__init__ is ExpressionBase.__init__
                and kind.__new__ is ExpressionBase.__new__):
            return kind(graph, node)
        _plain_handle_type = kind
    e = <ExpressionBase>twins_new_instance(_plain_handle_type)
    e.graph, e.node = graph, node
    return e


cdef inline object push(NodeLists g, op, args, attrs, shape, sig, depth):
    """``g.push(...)``."""
    return append_node(g, op, args, attrs, shape, sig, depth)


def LazyGraph_add_memoized(NodeLists self, op, args, attrs, depth):
    """Twin of :meth:`batchviz.graph.LazyGraph.add_memoized`."""
    return add_memoized(self, op, args, attrs, depth)


cdef object add_memoized(NodeLists g, op, args, attrs, depth):
    memo_key = type(op).memo_key  # (an op's memo_key is a plain method: its function)
    if memo_key is AffineArguments_memo_key:  # (the affine ops: a C call)
        key = affine_memo_key(op, g, args, attrs)
    elif memo_key is Lookup_memo_key:
        key = (op, args[0])
    elif memo_key is MatMul_memo_key:
        key = matmul_memo_key(op, g, args)
    elif memo_key is PickNegLogSoftmax_memo_key:
        key = (op, g.shapes[args[0]])
    elif memo_key is Concatenate_memo_key:
        key = concatenate_memo_key(op, g, args)
    else:
        key = memo_key(op, g, args, attrs)
    known = g.memo.get(key)
    if known is None:
        return g.add(op, args, attrs)
    return push(g, op, args, attrs, known[1], known[0], depth)


cdef inline NodeLists live_graph(x):
    """The graph of ``x`` if ``x`` is an expression of a graph not finished, else None
    (``isinstance(x, ExpressionBase) and not x.graph.finished``)."""
    if isinstance(x, ExpressionBase):
        graph = (<ExpressionBase>x).graph
        if isinstance(graph, NodeLists) and not (<NodeLists>graph).finished:
            return <NodeLists>graph
    return None


# --- batchviz/ops/_build.py ----------------------------------------------------------------

cdef object _general_build = None  # what the op modules define, imported on first use
cdef object _expression_list, _no_prefix, _ACTIVATED, _ACTIVATIONS, _MATMUL, _AFFINE
cdef object _CONCAT, _PNLS, _bv_cmult


cdef inline op_names():
    global _general_build, _expression_list, _no_prefix, _ACTIVATED, _ACTIVATIONS, _MATMUL
    global _AFFINE, _CONCAT, _PNLS, _bv_cmult
    if _general_build is None:
        from batchviz.ops._build import expression_list as _expression_list
        from batchviz.ops.linalg import _ACTIVATED, _AFFINE, _MATMUL, AffineArguments
        from batchviz.ops.linalg import ACTIVATIONS as _ACTIVATIONS
        from batchviz.ops.structure import _CONCAT
        from batchviz.ops.losses import _PNLS
        from batchviz.ops.api import cmult as _bv_cmult
        _no_prefix = AffineArguments.signature_prefix  # (which returns ())
        from batchviz.ops._build import build as _general_build


cdef object build(op, args, attrs=None):
    op_names()
    return _general_build(op, args, attrs)


def as_nodes(xs):
    """Twin of :func:`batchviz.ops._build.as_nodes`."""
    cdef NodeLists g
    cdef list ids
    graph = None
    for x in xs:
        if isinstance(x, ExpressionBase):
            graph = (<ExpressionBase>x).graph
            break
    if graph is None:
        from batchviz.graph import current_graph
        graph = current_graph()
    if graph.finished:
        graph.check_alive()
    g = <NodeLists?>graph
    param_node = g.param_node
    ids = []
    for x in xs:
        if isinstance(x, ExpressionBase):
            if (<ExpressionBase>x).graph is not g:
                mismatch(x, g)
            ids.append((<ExpressionBase>x).node)
        else:
            node = param_node.get(id(x))
            if node is None:
                from batchviz.ops._build import _parameter_node
                node = _parameter_node(g, x)
            ids.append(node)
    return g, tuple(ids)


cdef mismatch(x, graph):
    """The errors of :func:`batchviz.ops._build.as_nodes` for an expression of another
    graph."""
    from batchviz.errors import GraphMismatchError
    from batchviz.graph import RemovedNodes
    other = (<ExpressionBase>x).graph
    if isinstance(other, RemovedNodes):
        other.check_alive()  # (its own error: the node was reverted)
    raise GraphMismatchError(
        f"cannot combine node {(<ExpressionBase>x).node} of graph #{other.number} with "
        f"expressions of graph #{graph.number}; all arguments of an op must come from one graph"
    )


def build_memoized(op, x, attrs):
    """Twin of :func:`batchviz.ops._build.build_memoized`."""
    return memoized(op, x, attrs)


cdef object memoized(op, x, attrs):
    cdef NodeLists g = live_graph(x)
    cdef Py_ssize_t node
    if g is not None:
        node = (<ExpressionBase>x).node
        return add_memoized(g, op, (node,), attrs, g.depths[node] + 1)
    return build(op, (x,), attrs)


def build_over_nodes(op, xs):
    """Twin of :func:`batchviz.ops._build.build_over_nodes`."""
    return over_nodes(op, xs)


cdef object over_nodes(op, xs):
    cdef NodeLists g
    cdef list depths, ids
    cdef Py_ssize_t n
    if xs and isinstance(xs[0], ExpressionBase):
        graph = (<ExpressionBase>xs[0]).graph
        if isinstance(graph, NodeLists):
            g = <NodeLists>graph
            depths, ids, depth = g.depths, [], 0
            for x in xs:
                if not isinstance(x, ExpressionBase) or (<ExpressionBase>x).graph is not g:
                    break
                n = (<ExpressionBase>x).node
                ids.append(n)
                if depths[n] > depth:
                    depth = depths[n]
            else:
                if not g.finished:
                    return add_memoized(g, op, tuple(ids), None, depth + 1)
    op_names()
    return build(op, _expression_list(xs, op.name))


def build_over_parameters(op, terms):
    """Twin of :func:`batchviz.ops._build.build_over_parameters`."""
    return over_parameters(op, terms)


cdef object over_parameters(op, terms):
    cdef NodeLists g = live_graph(terms[2])
    cdef dict param_node
    cdef list depths, ids
    cdef Py_ssize_t n
    if g is not None:
        param_node = g.param_node
        b, W = param_node.get(id(terms[0])), param_node.get(id(terms[1]))
        if b is not None and W is not None:
            n = (<ExpressionBase>terms[2]).node
            if len(terms) == 3:
                return add_memoized(g, op, (b, W, n), None, g.depths[n] + 1)
            depths = g.depths
            ids, depth = [b, W, n], depths[n]
            for i in range(3, len(terms) - 1, 2):
                weight, vector = terms[i], terms[i + 1]
                w = param_node.get(id(weight))
                if w is None or not isinstance(vector, ExpressionBase) or \
                        (<ExpressionBase>vector).graph is not g:
                    break
                n = (<ExpressionBase>vector).node
                ids += (w, n)
                if depths[n] > depth:
                    depth = depths[n]
            else:
                return add_memoized(g, op, tuple(ids), None, depth + 1)
    return build(op, terms)


def unary_elementwise(op, doc):
    """Twin of :func:`batchviz.ops._build.unary_elementwise`."""
    sig = op.fixed_signature

    def construct(x):
        cdef NodeLists g
        cdef Py_ssize_t n
        if isinstance(x, ExpressionBase):
            graph = (<ExpressionBase>x).graph
            if graph.finished:
                graph.check_alive()
            g = <NodeLists?>graph
            n = (<ExpressionBase>x).node
            return push(g, op, (n,), None, g.shapes[n], sig, g.depths[n] + 1)
        return build(op, (x,))

    return _named(construct, op, doc, "x")


def binary_elementwise(op, doc):
    """Twin of :func:`batchviz.ops._build.binary_elementwise`."""
    sig = op.fixed_signature

    def construct(x, y):
        cdef NodeLists g
        cdef Py_ssize_t a, b
        cdef list shapes, depths
        if isinstance(x, ExpressionBase) and isinstance(y, ExpressionBase) and \
                (<ExpressionBase>x).graph is (<ExpressionBase>y).graph:
            graph = (<ExpressionBase>x).graph
            if graph.finished:
                graph.check_alive()
            g = <NodeLists?>graph
            a, b = (<ExpressionBase>x).node, (<ExpressionBase>y).node
            shapes = g.shapes
            shape = shapes[a]
            if shapes[b] != shape:
                op.infer_shape([shape, shapes[b]], None)  # raises the ShapeError
            depths = g.depths
            da, db = depths[a], depths[b]
            return push(g, op, (a, b), None, shape, sig, (da if da > db else db) + 1)
        return build(op, (x, y))

    return _named(construct, op, doc, "x, y")


cdef object _named(construct, op, str doc, str args):
    construct.__name__ = construct.__qualname__ = op.name
    construct.__doc__ = f"``{op.name}({args})``: {doc}"
    construct.__module__ = "batchviz.ops._build"
    return construct


# --- batchviz/ops/linalg.py --------------------------------------------------------------

def AffineArguments_memo_key(self, NodeLists graph, args, attrs):
    """Twin of :meth:`batchviz.ops.linalg.AffineArguments.memo_key`."""
    return affine_memo_key(self, graph, args, attrs)


cdef object affine_memo_key(op, NodeLists graph, args, attrs):
    cdef list shapes = graph.shapes
    op_names()
    prefix = () if type(op).signature_prefix is _no_prefix else op.signature_prefix(attrs)
    b = args[0]
    bias = b if b in graph.param_of_node else shapes[b]
    if len(args) == 3:
        return (op, prefix, bias, args[1], shapes[args[2]])
    if len(args) == 5:
        return (op, prefix, bias, args[1], args[3], shapes[args[2]], shapes[args[4]])
    return (op, prefix, bias, args[1::2], tuple([shapes[a] for a in args[2::2]]))


def activated_affine(activation, terms):
    """Twin of :func:`batchviz.ops.linalg.activated_affine`."""
    return activated(activation, terms)


cdef object activated(activation, terms):
    op_names()
    op = _ACTIVATED.get(activation)
    if op is None:
        raise ValueError(f"activated_affine: activation must be one of {_ACTIVATIONS}, got "
                         f"{activation!r}")
    if type(terms) is list and len(terms) % 2 and len(terms) > 2:
        return over_parameters(op, terms)
    op_names()
    return build(op, _expression_list(terms, "activated_affine"))


def MatMul_memo_key(self, NodeLists graph, args, attrs):
    """Twin of :meth:`batchviz.ops.linalg.MatMul.memo_key`."""
    return matmul_memo_key(self, graph, args)


cdef tuple matmul_memo_key(op, NodeLists graph, args):
    a, x = args
    shapes = graph.shapes
    return (op, a if a in graph.param_of_node else shapes[a], shapes[x])


def matmul(a, x):
    """Twin of :func:`batchviz.ops.linalg.matmul`."""
    return matmul_c(a, x)


cdef object matmul_c(a, x):
    cdef NodeLists g = live_graph(x)
    cdef Py_ssize_t n
    op_names()
    if g is not None:
        W = g.param_node.get(id(a))
        if W is not None:
            n = (<ExpressionBase>x).node
            return add_memoized(g, _MATMUL, (W, n), None, g.depths[n] + 1)
    return build(_MATMUL, (a, x))


def affine_transform(terms):
    """Twin of :func:`batchviz.ops.linalg.affine_transform`."""
    return affine_transform_c(terms)


cdef object affine_transform_c(terms):
    op_names()
    if type(terms) is list and len(terms) % 2 and len(terms) > 2:  # usually parameters
        return over_parameters(_AFFINE, terms)                       # and vectors
    op_names()
    return build(_AFFINE, _expression_list(terms, "affine_transform"))


# --- batchviz/ops/structure.py and losses.py ------------------------------------------------

def Concatenate_memo_key(self, NodeLists graph, args, attrs):
    """Twin of :meth:`batchviz.ops.structure.Concatenate.memo_key`."""
    return concatenate_memo_key(self, graph, args)


cdef tuple concatenate_memo_key(op, NodeLists graph, args):
    cdef list shapes = graph.shapes
    return (op,) + tuple([shapes[a] for a in args])


def concatenate(xs):
    """Twin of :func:`batchviz.ops.structure.concatenate`."""
    return concatenate_nodes(xs)


cdef object concatenate_nodes(xs):
    op_names()
    if type(xs) is list:
        return over_nodes(_CONCAT, xs)
    op_names()
    return build(_CONCAT, _expression_list(xs, "concatenate"))


def PickNegLogSoftmax_memo_key(self, NodeLists graph, args, attrs):
    """Twin of :meth:`batchviz.ops.losses.PickNegLogSoftmax.memo_key`."""
    return (self, graph.shapes[args[0]])  # the class index is checked by the constructor


def pickneglogsoftmax(x, index):
    """Twin of :func:`batchviz.ops.losses.pickneglogsoftmax`."""
    return pickneglogsoftmax_c(x, index)


cdef object pickneglogsoftmax_c(x, index):
    op_names()
    if type(index) is not int:
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"pickneglogsoftmax: index must be an int, got {type(index).__name__}")
        index = int(index)
    shape = getattr(x, "shape", None)  # (non-vectors and non-expressions: build says why)
    if shape is not None and len(shape) == 1 and not 0 <= index < shape[0]:
        raise IndexError(f"pickneglogsoftmax: class {index} is out of range for {shape[0]} scores")
    return memoized(_PNLS, x, index)  # one loss per word: usually a memo lookup


# --- batchviz/ops/leaves.py --------------------------------------------------------------

cdef object _LOOKUP = None   # what ops.leaves and the graph module define, imported on first use
cdef type _LookupBase
cdef object _graph_module


cdef inline leaf_names():
    global _LOOKUP, _LookupBase, _graph_module
    if _LOOKUP is None:
        import batchviz.graph as _graph_module
        from batchviz.parameters import LookupBase as _LookupBase
        from batchviz.ops.leaves import LOOKUP as lookup_op
        _LOOKUP = lookup_op


def Lookup_memo_key(self, graph, args, attrs):
    """Twin of :meth:`batchviz.ops.leaves.Lookup.memo_key`."""
    return (self, args[0])


def lookup(table, index):
    """Twin of :func:`batchviz.ops.leaves.lookup`."""
    return lookup_c(table, index)


cdef object lookup_c(table, index):
    cdef NodeLists graph
    leaf_names()
    if type(index) is not int or not isinstance(table, _LookupBase) or \
            not 0 <= index < table.shape[0]:   # (the readable version converts or raises)
        from batchviz.twins import READABLE
        return READABLE["batchviz.ops.leaves.lookup"](table, index)
    open_graph = _graph_module._open
    if not isinstance(open_graph, NodeLists) or (<NodeLists>open_graph).finished:
        open_graph = _graph_module.current_graph()   # (raises, or a graph of another kind)
        if not isinstance(open_graph, NodeLists):
            from batchviz.twins import READABLE
            return READABLE["batchviz.ops.leaves.lookup"](table, index)
    graph = <NodeLists>open_graph
    node = graph.param_node.get(id(table))
    if node is None:
        node = graph.parameter_node(table)
    return add_memoized(graph, _LOOKUP, (node,), index, 1)  # (a parameter's depth is 0)


# --- batchviz/dynet/expression.py and arith.py --------------------------------------------

cdef type Expression = None      # what the DyNet layer's modules define, imported on first use
cdef type Affine
cdef object BvExpression, RemovedNodes, SESSION, dynet_matmul, is_number, bv, as_expression
cdef object broadcast_elementwise


cdef inline dynet_names():
    global Expression, Affine, BvExpression, RemovedNodes, SESSION, dynet_matmul, is_number, bv
    global as_expression, broadcast_elementwise
    if Expression is None:
        from batchviz.dynet import expression as module
        Affine, BvExpression, SESSION = module.Affine, module.BvExpression, module._SESSION
        dynet_matmul, is_number, bv = module.matmul, module.is_number, module.bv
        as_expression, broadcast_elementwise = module.as_expression, module.broadcast_elementwise
        RemovedNodes = module.RemovedNodes
        Expression = module.Expression


cdef ExpressionCore new_expression(x, bd):
    """``Expression(x, bd)``."""
    cdef ExpressionCore e = <ExpressionCore>twins_new_instance(Expression)
    e._x = x
    e.bd = bd
    if SESSION.immediate and type(x) is BvExpression:  # renew_cg(immediate_compute=True)
        e.npvalue()
    return e


cdef AffineCore new_affine(list terms, bd):
    """``Affine(terms, bd)``."""
    cdef AffineCore e = <AffineCore>twins_new_instance(Affine)
    e.terms, e.bd = terms, bd
    return e


cdef class ExpressionCore:
    """Twin of :class:`batchviz.dynet.expression.ExpressionCore`."""

    cdef object _x
    cdef public Py_ssize_t bd

    def __init__(self, x, bd=1):
        dynet_names()
        self._x = x
        self.bd = bd
        if SESSION.immediate and type(x) is BvExpression:  # renew_cg(immediate_compute=True)
            self.npvalue()

    @property
    def x(self):
        return self._x

    @x.setter
    def x(self, value):
        self._x = value

    def __add__(self, other):
        dynet_names()
        if type(other) is Affine and (<AffineCore>other)._built is None and \
                type(self) is not Affine:
            extended = (<AffineCore>other).plus_c(self)
            if extended is not None:
                return extended
        if isinstance(other, Expression) or not is_number(other):
            return add(self, other)
        return new_expression(bv.shift(self.x, float(other)), self.bd)

    def __mul__(self, other):
        dynet_names()
        if type(other) is Expression and self.bd == 1:  # W * x: a pending product at once
            left, right, bd = self.x, (<ExpressionCore>other)._x, (<ExpressionCore>other).bd
            ls, rs = left.shape, right.shape
            if len(ls) == 2 and rs and ls[1] == rs[0] and len(rs) == (1 if bd == 1 else 2):
                return new_affine([None, left, right], bd)
        if isinstance(other, Expression) or not is_number(other):
            return dynet_matmul(self, other)
        return new_expression(bv.scale(self.x, float(other)), self.bd)


cdef class AffineCore(ExpressionCore):
    """Twin of :class:`batchviz.dynet.expression.AffineCore`."""

    cdef public object terms, _built, _activated

    def __init__(self, terms: list, bd: int):
        dynet_names()
        self.terms, self.bd, self._built, self._activated = terms, bd, None, None

    @property
    def x(self):
        node = self._built
        if node is None or type(node.graph) is RemovedNodes:  # (built after a checkpoint
            node = self._built = self._build()                # and reverted: built again)
        return node

    def _build(self):
        cdef list terms = self.terms
        if terms[0] is None:
            if len(terms) == 3:
                return matmul_c(terms[1], terms[2])
            products = [matmul_c(W, v) for W, v in zip(terms[1::2], terms[2::2])]
            return bv.esum(products)
        if self.bd > 1 and len(terms[0].shape) == 1:  # a bias added to every instance
            return bv.affine_batch(terms)
        return affine_transform_c(terms)

    def plus(self, b):
        return self.plus_c(b)

    cdef object plus_c(self, b):
        cdef list terms = self.terms
        cdef AffineCore other
        bd = self.bd
        if type(b) is Affine and (<AffineCore>b)._built is None and (<AffineCore>b).bd == bd:
            other = <AffineCore>b
            if terms[0] is not None and other.terms[0] is None:
                return new_affine(terms + other.terms[1:], bd)
            if terms[0] is None and other.terms[0] is not None:
                return new_affine(other.terms + terms[1:], bd)
            return None
        if terms[0] is not None or not isinstance(b, Expression):
            return None
        b_bd = (<ExpressionCore>b).bd
        if b_bd != 1 and b_bd != bd or type(b) is Affine and (<AffineCore>b)._built is None:
            return None
        bias = b.x
        rows, shape = terms[1].shape[0], bias.shape
        if shape == (rows,) or (b_bd == bd > 1 and shape == (rows, bd)):
            return new_affine([bias] + terms[1:], bd)
        return None

    def activated(self, activation):
        return self.activated_c(activation)

    cdef object activated_c(self, activation):
        terms = self.terms
        if self._built is not None or terms[0] is None or (
                self.bd > 1 and len(terms[0].shape) == 1):
            return None
        node = new_expression(activated(activation, terms), self.bd)
        if self._activated is None:
            self._activated = []
        self._activated.append((activation, node))
        return node


cpdef add(a, b):
    """Twin of :func:`batchviz.dynet.expression.add`."""
    dynet_names()
    if type(b) is Affine and (<AffineCore>b)._built is None and type(a) is not Affine:
        extended = (<AffineCore>b).plus_c(a)
    elif type(a) is Affine and (<AffineCore>a)._built is None:
        extended = (<AffineCore>a).plus_c(b)
    else:
        extended = None
    if extended is not None:
        return extended
    return elementwise(bv.add, a, b, "x + y")


cpdef elementwise(op, a, b, who, right_only=False):
    """Twin of :func:`batchviz.dynet.expression.elementwise`."""
    dynet_names()
    if type(a) is not Expression or type(b) is not Expression:  # (two nodes: no checks)
        a, b = as_expression(a, who), as_expression(b, who)
    ax, bx = a.x, b.x
    if a.bd == b.bd and ax.shape == bx.shape:  # the usual case: nothing to broadcast
        return new_expression(op(ax, bx), a.bd)
    return broadcast_elementwise(op, a, b, who, right_only)


def _unary(op, name, doc):
    """Twin of :func:`batchviz.dynet.arith._unary`."""
    def construct(x):
        dynet_names()
        try:
            return new_expression(op(x.x), x.bd)
        except AttributeError:
            raise TypeError(f"{name}: expected a dynet Expression, got {type(x).__name__}") from None

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = doc
    construct.__module__ = "batchviz.dynet.arith"
    return construct


def _activation(op, name, doc):
    """Twin of :func:`batchviz.dynet.arith._activation`."""
    unary = _unary(op, name, doc)

    def construct(x):
        if type(x) is Affine:
            fused = (<AffineCore>x).activated_c(name)
            if fused is not None:
                return fused
        return unary(x)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = doc
    construct.__module__ = "batchviz.dynet.arith"
    return construct


# --- batchviz/dynet/shaping.py and losses.py ----------------------------------------------

def dynet_concatenate(xs, d=0):
    """Twin of :func:`batchviz.dynet.shaping.concatenate`."""
    if d == 0 and type(xs) is list:  # a list of nodes of one minibatch size (a BiLSTM's
        nodes = rows_of(xs)           # [f; b] at every word): no broadcasting to check
        if nodes is not None:
            return new_expression(concatenate_nodes(nodes), (<ExpressionCore>xs[0]).bd)
    from batchviz.dynet.shaping import concatenate_aligned
    return concatenate_aligned(xs, d)


def _rows_of(xs):
    """Twin of :func:`batchviz.dynet.shaping._rows_of`."""
    return rows_of(xs)


cdef object rows_of(xs):
    cdef list nodes
    dynet_names()
    if not xs or type(xs[0]) is not Expression:
        return None
    bd, nodes, tail = (<ExpressionCore>xs[0]).bd, [], None
    for x in xs:
        if type(x) is not Expression or (<ExpressionCore>x).bd != bd:
            return None
        node = (<ExpressionCore>x)._x
        shape = node.shape
        if len(shape) <= (bd > 1):
            return None
        if tail is None:
            tail = shape[1:]
        elif shape[1:] != tail:
            return None
        nodes.append(node)
    return nodes


def dynet_pickneglogsoftmax(x, v):
    """Twin of :func:`batchviz.dynet.losses.pickneglogsoftmax`."""
    dynet_names()
    if type(v) is not int and not isinstance(v, numbers.Integral):
        from batchviz.dynet.losses import pickneglogsoftmax_batch
        return pickneglogsoftmax_batch(x, v)
    if not isinstance(x, Expression):
        x = as_expression(x, "pickneglogsoftmax")   # (raises)
    if x.bd != 1:
        raise ValueError(f"pickneglogsoftmax was called with a single class ({v}) for a "
                         f"minibatch of {x.bd}; pass a list of {x.bd} classes")
    return new_expression(pickneglogsoftmax_c(scores(x, "pickneglogsoftmax"), v), 1)


def _scores(x, who):
    """Twin of :func:`batchviz.dynet.losses._scores`."""
    return scores(x, who)


cdef object scores(x, who):
    node = x.x
    if len(node.shape) == (1 if x.bd == 1 else 2):   # the usual case: a vector per instance
        return node
    from batchviz.dynet.losses import _scores_reshaped
    return _scores_reshaped(x, who)


def dynet_matmul_twin(a, b):
    """Twin of :func:`batchviz.dynet.expression.matmul`."""
    dynet_names()
    a, b = as_expression(a, "x * y"), as_expression(b, "x * y")
    da, db = dims_of(a), dims_of(b)
    cols = da[1] if len(da) == 2 else 1
    if len(da) > 2 or len(db) > 2 or cols != db[0] or (a.bd > 1 and b.bd not in (1, a.bd)):
        from batchviz.twins import READABLE   # (its errors: the readable version raises them)
        return READABLE["batchviz.dynet.expression.matmul"](a, b)
    if a.bd > 1:
        from batchviz.dynet.dims import products_per_instance
        return new_expression(products_per_instance(a, b, da, db, a.bd), a.bd)
    left, right, bd = a.x, b.x, b.bd
    if len(left.shape) == 2 and len(db) == 1 and right.shape:   # W x, or W X of a minibatch
        return new_affine([None, left, right], bd)
    from batchviz.dynet.expression import matmul_other
    return matmul_other(a, b, da, db)


cdef type LookupParameters = None   # what dynet.parameters defines, imported on first use
cdef type LookupExpression


cdef inline lookup_names():
    global LookupParameters, LookupExpression
    if LookupParameters is None:
        from batchviz.dynet import parameters as module
        LookupExpression = module.LookupExpression
        LookupParameters = module.LookupParameters


def LookupParameters___getitem__(self, i):
    """Twin of :meth:`batchviz.dynet.parameters.LookupParameters.__getitem__`."""
    return dynet_lookup_c(self, i, True)


def dynet_lookup(p, index=0, update=True):
    """Twin of :func:`batchviz.dynet.parameters.lookup`."""
    return dynet_lookup_c(p, index, update)


cdef object dynet_lookup_c(p, index, update):
    cdef ExpressionCore core
    lookup_names()
    dynet_names()
    if not isinstance(p, LookupParameters):
        raise TypeError(f"lookup needs LookupParameters, got {type(p).__name__}")
    node = lookup_c(p._p, index)
    row = node if len(p.row_dims) == 1 else p._rows(node)
    e = twins_new_instance(LookupExpression)   # LookupExpression(x, 1, p, node)
    core = <ExpressionCore>e
    core._x = row if update else bv.nobackprop(row)
    core.bd = 1
    if SESSION.immediate and type(core._x) is BvExpression:  # renew_cg(immediate_compute=True)
        e.npvalue()
    e.table, e.looked_up = p, node
    return e


def _as_input(x, who):
    """Twin of :func:`batchviz.dynet.rnn._as_input`."""
    dynet_names()
    if isinstance(x, Expression):   # (else as_expression says why it is not one)
        dims = dims_of(x)
        if len(dims) != 2 or dims[1] != 1:   # usually a vector: the input as it is
            return x
    from batchviz.dynet.rnn import _as_input_column
    return _as_input_column(x, who)


cdef tuple dims_of(e):
    """:func:`batchviz.dynet.dims.dims_of`."""
    shape = e.x.shape
    if e.bd > 1:
        shape = shape[:-1]
    return shape if shape else (1,)


def cmult(x, y):
    """Twin of :func:`batchviz.dynet.arith.cmult`."""
    op_names()
    return elementwise(_bv_cmult, x, y, "cmult")


def _common(xs, who):
    """Twin of :func:`batchviz.dynet.arith._common`."""
    cdef list nodes
    dynet_names()
    xs = [x if isinstance(x, Expression) else as_expression(x, who) for x in xs]
    if not xs:
        raise ValueError(f"{who}: needs at least one expression")
    first = xs[0]
    shape, bd = first.x.shape, first.bd
    nodes = []
    for x in xs:
        node = x.x
        if x.bd != bd or node.shape != shape:
            break
        nodes.append(node)
    else:
        return nodes, bd
    from batchviz.dynet.arith import _broadcast_common
    return _broadcast_common(xs, who)


# --- the twin of each marked definition: its module and qualified name ---------------------

TWINS = {
    "batchviz.graph.ExpressionBase": ExpressionBase,
    "batchviz.graph.NodeLists": NodeLists,
    "batchviz.graph.LazyGraph.push": LazyGraph_push,
    "batchviz.graph.LazyGraph.add_memoized": LazyGraph_add_memoized,
    "batchviz.ops._build.as_nodes": as_nodes,
    "batchviz.ops._build.build_memoized": build_memoized,
    "batchviz.ops._build.build_over_nodes": build_over_nodes,
    "batchviz.ops._build.build_over_parameters": build_over_parameters,
    "batchviz.ops._build.unary_elementwise": unary_elementwise,
    "batchviz.ops._build.binary_elementwise": binary_elementwise,
    "batchviz.ops.linalg.AffineArguments.memo_key": AffineArguments_memo_key,
    "batchviz.ops.linalg.activated_affine": activated_affine,
    "batchviz.ops.linalg.MatMul.memo_key": MatMul_memo_key,
    "batchviz.ops.linalg.matmul": matmul,
    "batchviz.ops.linalg.affine_transform": affine_transform,
    "batchviz.ops.structure.Concatenate.memo_key": Concatenate_memo_key,
    "batchviz.ops.structure.concatenate": concatenate,
    "batchviz.ops.losses.PickNegLogSoftmax.memo_key": PickNegLogSoftmax_memo_key,
    "batchviz.ops.losses.pickneglogsoftmax": pickneglogsoftmax,
    "batchviz.ops.leaves.Lookup.memo_key": Lookup_memo_key,
    "batchviz.ops.leaves.lookup": lookup,
    "batchviz.dynet.parameters.LookupParameters.__getitem__": LookupParameters___getitem__,
    "batchviz.dynet.parameters.lookup": dynet_lookup,
    "batchviz.dynet.expression.ExpressionCore": ExpressionCore,
    "batchviz.dynet.expression.AffineCore": AffineCore,
    "batchviz.dynet.expression.add": add,
    "batchviz.dynet.expression.elementwise": elementwise,
    "batchviz.dynet.expression.matmul": dynet_matmul_twin,
    "batchviz.dynet.arith.cmult": cmult,
    "batchviz.dynet.arith._common": _common,
    "batchviz.dynet.arith._unary": _unary,
    "batchviz.dynet.arith._activation": _activation,
    "batchviz.dynet.shaping.concatenate": dynet_concatenate,
    "batchviz.dynet.shaping._rows_of": _rows_of,
    "batchviz.dynet.rnn._as_input": _as_input,
    "batchviz.dynet.losses.pickneglogsoftmax": dynet_pickneglogsoftmax,
    "batchviz.dynet.losses._scores": _scores,
}
