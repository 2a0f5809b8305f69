"""Reductions to a scalar: sum_elems, mean_elems, dot_product, squared_distance, squared_norm.

Dimension-sensitive signatures (the shape of the argument); DyNet leaves ``sum_elems`` and
``dot_product`` unbatched, batchviz batches them into one reduction over the batch axis.
"""
from __future__ import annotations

from .base import Op, register, same_shapes
from ._build import build


def _batch_axes(x):
    """Every axis but the leading batch axis."""
    return tuple(range(1, x.ndim))


def _expand(v, like):
    """Per-node scalars ``(n,)`` reshaped to broadcast against ``like`` ``(n, ...)``."""
    return v.reshape((v.shape[0],) + (1,) * (like.ndim - 1))


class SumElems(Op):
    name = "sum_elems"

    def infer_shape(self, shapes, attrs):
        return ()

    def forward(self, xp, ins, attrs, n):
        return ins[0].sum(axis=_batch_axes(ins[0])) if ins[0].ndim > 1 else ins[0].copy()

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [xp.broadcast_to(_expand(g, ins[0]), ins[0].shape)]


class MeanElems(SumElems):
    name = "mean_elems"

    def forward(self, xp, ins, attrs, n):
        return super().forward(xp, ins, attrs, n) * (n / ins[0].size)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [xp.broadcast_to(_expand(g * (n / ins[0].size), ins[0]), ins[0].shape)]


class DotProduct(Op):
    name = "dot_product"
    arity = 2

    def infer_shape(self, shapes, attrs):
        same_shapes(self, shapes)
        return ()

    def forward(self, xp, ins, attrs, n):
        a, b = ins
        return (a * b).sum(axis=_batch_axes(a)) if a.ndim > 1 else a * b

    def backward(self, xp, ins, out, g, attrs, n, needs):
        a, b = ins
        ge = _expand(g, a)
        return [ge * b if needs[0] else None, ge * a if needs[1] else None]


class SquaredDistance(Op):
    name = "squared_distance"
    arity = 2

    def infer_shape(self, shapes, attrs):
        same_shapes(self, shapes)
        return ()

    def forward(self, xp, ins, attrs, n):
        d = ins[0] - ins[1]
        return (d * d).sum(axis=_batch_axes(d)) if d.ndim > 1 else d * d

    def backward(self, xp, ins, out, g, attrs, n, needs):
        d = ins[0] - ins[1]
        gd = 2.0 * _expand(g, d) * d
        return [gd if needs[0] else None, -gd if needs[1] else None]


class SquaredNorm(Op):
    name = "squared_norm"

    def infer_shape(self, shapes, attrs):
        return ()

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        return (x * x).sum(axis=_batch_axes(x)) if x.ndim > 1 else x * x

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [2.0 * _expand(g, ins[0]) * ins[0]]


_SUM = register(SumElems())
_MEAN = register(MeanElems())
_DOT = register(DotProduct())
_SQDIST = register(SquaredDistance())
_SQNORM = register(SquaredNorm())


def sum_elems(x):
    """The sum of all elements of ``x`` (a scalar)."""
    return build(_SUM, (x,))


def mean_elems(x):
    """The mean of all elements of ``x`` (a scalar)."""
    return build(_MEAN, (x,))


def dot_product(a, b):
    """``sum(a * b)`` for two same-shaped expressions (a scalar)."""
    return build(_DOT, (a, b))


def squared_distance(a, b):
    """``||a - b||^2`` (a scalar): the paper's RNN-regression loss."""
    return build(_SQDIST, (a, b))


def squared_norm(x):
    """``||x||^2`` (a scalar)."""
    return build(_SQNORM, (x,))


__all__ = ["sum_elems", "mean_elems", "dot_product", "squared_distance", "squared_norm"]
