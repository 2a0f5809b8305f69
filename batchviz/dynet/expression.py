"""DyNet's Expression: a batchviz node, its minibatch size, and DyNet's operators.

An :class:`Expression` holds ``x``, what batchviz ops take (a batchviz
:class:`~batchviz.Expression`, or a model parameter), and ``bd``, DyNet's minibatch size (1:
not batched). The values of a batch of ``bd > 1`` lie along a **last axis** of the batchviz
node: DyNet's ``((3,), 32)`` is a ``(3, 32)`` node, whose columns are the instances (the
"manual batching" layout of :mod:`batchviz.ops.columns`). So ``W * X`` is one matrix
product, element-wise ops need nothing special, and the node is one node: batched nodes
batch with each other under autobatching (the paper's "manual batching with autobatching
on top", §4.1) and ``explain`` counts each once, with its full size. DyNet's scalar
``(1,)`` may be a batchviz node of shape ``()`` or ``(1,)`` (``(bd,)`` or ``(1, bd)``
batched): element-wise ops reconcile the two.

The operators have DyNet's meanings in this namespace only: ``x * y`` is a matrix product
(batchviz's own ``*`` stays element-wise), ``x / y`` and ``x + y`` broadcast as DyNet's do.

DyNet programs write layers as ``b + W * x`` (or ``W * x + b``, or ``b + U * h + V * c``): in
DyNet a product node and a sum node each. batchviz has one node for the whole
``b + W1 x1 + W2 x2 + ...`` (``affine_transform``, whose weights and bias are shared arguments
when they are parameters, App. A), so ``W * x`` here gives an :class:`Affine` expression that is
*pending*: it becomes a node when something uses it, and a ``+`` of a bias or of another pending
product extends it instead. ``b + W * x`` is then one node, built by batchviz's fastest path, and
the runtime batches one signature instead of two. The values are DyNet's (the same sums, up to
the order in which floating-point terms are added).
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import ops as _ops_package  # noqa: F401  (registers every op)
from ..expression import Expression as BvExpression
from ..expression import is_number
from ..graph import RemovedNodes, shape_of
from ..ops import api as bv
from ..ops.api import add as bv_add  # (built at every node: a name here, not ``bv.add``)
from ..ops._build import build_over_parameters
from ..ops.base import REGISTRY
from ..ops.linalg import ACTIVATIONS, matmul as linalg_matmul
from . import graph as _graph
from .dims import (as_matrix, combine_dims, dims_error, dims_of, products_per_instance,
                   selected_rows, to_shape)
from .values import Values

_IMMEDIATE = _graph.immediate  # ([True] after renew_cg(immediate_compute=True))

#: activation -> the op of ``activation(b + W1 x1 + ...)`` (``bv.activated_affine``'s)
_ACTIVATED_AFFINE = {name: REGISTRY[f"affine_{name}"] for name in ACTIVATIONS}


class ExpressionCore:
    """What DyNet programs use on every node: ``x``, ``bd``, ``+`` and ``*`` (``b + W * x``
    is built for every gate of every word). :class:`Expression` adds everything else.
    (Compiled, it and its subclasses are C types: ``W * x`` reaches ``__mul__`` by a slot.)"""

    __slots__ = ("_x", "bd")

    def __init__(self, x, bd: int = 1):
        self._x, self.bd = x, bd
        computed_if_immediate(self)

    @property
    def x(self):
        """What batchviz ops take: a batchviz expression, or a model parameter. (A
        property, not a field: a pending :class:`Affine` builds its node when it is read.)"""
        return self._x

    # --- + and *, with DyNet's meanings --------------------------------------------------
    # (each asks "an expression?" before "a number?": ``b + W * x`` is built for every
    # gate of every word, and is_number's answer for a pending product takes numbers.Real's
    # abstract-class check; every Expression is an ExpressionCore, the cheaper test)
    def __add__(self, other):
        if isinstance(other, ExpressionCore) or not is_number(other):
            return add(self, other)
        return expression_of(bv.shift(self.x, float(other)), self.bd)

    def __mul__(self, other):
        if isinstance(other, ExpressionCore) or not is_number(other):
            return matmul(self, other)
        return expression_of(bv.scale(self.x, float(other)), self.bd)


def computed_if_immediate(e) -> None:
    """Compute the new expression ``e`` now if ``renew_cg(immediate_compute=True)`` said so."""
    if _IMMEDIATE[0] and type(e._x) is BvExpression:
        e.npvalue()


def expression_of(x, bd: int = 1, kind=None) -> "Expression":
    """``Expression(x, bd)`` (or ``kind(x, bd)``, ``kind`` a subclass whose fields besides
    these the caller sets), the expression that every op of this layer returns, made
    without calling the class: a call looks ``__init__`` up through the class's bases and
    parses its arguments, a fifth of the cost of a gate ``dy.logistic(b + W * x)``. (The
    class named, not a variable, is a direct call of its allocator when compiled.)"""
    e = Expression.__new__(Expression) if kind is None else kind.__new__(kind)
    e._x, e.bd = x, bd
    computed_if_immediate(e)
    return e


def node_of(e):
    """``e.x``, the batchviz node (or parameter) of the expression ``e``, read from its
    field ``_x`` where it has one; the expressions that compute their node (a pending
    product, a lookup table, a parameter with an offset) leave the field None."""
    x = e._x
    if x is None:
        pending = e if type(e) is Affine else None  # (a pending product: built_node() by C)
        return e.x if pending is None else pending.built_node()
    return x


class Expression(ExpressionCore, Values):
    """A DyNet expression: ``x`` (the batchviz node) and ``bd`` (the minibatch size)."""

    __slots__ = ()

    def __repr__(self) -> str:
        node = self.x.node if type(self.x) is BvExpression else self.x
        if type(self.x) is BvExpression and type(self.x.graph) is RemovedNodes:
            return f"expression {node}/{_graph.session.version} (removed by cg_revert)"
        return f"expression {node}/{_graph.session.version} {self.dim()}"

    # --- the other operators, with DyNet's meanings (``+`` and ``*``: ExpressionCore) ------
    def __radd__(self, other):
        if isinstance(other, Expression) or not is_number(other):
            return add(other, self)
        return Expression(bv.shift(self.x, float(other)), self.bd)

    def __sub__(self, other):
        if isinstance(other, Expression) or not is_number(other):
            return sub(self, other)
        return Expression(bv.shift(self.x, -float(other)), self.bd)

    def __rsub__(self, other):
        if isinstance(other, Expression) or not is_number(other):
            return sub(other, self)
        return Expression(bv.shift(bv.neg(self.x), float(other)), self.bd)

    def __rmul__(self, other):
        if isinstance(other, Expression) or not is_number(other):
            return matmul(other, self)
        return Expression(bv.scale(self.x, float(other)), self.bd)

    def __truediv__(self, other):
        if isinstance(other, Expression) or not is_number(other):
            return elementwise(bv.cdiv, self, other, "cdiv")
        return Expression(bv.scale(self.x, 1.0 / other), self.bd)

    def __neg__(self):
        return Expression(bv.neg(self.x), self.bd)

    def __pow__(self, other):
        if not isinstance(other, Expression) and is_number(other):
            other = Expression(bv.input(float(other)), 1)
        return elementwise(bv.pow, self, other, "pow")

    def __getitem__(self, index):
        return index_rows(self, index)

    __array_ufunc__ = None  # numpy's `array * expression` hands over to us instead

    def __bool__(self):
        """True, as every DyNet expression is: DyNet programs write ``w1dt = w1dt or W *
        M`` to build a node once. (batchviz's own expressions refuse a truth value, so that
        ``if x > 0`` on a value not yet computed is an error there.)"""
        return True


def as_expression(e, who: str) -> Expression:
    """``e`` if it is an expression (or a parameter, which is one); a clear error otherwise.
    (It asks for the base class of every Expression: the cheaper test when compiled.)"""
    if isinstance(e, ExpressionCore):
        return e
    raise TypeError(f"{who}: expected a dynet Expression, got {type(e).__name__}"
                    + (" (make it one with dy.inputTensor(...))"
                       if isinstance(e, (np.ndarray, list, numbers.Number)) else ""))


def elementwise(op, a, b, who: str, right_only: bool = False) -> Expression:
    """``op`` (a batchviz element-wise op of two same-shaped arguments) of ``a`` and ``b``,
    broadcast as DyNet's element-wise ops are."""
    x, y = as_expression(a, who), as_expression(b, who)
    ax, bx = node_of(x), node_of(y)
    shape = shape_of(ax)  # (nodes of one shape share its tuple, see LazyGraph.shape_objects)
    if x.bd == y.bd and (shape_of(bx) is shape or shape_of(bx) == shape):  # nothing to broadcast
        return expression_of(op(ax, bx), x.bd)
    return broadcast_elementwise(op, x, y, who, right_only)


