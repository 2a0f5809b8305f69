"""Multiplying by and adding a Python number: ``x * 0.5``, ``x / 3``, ``x + 1``, ``1 - x``.

The number is an attribute of each node, not part of the signature, so ``x * 0.5`` and
``y * 2`` batch together (the kernel multiplies by a column of per-node numbers).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import backend
from .base import Op, register
from ._build import build_memoized


def _column(attrs, ndim):
    """Per-node numbers as an array broadcastable against the batch ``(n, ...)``."""
    values = backend.to_device(np.asarray(attrs, dtype=np.float64))
    return values.reshape((len(attrs),) + (1,) * (ndim - 1))


class _WithNumber(Op):
    """An op of one expression and a per-node number: the result has the expression's
    shape, so the shape and the signature depend on that shape alone (the number is
    checked by the constructor), and the graph looks them up once per shape."""

    def infer_shape(self, shapes, attrs):
        return shapes[0]

    def memo_key(self, graph, args, attrs):
        return (self, graph.shapes[args[0]])


class Scale(_WithNumber):
    name = "scale"

    def forward(self, xp, ins, attrs, n):
        return ins[0] * _column(attrs, ins[0].ndim)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * _column(attrs, g.ndim)]


class Shift(_WithNumber):
    name = "shift"

    def forward(self, xp, ins, attrs, n):
        return ins[0] + _column(attrs, ins[0].ndim)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g]


_SCALE = register(Scale())
_SHIFT = register(Shift())


def _number(c, what):
    if type(c) is float:  # the common case, checked without NumPy's per-call cost
        if math.isfinite(c):
            return c
    elif isinstance(c, numbers.Real) and np.isfinite(c):
        return float(c)
    raise TypeError(f"{what}: the factor must be a finite number, got {c!r}")


def scale(x, c):
    """``x * c`` for a Python number ``c``."""
    return build_memoized(_SCALE, x, _number(c, "scale"))


def shift(x, c):
    """``x + c`` for a Python number ``c``."""
    return build_memoized(_SHIFT, x, _number(c, "shift"))


__all__ = ["scale", "shift"]
