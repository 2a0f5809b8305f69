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
    cdef Py_ssize_t node = len(self.ops)
    self.ops.append(op)
    self.args.append(args)
    self.attrs.append(attrs)
    self.shapes.append(shape)
    self.sigs.append(sig)
    self.depths.append(depth)
    return self.expression_type(self, node)


cdef inline object push(NodeLists g, op, args, attrs, shape, sig, depth):
    """``g.push(...)``: the twin's own steps, unless the graph has replaced its push (it
    records sources) or its expression type (it has a checkpoint) on the instance."""
    if g.sources is not None or g._made is not None:
        return g.push(op, args, attrs, shape, sig, depth)
    return LazyGraph_push(g, op, args, attrs, shape, sig, depth)


def LazyGraph_add_memoized(NodeLists self, op, args, attrs, depth):
    """Twin of :meth:`batchviz.graph.LazyGraph.add_memoized`."""
    return add_memoized(self, op, args, attrs, depth)


cdef object add_memoized(NodeLists g, op, args, attrs, depth):
    known = g.memo.get(op.memo_key(g, args, attrs))
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

cdef object _general_build = None, _expression_list = None


cdef inline general_path():
    global _general_build, _expression_list
    if _general_build is None:
        from batchviz.ops._build import build as _general_build, expression_list as _expression_list


cdef object build(op, args, attrs=None):
    general_path()
    return _general_build(op, args, attrs)


def build_memoized(op, x, attrs):
    """Twin of :func:`batchviz.ops._build.build_memoized`."""
    cdef NodeLists g = live_graph(x)
    cdef Py_ssize_t node
    if g is not None:
        node = (<ExpressionBase>x).node
        return add_memoized(g, op, (node,), attrs, g.depths[node] + 1)
    return build(op, (x,), attrs)


def build_over_nodes(op, xs):
    """Twin of :func:`batchviz.ops._build.build_over_nodes`."""
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
    general_path()
    return build(op, _expression_list(xs, op.name))


def build_over_parameters(op, terms):
    """Twin of :func:`batchviz.ops._build.build_over_parameters`."""
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
    cdef list shapes = graph.shapes
    b = args[0]
    bias = b if b in graph.param_of_node else shapes[b]
    if len(args) == 3:
        return (self, self.signature_prefix(attrs), bias, (args[1],), (shapes[args[2]],))
    if len(args) == 5:
        return (self, self.signature_prefix(attrs), bias, (args[1], args[3]),
                (shapes[args[2]], shapes[args[4]]))
    return (self, self.signature_prefix(attrs), bias, args[1::2],
            tuple([shapes[a] for a in args[2::2]]))


cdef object _ACTIVATED = None, _ACTIVATIONS = None


def activated_affine(activation, terms):
    """Twin of :func:`batchviz.ops.linalg.activated_affine`."""
    global _ACTIVATED, _ACTIVATIONS
    if _ACTIVATED is None:
        from batchviz.ops.linalg import _ACTIVATED, ACTIVATIONS as _ACTIVATIONS
    op = _ACTIVATED.get(activation)
    if op is None:
        raise ValueError(f"activated_affine: activation must be one of {_ACTIVATIONS}, got "
                         f"{activation!r}")
    if type(terms) is list and len(terms) % 2 and len(terms) > 2:
        return build_over_parameters(op, terms)
    general_path()
    return build(op, _expression_list(terms, "activated_affine"))


# --- batchviz/dynet/expression.py and arith.py --------------------------------------------

cdef object Expression = None    # what the DyNet layer's modules define, imported on first use
cdef object Affine, BvExpression, RemovedNodes, SESSION, matmul, is_number, bv, as_expression
cdef object broadcast_elementwise


cdef inline dynet_names():
    global Expression, Affine, BvExpression, RemovedNodes, SESSION, matmul, is_number, bv
    global as_expression, broadcast_elementwise
    if Expression is None:
        from batchviz.dynet import expression as module
        Affine, BvExpression, SESSION = module.Affine, module.BvExpression, module._SESSION
        matmul, is_number, bv = module.matmul, module.is_number, module.bv
        as_expression, broadcast_elementwise = module.as_expression, module.broadcast_elementwise
        RemovedNodes = module.RemovedNodes
        Expression = module.Expression


cdef ExpressionCore new_expression(x, bd):
    """``Expression(x, bd)``."""
    cdef ExpressionCore e = ExpressionCore.__new__(Expression)
    e._x = x
    e.bd = bd
    if SESSION.immediate and type(x) is BvExpression:  # renew_cg(immediate_compute=True)
        e.npvalue()
    return e


cdef AffineCore new_affine(list terms, bd):
    """``Affine(terms, bd)``."""
    cdef AffineCore e = AffineCore.__new__(Affine)
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
            extended = (<AffineCore>other).plus(self)
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
            return matmul(self, other)
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

    cpdef plus(self, b):
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

    cpdef activated(self, activation):
        terms = self.terms
        if self._built is not None or terms[0] is None or (
                self.bd > 1 and len(terms[0].shape) == 1):
            return None
        node = new_expression(activated_affine(activation, terms), self.bd)
        if self._activated is None:
            self._activated = []
        self._activated.append((activation, node))
        return node


cpdef add(a, b):
    """Twin of :func:`batchviz.dynet.expression.add`."""
    dynet_names()
    if type(b) is Affine and (<AffineCore>b)._built is None and type(a) is not Affine:
        extended = (<AffineCore>b).plus(a)
    elif type(a) is Affine and (<AffineCore>a)._built is None:
        extended = (<AffineCore>a).plus(b)
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
        try:
            return new_expression(op(x.x), x.bd)
        except AttributeError:
            raise TypeError(f"{name}: expected a dynet Expression, got {type(x).__name__}") from None

    dynet_names()
    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = doc
    construct.__module__ = "batchviz.dynet.arith"
    return construct


def _activation(op, name, doc):
    """Twin of :func:`batchviz.dynet.arith._activation`."""
    unary = _unary(op, name, doc)

    def construct(x):
        if type(x) is Affine:
            fused = (<AffineCore>x).activated(name)
            if fused is not None:
                return fused
        return unary(x)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = doc
    construct.__module__ = "batchviz.dynet.arith"
    return construct
