"""Reductions over chosen axes: ``sum_axes``, ``max_axis`` / ``min_axis``,
``logsumexp_axis`` and ``kmax_axis`` (the ``k`` largest, DyNet's ``kmax_pooling``); and
``argmax_axis``, the one-hot of the maximum along an axis.

:mod:`batchviz.ops.reductions` reduces a whole value to a scalar. These keep the other
axes: the sum of a matrix's rows, the maximum of every column, the sums of a minibatch
written by hand with its instances along the last axis (DyNet's ``sum_batches`` is the sum
over that axis). Dimension-sensitive signatures: the argument's shape and the axes, so that
only reductions of the same kind batch together; the kernels get the batch as ``(n,) +
shape`` and reduce axis ``a + 1`` for the node's axis ``a``.
"""
from __future__ import annotations

import numbers

from ..signature import shape_text
from .base import Op, register
from ._build import build


def _check_axes(op, shape: tuple, axes: tuple) -> tuple:
    """``shape`` without ``axes``, which must be distinct axes of it."""
    if len(set(axes)) != len(axes) or any(not 0 <= a < len(shape) for a in axes):
        raise op.error(f"axes {axes} are not distinct axes of shape {shape}")
    return tuple(d for a, d in enumerate(shape) if a not in axes)


class SumAxes(Op):
    """The sum over ``axes`` (attributes: a sorted tuple of axes of the argument)."""

    name = "sum_axes"

    def infer_shape(self, shapes, attrs):
        return _check_axes(self, shapes[0], attrs)

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs), ()

    def memo_key(self, graph, args, attrs):
        return (self, graph.shapes[args[0]], attrs)

    def describe_signature(self, key, graph=None):
        """``sum_axes-5x3-over1``: the argument's shape and the axes summed."""
        return f"{self.name}-{shape_text(key[1])}-over{','.join(map(str, key[2]))}"

    def forward(self, xp, ins, attrs, n):
        return ins[0].sum(axis=tuple(a + 1 for a in attrs[0]))

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        kept = [1 if a in attrs[0] else d for a, d in enumerate(x.shape[1:])]
        return [xp.broadcast_to(g.reshape([n] + kept), x.shape)]


class TakeAlongAxis(Op):
    """One entry per position of the other axes taken along an axis, which is removed: the
    forward and backward of ops that differ only in which entry (:meth:`_where`)."""

    def _where(self, xp, x, attrs):
        """``(kernel axis, indices)``: the entry to take, an index array with that axis of
        size 1."""
        raise NotImplementedError

    def forward(self, xp, ins, attrs, n):
        axis, where = self._where(xp, ins[0], attrs)
        return xp.take_along_axis(ins[0], where, axis=axis).squeeze(axis)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        axis, where = self._where(xp, x, attrs)
        positions = xp.arange(x.shape[axis]).reshape([-1 if a == axis else 1
                                                      for a in range(x.ndim)])
        return [(positions == where) * xp.expand_dims(g, axis)]


class MaxAxis(TakeAlongAxis):
    """The maximum (or minimum) along one axis; the gradient goes to the first element that
    attains it. Attributes ``(axis, "max" or "min")``."""

    name = "max_axis"

    def infer_shape(self, shapes, attrs):
        return _check_axes(self, shapes[0], (attrs[0],))

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs), ()

    def _where(self, xp, x, attrs):
        """``(kernel axis, indices)``: where the extreme is along the axis, kept as an
        axis of size 1."""
        axis, kind = attrs[0]
        best = x.argmax(axis=axis + 1) if kind == "max" else x.argmin(axis=axis + 1)
        return axis + 1, xp.expand_dims(best, axis + 1)


class ArgmaxAxis(Op):
    """The one-hot of the maximum along one axis (the first of equal maxima), the shape of
    the argument: DyNet's ``argmax``. Attributes ``(axis, straight_through)``. The one-hot
    is constant almost everywhere, so backward passes nothing back; with
    ``straight_through`` it passes the gradient as it comes (the straight-through
    estimator of Bengio et al., 2013, which is no derivative)."""

    name = "argmax_axis"

    def infer_shape(self, shapes, attrs):
        _check_axes(self, shapes[0], (attrs[0],))
        return shapes[0]

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs), ()

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        axis = attrs[0][0] + 1
        best = xp.expand_dims(x.argmax(axis=axis), axis)
        positions = xp.arange(x.shape[axis]).reshape([-1 if a == axis else 1
                                                      for a in range(x.ndim)])
        return (positions == best).astype(x.dtype)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g if attrs[0][1] else None]


