"""Small helpers that op constructors share: argument coercion and the fast paths.

Graph construction is the hottest Python code in batchviz (it runs for every node of every
minibatch), so the common cases - one or two expressions of the same graph - skip the
general coercion in :func:`as_nodes`.

Constructors recognise expressions by :class:`~batchviz.graph.ExpressionBase` (the class
every expression is) and parameters by :class:`~batchviz.parameters.ParameterBase`, and
return what the graph's :meth:`~batchviz.graph.LazyGraph.push` makes: they never need the
operators that :mod:`batchviz.expression` adds, which are built from them.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import GraphMismatchError
from ..graph import ExpressionBase, RemovedNodes, current_graph, live_graph
from ..parameters import ParameterBase


def as_nodes(xs) -> tuple:
    """``(graph, node ids)`` for a sequence of expressions / parameters, all from one graph
    (the open graph when there are parameters only).

    This runs for most nodes built, so it avoids anything but dict lookups and list
    appends on the common path."""
    graph = None
    for x in xs:
        if isinstance(x, ExpressionBase):
            graph = x.graph
            break
    if graph is None:
        graph = current_graph()
    if graph.finished:
        graph.check_alive()
    ids = []
    for x in xs:
        if isinstance(x, ExpressionBase):
            e = x  # (an expression: its fields are read directly when compiled)
            if e.graph is not graph:
                if isinstance(e.graph, RemovedNodes):
                    e.graph.check_alive()  # (its own error: the node was reverted)
                raise GraphMismatchError(
                    f"cannot combine node {e.node} of graph #{e.graph.number} with expressions of "
                    f"graph #{graph.number}; all arguments of an op must come from one graph"
                )
            ids.append(e.node)
        else:
            node = parameter_node_of(graph, x)
            ids.append(_parameter_node(graph, x) if node is None else node)
    return graph, tuple(ids)


def _parameter_node(graph, x) -> int:
    if isinstance(x, ParameterBase):
        return graph.parameter_node(x)
    raise TypeError(
        f"expected an Expression or a model parameter, got {type(x).__name__}"
        + (" (wrap data with bv.input(...))" if isinstance(x, (np.ndarray, list, numbers.Number)) else "")
    )


def expression_list(xs, what: str, instead: str = "") -> list:
    """``xs`` (a list, tuple or any iterable of expressions) as a non-empty list. One
    expression on its own is refused: it is iterable too (``x[0], x[1], ...``), and
    ``bv.esum(x)`` would quietly add up its elements (``instead``: the op that does that
    on purpose, named in the error)."""
    if isinstance(xs, (ExpressionBase, ParameterBase)):
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
    if isinstance(x, ExpressionBase):
        e = x
        g, node = live_graph(e), e.node  # (raises for a finished graph or reverted node)
        return g.add_memoized(op, (node,), attrs, g.depths[node] + 1)
    return build(op, (x,), attrs)


def build_over_nodes(op, xs: list):
    """:func:`build` of ``op`` over a list of expressions, all of one live graph (a BiLSTM's
    ``[f; b]`` at every word, a Tree-LSTM's ``[h_l; h_r]`` at every tree node): their node
    ids and depth in one loop, then :meth:`Graph.add_known` (a memo lookup and a push
    once the graph has built such a node). Anything else, parameters included, takes the
    general path, which checks everything and reports mistakes at the user's line.
    (``op``'s memo key is :func:`shapes_memo_key`'s.)"""
    if xs and isinstance(xs[0], ExpressionBase):
        g = live_graph(xs[0])  # (raises for a finished graph or reverted node)
        depths, ids, depth = g.depths, [], 0
        for item in xs:
            if not isinstance(item, ExpressionBase):
                break
            x = item  # (an expression: its fields are read directly when compiled)
            if x.graph is not g:
                break
            ids.append(x.node)
            d = depths[x.node]
            if d > depth:
                depth = d
        else:
            args = tuple(ids)
            return g.add_known(op, args, None, depth + 1, shapes_memo_key(op, g, args))
    return build(op, expression_list(xs, op.name))


def shapes_memo_key(op, graph, args: tuple) -> tuple:
    """The ``Op.memo_key`` of an op whose node's shape and signature follow from its
    arguments' shapes alone (a concatenation): the op and those shapes. Two arguments (a
    Tree-LSTM's ``[h_l; h_r]``, a BiLSTM's ``[f; b]``, at every node or word) are indexed
    directly: no ``map``, no unpacking of one into a tuple."""
    shapes = graph.shapes
    if len(args) == 2:
        first, second = args[0], args[1]  # (C integers when compiled: C indexing)
        return (op, shapes[first], shapes[second])
    return (op, *map(shapes.__getitem__, args))


def terms_memo_key(op, prefix: tuple, graph, args: tuple) -> tuple:
    """The ``Op.memo_key`` of an op over affine terms, ``args = [b, W1, x1, W2, x2,
    ...]`` (:class:`~batchviz.ops.linalg.AffineArguments`; ``prefix``: its
    ``signature_prefix``): the bias's and the ``W``s' node ids (a parameter's id is what
    the signature names; any other node's id fixes its shape; a bias that is not a
    parameter is named by its shape, since every input projection of a sequence is another
    one) and the ``x``s' shapes. Built without a Python loop, and for one or two products
    (``b + W x``, every gate of every step) as one flat tuple: no slices, no inner tuples to
    make and compare. (A flat key holds node ids where the general key holds tuples of
    them, so the two never collide.)"""
    b, shapes = args[0], graph.shapes
    bias = b if b in graph.param_of_node else shapes[b]
    if len(args) == 3:  # b + W x, the usual case
        x = args[2]  # (a C index when compiled)
        return (op, prefix, bias, args[1], shapes[x])
    if len(args) == 5:  # a BiLSTM's output layer, b + W_f f + W_b b
        return (op, prefix, bias, args[1], args[3], shapes[args[2]], shapes[args[4]])
    return (op, prefix, bias, args[1::2], tuple(map(shapes.__getitem__, args[2::2])))


def parameter_node_of(graph, x):
    """The node id of ``x`` in ``graph`` if ``x`` is a parameter that has one there, else
    None (anything else is not in the graph's ``param_node``)."""
    try:
        return graph.param_node.get(x)
    except TypeError:  # (unhashable data: not a parameter)
        return None


def build_over_parameters(op, terms):
    """:func:`build` of ``op`` over the list ``terms = [b, W1, x1, W2, x2, ...]``: an
    output layer or an MLP's layer, built for every word, tree node or parser decision of
    a minibatch. When ``b`` and every ``W`` are model parameters that the graph of the
    ``x``s already holds (after their first use) and the graph has built such a node
    before, that is one loop, a memo lookup and a push (:meth:`Graph.add_memoized`): a
    third to a half of the general path's cost. Otherwise the general path, which checks
    everything and reports mistakes at the user's line. (``op`` is an op over affine terms
    whose signature has no prefix: its memo key is :func:`terms_memo_key`'s.)"""
    if not isinstance(terms[2], ExpressionBase):
        return build(op, terms)
    x = terms[2]
    g = live_graph(x)  # (raises for a finished graph or reverted node)
    b, W = parameter_node_of(g, terms[0]), parameter_node_of(g, terms[1])
    if b is not None and W is not None:
        # a node's depth is its deepest argument's plus one (parameters have depth 0)
        depths = g.depths
        if len(terms) == 3:  # b + W x, most layers: no loop
            args = (b, W, x.node)
            return g.add_known(op, args, None, depths[x.node] + 1,
                               terms_memo_key(op, (), g, args))
        ids, depth = [b, W, x.node], depths[x.node]
        for k in range(3, len(terms) - 1, 2):  # (by index: no slices of terms, no zip)
            weight, vector = terms[k], terms[k + 1]
            w = parameter_node_of(g, weight)
            if w is None or not isinstance(vector, ExpressionBase):
                break
            x = vector  # (an expression: its fields are read directly when compiled)
            if x.graph is not g:
                break
            ids.append(w)
            ids.append(x.node)
            d = depths[x.node]
            if d > depth:
                depth = d
        else:
            args = tuple(ids)
            return g.add_known(op, args, None, depth + 1, terms_memo_key(op, (), g, args))
    return build(op, terms)


def _named(construct, op, doc: str, args: str):
    construct.__name__ = construct.__qualname__ = op.name
    construct.__doc__ = f"``{op.name}({args})``: {doc}"
    return construct


def unary_elementwise(op, doc: str):
    """Constructor for a fixed-signature element-wise op of one argument."""
    sig = op.fixed_signature

    def construct(x):
        if isinstance(x, ExpressionBase):
            return unary_node(op, sig, x)
        return build(op, (x,))  # (a parameter: checked and made a node first)

    return _named(construct, op, doc, "x")


def unary_node(op, sig: int, x: ExpressionBase):
    """The node of a one-argument element-wise ``op`` (its signature ``sig``) over the
    expression ``x``: the argument's shape, one deeper."""
    g = live_graph(x)  # (raises: the graph was finished, or the node reverted)
    n = x.node
    return g.push(op, (n,), None, g.shapes[n], sig, g.depths[n] + 1)


def binary_elementwise(op, doc: str):
    """Constructor for a fixed-signature element-wise op of two same-shaped arguments."""
    sig = op.fixed_signature

    def construct(x, y):
        if isinstance(x, ExpressionBase) and isinstance(y, ExpressionBase):
            return binary_node(op, sig, x, y)
        return build(op, (x, y))  # (a parameter: checked and made a node first)

    return _named(construct, op, doc, "x, y")


def binary_node(op, sig: int, x: ExpressionBase, y: ExpressionBase):
    """The node of a two-argument element-wise ``op`` (its signature ``sig``) over the
    expressions ``x`` and ``y`` of one shape: that shape, one deeper than the deeper
    argument."""
    if x.graph is not y.graph:
        return build(op, (x, y))  # (raises: expressions of two graphs)
    g = live_graph(x)  # (raises: the graph was finished, or the node reverted)
    a, b = x.node, y.node
    shapes = g.shapes
    shape = shapes[a]
    if shapes[b] is not shape and shapes[b] != shape:  # (nodes of one shape usually share
        op.infer_shape([shape, shapes[b]], None)       # its tuple) raises the ShapeError
    depths = g.depths
    da, db = depths[a], depths[b]
    return g.push(op, (a, b), None, shape, sig, (da if da > db else db) + 1)
