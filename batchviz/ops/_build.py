"""Small helpers that op constructors share: argument coercion and the fast paths.

Graph construction is the hottest Python code in batchviz (it runs for every node of every
minibatch), so the common cases - one or two expressions of the same graph - skip the
general coercion in :func:`batchviz.expression.as_nodes`.
"""
from __future__ import annotations

from ..expression import Expression, Operators, as_nodes


def expression_list(xs, what: str, instead: str = "") -> list:
    """``xs`` (a list, tuple or any iterable of expressions) as a non-empty list. One
    expression on its own is refused: it is iterable too (``x[0], x[1], ...``), and
    ``bv.esum(x)`` would quietly add up its elements (``instead``: the op that does that
    on purpose, named in the error)."""
    if isinstance(xs, Operators):
        hint = f" ({instead} works on the elements of one expression)" if instead else ""
        raise TypeError(f"{what}: needs a list of expressions, got a single "
                        f"{type(xs).__name__}; put it in a list{hint}")
    xs = list(xs)
    if not xs:
        raise ValueError(f"{what}: needs at least one expression")
    return xs


def build(op, args, attrs=None):
    """General path: coerce ``args`` (expressions/parameters) and add an ``op`` node."""
    graph, ids = as_nodes(args)
    return graph.add(op, ids, attrs)


def build_memoized(op, x, attrs):
    """:func:`build` of a one-argument op that defines ``Op.memo_key``, its ``attrs``
    already checked by the constructor. For an expression of a live graph (the common
    case) that is a memo lookup and a push (:meth:`Graph.add_memoized`), not the general
    coercion, shape inference and signature: a parser adds thousands of picks and shifts
    per minibatch, one per decision."""
    if type(x) is Expression and not x.graph.finished:
        g, node = x.graph, x.node
        return g.add_memoized(op, (node,), attrs, g.depths[node] + 1)
    return build(op, (x,), attrs)


def build_over_parameters(op, b, W, x):
    """:func:`build` of ``op`` over ``(b, W, x)``: an output layer ``b + W x``, built for
    every word or tree node of a minibatch. When ``b`` and ``W`` are model parameters that
    ``x``'s graph already holds (after their first use) and the graph has built such a node
    before, that is a memo lookup and a push (:meth:`Graph.add_memoized`), a third of the
    general path's cost; otherwise the general path, which checks everything."""
    if type(x) is Expression and not x.graph.finished:
        g = x.graph
        node_of = g.param_node.get
        bn, Wn = node_of(id(b)), node_of(id(W))
        if bn is not None and Wn is not None:
            n = x.node
            return g.add_memoized(op, (bn, Wn, n), None, g.depths[n] + 1)  # (parameters: depth 0)
    return build(op, (b, W, x))


def _named(construct, op, doc: str, args: str):
    construct.__name__ = construct.__qualname__ = op.name
    construct.__doc__ = f"``{op.name}({args})``: {doc}"
    return construct


def unary_elementwise(op, doc: str):
    """Constructor for a fixed-signature element-wise op of one argument."""
    sig = op.fixed_signature

    def construct(x):
        if type(x) is Expression:
            g = x.graph
            if g.finished:
                g.check_alive()
            n = x.node
            return g.push(op, (n,), None, g.shapes[n], sig, g.depths[n] + 1)
        return build(op, (x,))

    return _named(construct, op, doc, "x")


def binary_elementwise(op, doc: str):
    """Constructor for a fixed-signature element-wise op of two same-shaped arguments."""
    sig = op.fixed_signature

    def construct(x, y):
        if type(x) is Expression and type(y) is Expression and x.graph is y.graph:
            g = x.graph
            if g.finished:
                g.check_alive()
            a, b = x.node, y.node
            shapes = g.shapes
            shape = shapes[a]
            if shapes[b] != shape:
                op.infer_shape([shape, shapes[b]], None)  # raises the ShapeError
            depths = g.depths
            da, db = depths[a], depths[b]
            return g.push(op, (a, b), None, shape, sig, (da if da > db else db) + 1)
        return build(op, (x, y))

    return _named(construct, op, doc, "x, y")