def broadcast_elementwise(op, a: Expression, b: Expression, who: str,
                          right_only: bool = False) -> Expression:
    """:func:`elementwise` of arguments of different dimensions or minibatch sizes,
    broadcast as DyNet's (``(dims, batch)`` of the result: :func:`.dims.combine_dims`)."""
    dims, bd = combine_dims((dims_of(a), a.bd), (dims_of(b), b.bd), who, right_only)
    return expression_of(op(to_shape(a, dims, bd), to_shape(b, dims, bd)), bd)


def index_rows(e: Expression, index) -> Expression:
    """DyNet's ``x[i]`` (row ``i``, a negative ``i`` counted from the end), ``x[a:b]`` and
    ``x[a:b:step]`` (rows), and a tuple of slices (one per dimension, and one more for the
    instances of a minibatch)."""
    if isinstance(index, numbers.Integral):
        rows = dims_of(e)[0]
        if not -rows <= index < rows:
            raise IndexError(f"index {index} out of range for {rows} rows")
        return Expression(bv.pick_axis(e.x, int(index) % rows, 0), e.bd) if e.x.shape \
            else e
    if isinstance(index, slice):
        index = (index,)
    if not isinstance(index, tuple) or not all(isinstance(s, slice) for s in index):
        raise TypeError(f"expression index must be an int, a slice or a tuple of slices, got "
                        f"{index!r}")
    return Expression(*selected_rows(e, index))


