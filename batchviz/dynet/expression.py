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
(batchviz's own ``*`` stays element-wise), ``x / y`` and ``x + y`` broadcast as DyNet's do
(:mod:`.products` has ``*`` and ``+``).
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import ops as _ops_package  # noqa: F401  (registers every op)
from ..backend import to_numpy
from ..expression import Expression as BvExpression
from ..ops import api as bv
from . import graph as _graph

_SESSION = _graph.session  # (one object for the program's life: its settings change)


class Expression:
    """A DyNet expression: ``x`` (the batchviz node) and ``bd`` (the minibatch size)."""

    __slots__ = ("x", "bd")

    def __init__(self, x, bd: int = 1):
        self.x = x
        self.bd = bd
        if _SESSION.immediate and type(x) is BvExpression:  # renew_cg(immediate_compute=True)
            self.npvalue()

    # --- dimensions ---------------------------------------------------------------------
    def dim(self) -> tuple:
        """``((dims), batch)``, as DyNet."""
        return (dims_of(self), self.bd)

    def _node(self) -> BvExpression:
        x = self.x
        return x if type(x) is BvExpression else x.expr()

    # --- values -------------------------------------------------------------------------
    def npvalue(self, recalculate: bool = False) -> np.ndarray:
        """The value as an array shaped ``dims`` (``dims + (batch,)`` when batched)."""
        node = self._node()
        if recalculate:
            node.graph.recompute()
        value = node.npvalue()
        _graph.check_values(value, f"expression {node.node}")
        return value.reshape(full_shape(self))

    def value(self, recalculate: bool = False):
        """A float for one number, a list for a vector (a batch of vectors: one list, in
        DyNet's column-major order), an array for a matrix or more."""
        if len(dims_of(self)) >= 2:
            return self.npvalue(recalculate)
        values = self.vec_value(recalculate)
        return values[0] if len(values) == 1 else values

    def vec_value(self, recalculate: bool = False) -> list:
        """Every value in a list, in DyNet's column-major order (batch last)."""
        return self.npvalue(recalculate).flatten(order="F").tolist()

    def scalar_value(self, recalculate: bool = False) -> float:
        v = self.npvalue(recalculate)
        if v.size != 1:
            raise ValueError(f"scalar_value() of an expression of dimension {self.dim()}")
        return float(v.reshape(()))

    def forward(self, recalculate: bool = False) -> None:
        """Compute the graph (every node built so far, in batches)."""
        self.npvalue(recalculate)

    def tensor_value(self, recalculate: bool = False):
        raise NotImplementedError("Expression.tensor_value(): batchviz.dynet has no Tensor "
                                  "type; use npvalue() and NumPy (argmax, topk) instead")

    def backward(self, full: bool = False) -> None:
        """Accumulate the gradient of this scalar into every parameter it depends on; with
        ``full=True`` keep every expression's gradient too, for :meth:`gradient`."""
        d = dims_of(self)
        if self.bd != 1 or int(np.prod(d)) != 1:
            raise ValueError(f"backward() can only be called on scalar nodes, but this "
                             f"expression has dimension {self.dim()}; sum it first, e.g. "
                             "with dy.sum_batches or dy.sum_elems")
        node = self._node()
        if node.shape not in ((), (1,)):
            node = bv.reshape(node, ())
        graph = node.graph
        if full and not graph.keep_gradients:  # constants' gradients too: run it again so
            graph.keep_gradients = True        # that every batch takes part in backward
            graph.recompute()
        graph.gradients = None
        node.backward()

    def gradient(self) -> np.ndarray:
        """The gradient of the last ``backward(full=True)``'s scalar with respect to this
        expression, shaped as :meth:`npvalue` (batchviz keeps the gradients of expressions
        that are not parameters only when ``full=True`` asks for them)."""
        node = self._node()
        graph = node.graph
        if graph.gradients is None:
            raise RuntimeError("gradient(): call backward(full=True) first; batchviz keeps "
                               "the gradients of expressions other than parameters only then")
        first, values = graph.gradients
        address = graph.memory.block_address(node.node, 0)
        if address < 0:  # a parameter's node
            return graph.param_of_node[node.node].grad.reshape(full_shape(self))
        size = int(np.prod(node.shape))
        flat = to_numpy(values[address - first:address - first + size])
        return np.array(flat, copy=True).reshape(full_shape(self))

    def __repr__(self) -> str:
        node = self.x.node if type(self.x) is BvExpression else self.x
        return f"expression {node}/{_graph.session.version} {self.dim()}"

    # --- operators, with DyNet's meanings -------------------------------------------------
    def __add__(self, other):
        if isinstance(other, numbers.Real):
            return Expression(bv.shift(self.x, float(other)), self.bd)
        return add(self, other)

    def __radd__(self, other):
        if isinstance(other, numbers.Real):
            return Expression(bv.shift(self.x, float(other)), self.bd)
        return add(other, self)

    def __sub__(self, other):
        if isinstance(other, numbers.Real):
            return Expression(bv.shift(self.x, -float(other)), self.bd)
        return sub(self, other)

    def __rsub__(self, other):
        if isinstance(other, numbers.Real):
            return Expression(bv.shift(bv.neg(self.x), float(other)), self.bd)
        return sub(other, self)

    def __mul__(self, other):
        if isinstance(other, numbers.Real):
            return Expression(bv.scale(self.x, float(other)), self.bd)
        return matmul(self, other)

    def __rmul__(self, other):
        if isinstance(other, numbers.Real):
            return Expression(bv.scale(self.x, float(other)), self.bd)
        return matmul(other, self)

    def __truediv__(self, other):
        if isinstance(other, numbers.Real):
            return Expression(bv.scale(self.x, 1.0 / other), self.bd)
        return elementwise(bv.cdiv, self, other, "cdiv")

    def __neg__(self):
        return Expression(bv.neg(self.x), self.bd)

    def __pow__(self, other):
        if isinstance(other, numbers.Real):
            other = Expression(bv.input(float(other)), 1)
        return elementwise(bv.pow, self, other, "pow")

    def __getitem__(self, index):
        return index_rows(self, index)

    __array_ufunc__ = None  # numpy's `array * expression` hands over to us instead

    def __bool__(self):
        raise TypeError("an expression has no truth value before it is computed; use .value()")


# --- DyNet's dimensions over batchviz shapes ------------------------------------------------
def dims_of(e) -> tuple:
    """DyNet's dims of ``e`` (without the batch): its batchviz shape, less the last axis
    when batched; a scalar is ``(1,)``."""
    shape = e.x.shape
    if e.bd > 1:
        shape = shape[:-1]
    return shape if shape else (1,)


def full_shape(e) -> tuple:
    """DyNet's ``npvalue()`` shape: the dims, and the batch last when batched."""
    dims = dims_of(e)
    return dims + (e.bd,) if e.bd > 1 else dims


def layout(dims, bd: int) -> tuple:
    """The batchviz shape of a DyNet value of ``dims`` and batch ``bd``."""
    return tuple(dims) + ((bd,) if bd > 1 else ())


def as_expression(e, who: str) -> Expression:
    """``e`` if it is an expression (or a parameter, which is one); a clear error otherwise."""
    if isinstance(e, Expression):
        return e
    raise TypeError(f"{who}: expected a dynet Expression, got {type(e).__name__}"
                    + (" (make it one with dy.inputTensor(...))"
                       if isinstance(e, (np.ndarray, list, numbers.Number)) else ""))


def to_shape(e: Expression, dims: tuple, bd: int):
    """The batchviz node of ``e`` laid out as a value of ``dims`` and batch ``bd`` (which
    ``e``'s dims and batch broadcast to): ``e.x`` itself when it already is one, else a
    ``broadcast`` node (a vector repeated along the columns, one instance repeated over the
    batch, a ``()`` scalar seen as ``(1,)``)."""
    target = layout(dims, bd)
    if e.x.shape == target:
        return e.x
    mine = dims_of(e) + (1,) * (len(dims) - len(dims_of(e)))
    view = layout(mine, e.bd) if e.bd > 1 else mine + ((1,) if bd > 1 else ())
    return bv.broadcast(e.x, view, target)


def broadcast_dims(a: Expression, b: Expression, who: str, right_only: bool = False):
    """DyNet's broadcasting of two arguments of an element-wise op: ``(dims, batch)`` of
    the result; every dimension (and the batch) must match or be 1 (for ``cdiv``, 1 on
    the right only)."""
    return combine_dims(a.dim(), b.dim(), who, right_only)


def combine_dims(first: tuple, second: tuple, who: str, right_only: bool = False) -> tuple:
    """:func:`broadcast_dims` of two ``(dims, batch)`` pairs."""
    (da, ba), (db, bb) = first, second
    for i, (x, y) in enumerate(zip(da, db)):
        if x != y and not (y == 1 if right_only else min(x, y) == 1):
            raise ValueError(f"{who}: dimension {i} of {first} and {second} must match or be 1")
    if ba != bb and not (bb == 1 if right_only else min(ba, bb) == 1):
        raise ValueError(f"{who}: batch sizes of {first} and {second} must match or be 1")
    longer = da if len(da) >= len(db) else db
    dims = tuple(max(x, y) for x, y in zip(da, db)) + longer[min(len(da), len(db)):]
    return dims, max(ba, bb)


def elementwise(op, a, b, who: str, right_only: bool = False) -> Expression:
    """``op`` (a batchviz element-wise op of two same-shaped arguments) of ``a`` and ``b``,
    broadcast as DyNet's element-wise ops are."""
    a, b = as_expression(a, who), as_expression(b, who)
    ax, bx = a.x, b.x
    if a.bd == b.bd and ax.shape == bx.shape:  # the usual case: nothing to broadcast
        return Expression(op(ax, bx), a.bd)
    dims, bd = broadcast_dims(a, b, who, right_only)
    return Expression(op(to_shape(a, dims, bd), to_shape(b, dims, bd)), bd)


def index_rows(e: Expression, index) -> Expression:
    """DyNet's ``x[i]`` (row ``i``, a negative ``i`` counted from the end), ``x[a:b]`` and
    ``x[a:b:step]`` (rows), and a tuple of slices (one per dimension)."""
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
    x, dims = e.x, dims_of(e)
    if len(index) > len(dims):
        raise IndexError(f"{len(index)} slices for an expression of dimension {e.dim()}")
    if not e.x.shape:
        x = bv.reshape(x, (1,))
    for axis, s in enumerate(index):
        picked = list(range(*s.indices(dims[axis])))
        if not picked:
            raise IndexError(f"slice {s} of dimension {axis} ({dims[axis]}) is empty")
        if picked != list(range(dims[axis])):
            x = bv.select_axis(x, picked, axis)
    return Expression(x, e.bd)


# the operators' arithmetic, which needs the class above (DyNet's ``*`` makes pending affine
# transforms, see .products)
from .products import add, matmul, sub  # noqa: E402