class LogSumExpAxis(Op):
    """``log(sum(exp(x)))`` along one axis, with the maximum taken out first."""

    name = "logsumexp_axis"

    def infer_shape(self, shapes, attrs):
        return _check_axes(self, shapes[0], (attrs,))

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs), ()

    def forward(self, xp, ins, attrs, n):
        axis = attrs[0] + 1
        x = ins[0]
        top = x.max(axis=axis, keepdims=True)
        return (xp.log(xp.exp(x - top).sum(axis=axis, keepdims=True)) + top).squeeze(axis)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        axis = attrs[0] + 1
        x = ins[0]
        return [xp.exp(x - xp.expand_dims(out, axis)) * xp.expand_dims(g, axis)]


class KMaxAxis(Op):
    """The ``k`` largest entries along one axis, in the order they stand in (k-max pooling,
    Kalchbrenner et al., 2014); of equal entries, the first ones. The gradient goes to the
    entries taken. Attributes ``(axis, k)``."""

    name = "kmax_axis"

    def infer_shape(self, shapes, attrs):
        axis, k = attrs
        shape = shapes[0]
        _check_axes(self, shape, (axis,))
        if not 1 <= k <= shape[axis]:
            raise self.error(f"k={k} must be between 1 and the {shape[axis]} entries of axis "
                             f"{axis} of shape {shape}")
        return shape[:axis] + (k,) + shape[axis + 1:]

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs), ()

    def _taken(self, xp, x, attrs):
        """``(kernel axis, positions)``: where the ``k`` largest stand, in ascending order."""
        axis, k = attrs[0]
        axis += 1
        largest_first = xp.argsort(-x, axis=axis, kind="stable")   # ties: the first first
        return axis, xp.sort(xp.take(largest_first, xp.arange(k), axis=axis), axis=axis)

    def forward(self, xp, ins, attrs, n):
        axis, taken = self._taken(xp, ins[0], attrs)
        return xp.take_along_axis(ins[0], taken, axis=axis)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        axis, taken = self._taken(xp, x, attrs)
        positions = xp.arange(x.shape[axis]).reshape([-1 if a == axis else 1
                                                      for a in range(x.ndim + 1)])
        hits = positions == xp.expand_dims(taken, axis)   # (..., entries, k, ...)
        return [(hits * xp.expand_dims(g, axis)).sum(axis=axis + 1)]


_SUM_AXES = register(SumAxes())
_MAX_AXIS = register(MaxAxis())
_LOGSUMEXP_AXIS = register(LogSumExpAxis())
_KMAX_AXIS = register(KMaxAxis())
_ARGMAX_AXIS = register(ArgmaxAxis())


def _axis_list(x, axes, who: str) -> tuple:
    """``axes`` (an int or a sequence of ints; negative ones count from the end) as a
    sorted tuple of axes of ``x``."""
    ndim = len(x.shape)
    axes = (axes,) if isinstance(axes, numbers.Integral) else tuple(axes)
    out = []
    for a in axes:
        if not isinstance(a, numbers.Integral) or not -ndim <= a < ndim:
            raise ValueError(f"{who}: {a!r} is not an axis of an expression of shape {x.shape}")
        out.append(int(a) % ndim)
    return tuple(sorted(out))


def sum_axes(x, axes):
    """The sum of ``x`` over ``axes`` (an int or a list), the other axes kept in order."""
    return build(_SUM_AXES, (x,), _axis_list(x, axes, "sum_axes"))


def max_axis(x, axis: int):
    """The maximum of ``x`` along ``axis``."""
    return build(_MAX_AXIS, (x,), (_axis_list(x, axis, "max_axis")[0], "max"))


def min_axis(x, axis: int):
    """The minimum of ``x`` along ``axis``."""
    return build(_MAX_AXIS, (x,), (_axis_list(x, axis, "min_axis")[0], "min"))


def logsumexp_axis(x, axis: int):
    """``log(sum(exp(x)))`` along ``axis``, without overflow."""
    return build(_LOGSUMEXP_AXIS, (x,), _axis_list(x, axis, "logsumexp_axis")[0])


def kmax_axis(x, k: int, axis: int):
    """The ``k`` largest entries of ``x`` along ``axis``, in the order they stand in."""
    if not isinstance(k, numbers.Integral):
        raise TypeError(f"kmax_axis: k must be an int, got {type(k).__name__}")
    return build(_KMAX_AXIS, (x,), (_axis_list(x, axis, "kmax_axis")[0], int(k)))


def argmax_axis(x, axis: int, straight_through: bool = False):
    """The one-hot of the maximum of ``x`` along ``axis`` (1 at the first maximum, 0
    elsewhere), shaped as ``x``. No gradient flows back through it, unless
    ``straight_through``: then the gradient passes as if it were the identity."""
    return build(_ARGMAX_AXIS, (x,), (_axis_list(x, axis, "argmax_axis")[0],
                                      bool(straight_through)))


__all__ = ["sum_axes", "max_axis", "min_axis", "logsumexp_axis", "kmax_axis",
           "argmax_axis"]