# --- DyNet's * and +, and the affine transforms they make ------------------------------
class Affine(Expression):
    """``b + W1 * x1 + ...`` (``b`` may be absent), a node only once it is used.

    ``terms`` is ``(b or None, W1, x1, W2, x2, ...)`` in batchviz objects (parameters or
    nodes); ``x`` builds the node on first use. ``+`` of a bias or of more products extends
    it (:meth:`plus`), and an activation of it is one node (:meth:`activated`)."""

    __slots__ = ("terms", "rows", "_built", "_activated")

    def __init__(self, terms, bd: int):
        self.terms, self.bd, self._built, self._activated = tuple(terms), bd, None, None
        self.rows = shape_of(self.terms[1])[0]  # (of every product, checked when made)
        self._x = None  # (the node is built on first use, see x)

    @property
    def x(self):
        return self.built_node()

    def built_node(self):  # (x: the node, built on first use)
        node = self._built
        if node is None or type(node.graph) is RemovedNodes:  # (built after a checkpoint
            node = self._built = self._build()                # and reverted: built again)
        return node

    def _build(self):
        terms = self.terms
        if terms[0] is None:
            if len(terms) == 3:
                return linalg_matmul(terms[1], terms[2])
            products = [bv.matmul(W, v) for W, v in zip(terms[1::2], terms[2::2])]
            return bv.esum(products)
        if self.bd > 1 and len(terms[0].shape) == 1:  # a bias added to every instance
            return bv.affine_batch(terms)
        return bv.affine_transform(terms)

    def plus(self, b):
        """``self + b`` (``self`` pending) as one pending affine transform, or None when it
        is not one: a bias added to products, or products added to a bias and products."""
        terms, bd = self.terms, self.bd
        if type(b) is Affine and b._built is None:   # two pending sums
            other = b
            if other.bd == bd and terms[0] is not None and other.terms[0] is None:
                return pending_affine(terms + other.terms[1:], bd, self.rows)
            if other.bd == bd and terms[0] is None and other.terms[0] is not None:
                return pending_affine(other.terms + terms[1:], bd, other.rows)
            return None
        if terms[0] is not None or not isinstance(b, Expression):
            return None
        # b is the bias if it is a vector of the product's rows (unbatched), or shaped as
        # the product
        bias_expression = b
        if bias_expression.bd != 1 and bias_expression.bd != bd:
            return None
        bias, rows = node_of(bias_expression), self.rows
        shape = shape_of(bias)
        if (len(shape) == 1 and shape[0] == rows) or (
                bias_expression.bd == bd > 1 and shape == (rows, bd)):
            return pending_affine(with_bias(bias, terms), bd, rows)
        return None

    def activated(self, activation: str):
        """``activation(self)`` (logistic, tanh or rectify) as one node, when ``self`` is
        pending and is one affine node once built (a bias of the products' shape): a gate
        ``dy.logistic(b + W * x)`` is then one node, not two. None otherwise.

        ``self`` stays pending: used again, it becomes its own node (computed again), and
        its gradient adds what reaches it through these nodes (:meth:`gradient`)."""
        terms = self.terms
        if self._built is not None or terms[0] is None or (
                self.bd > 1 and len(terms[0].shape) == 1):
            return None
        node = expression_of(build_over_parameters(_ACTIVATED_AFFINE[activation], terms), self.bd)
        made = self._activated  # (a tuple of (activation, node) pairs: no list per gate)
        pair = (activation, node)
        self._activated = (pair,) if made is None else made + (pair,)
        return node

    @property
    def pending(self) -> bool:
        return self._built is None

    def gradient(self) -> np.ndarray:
        """As :meth:`Expression.gradient`, also through the activated nodes that were made
        of this transform (:meth:`activated`): their gradient times the activation's
        slope at their value."""
        if self._activated is None:
            return super().gradient()
        built = self._built is not None and type(self._built.graph) is not RemovedNodes
        total = super().gradient() if built else 0.0
        for activation, node in self._activated:
            if type(node.x.graph) is RemovedNodes:
                continue  # (made after a checkpoint, reverted: no longer part of the graph)
            value = node.npvalue()
            slope = (value * (1.0 - value) if activation == "logistic" else
                     1.0 - value * value if activation == "tanh" else value > 0)
            total = total + node.gradient() * slope
        return total


def with_bias(bias, terms: tuple) -> tuple:
    """``terms``, ``(None, W1, x1, ...)``, with ``bias`` first: for ``b + W * x`` (every
    gate) one new tuple, not three (a slice, a tuple of the bias and their sum)."""
    if len(terms) == 3:
        return (bias, terms[1], terms[2])
    return (bias,) + terms[1:]


def pending_affine(terms: tuple, bd: int, rows: int) -> Affine:
    """``Affine(terms, bd)``, made without calling the class (as :func:`expression_of`);
    ``rows``: the rows of its products, which the caller has checked."""
    e = Affine.__new__(Affine)
    e.terms, e.bd, e.rows, e._x, e._built, e._activated = terms, bd, rows, None, None, None
    return e


def add(a, b) -> Expression:
    """DyNet's ``a + b`` (broadcast as its element-wise ops); a bias plus pending products
    stays one pending affine transform (the pending one of the two is extended; of two
    pending ones, ``a``)."""
    if type(b) is Affine and type(a) is not Affine:
        pending = b
        extended = pending.plus(a) if pending._built is None else None
    elif type(a) is Affine:
        pending = a
        extended = pending.plus(b) if pending._built is None else None
    else:
        extended = None
    if extended is not None:
        return extended
    return elementwise(bv_add, a, b, "x + y")


def sub(a, b) -> Expression:
    return elementwise(bv.sub, a, b, "x - y")


def matmul(a, b) -> Expression:
    """DyNet's ``a * b``: the matrix product (a vector is a column; a matrix times a
    vector is a vector). A matrix times a vector or a minibatch of vectors is a pending
    :class:`Affine`; a batch of right factors is one product with all their columns; a
    batch of left factors, a product per instance (:func:`.dims.products_per_instance`).
    """
    x, y = as_expression(a, "x * y"), as_expression(b, "x * y")
    if x.bd == 1:   # W * x, or W * X of a minibatch: when the shapes say so, the checks of
        left, right = node_of(x), node_of(y)  # matmul_checked pass: a pending product
        ls, rs = shape_of(left), shape_of(right)
        if len(ls) == 2 and len(rs) == (1 if y.bd == 1 else 2) and ls[1] == rs[0]:
            return pending_affine((None, left, right), y.bd, ls[0])
    return matmul_checked(x, y)


def matmul_checked(a: Expression, b: Expression) -> Expression:
    """:func:`matmul` of any two expressions, their dimensions checked."""
    da, db = dims_of(a), dims_of(b)
    if len(da) > 2 or len(db) > 2:
        raise dims_error("x * y", f"cannot multiply tensors of more than 2 dimensions: "
                                  f"{a.dim()} and {b.dim()}")
    cols = da[1] if len(da) == 2 else 1
    if cols != db[0]:
        raise dims_error("x * y", f"mismatched dimensions {a.dim()} and {b.dim()}: {cols} "
                                  f"columns times {db[0]} rows")
    if a.bd > 1:
        if b.bd not in (1, a.bd):
            raise dims_error("x * y", f"minibatch sizes of {a.dim()} and {b.dim()} differ")
        return expression_of(products_per_instance(a, b, da, db, a.bd), a.bd)
    left, right, bd = a.x, b.x, b.bd
    ls = shape_of(left)
    if len(ls) == 2 and len(db) == 1 and shape_of(right):   # W x, or W X of a minibatch
        return pending_affine((None, left, right), bd, ls[0])
    return matmul_other(a, b, da, db)


def matmul_other(a: Expression, b: Expression, da: tuple, db: tuple) -> Expression:
    """:func:`matmul` of all but a matrix times vectors (``da``, ``db``: their dims)."""
    left, right, bd = a.x, b.x, b.bd
    left = left if len(shape_of(left)) == 2 else as_matrix(a)
    if len(db) == 1:                       # a vector times a number
        return expression_of(linalg_matmul(left, bv.reshape(right, (1,))), bd)
    if bd == 1:                            # a matrix
        return expression_of(linalg_matmul(left, right), 1)
    k = db[1]                              # a batch of matrices: all their columns at once
    product = bv.matmul(left, bv.reshape(right, (db[0], k * bd)))
    return Expression(bv.reshape(product, (da[0], k, bd)), bd)
