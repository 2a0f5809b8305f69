"""Ops of one expression and a Python number: ``x * 0.5``, ``x / 3``, ``x + 1``, ``1 - x``,
the ELU of slope ``alpha``, the SiLU of ``beta`` and gradient scaling (``nobackprop``,
``flip_gradient``).

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
from .elementwise import logistic_values


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


class Elu(_WithNumber):
    """The exponential linear unit ``x if x > 0 else alpha * (exp(x) - 1)`` (Clevert et al.,
    2016), ``alpha`` per node."""

    name = "elu"

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        negative = _column(attrs, x.ndim) * xp.expm1(xp.minimum(x, 0.0))
        return xp.where(x > 0, x, negative)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        slope = xp.where(x > 0, 1.0, out + _column(attrs, x.ndim))  # alpha e^x = out + alpha
        return [g * slope]


class Silu(_WithNumber):
    """The sigmoid-weighted linear unit ``x * sigmoid(beta * x)`` (SiLU, or swish: Elfwing
    et al., 2017; Ramachandran et al., 2017), ``beta`` per node."""

    name = "silu"

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        return x * logistic_values(xp, _column(attrs, x.ndim) * x)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        beta = _column(attrs, x.ndim)
        s = logistic_values(xp, beta * x)
        return [g * (s + beta * out * (1.0 - s))]  # x beta s (1 - s) = beta out (1 - s)


class GradientScale(_WithNumber):
    """The identity forward; backward, the gradient times a per-node number: 0 stops it
    (DyNet's ``nobackprop``, a constant parameter), -1 flips it (``flip_gradient``)."""

    name = "scale_gradient"

    def forward(self, xp, ins, attrs, n):
        return ins[0].copy()

    def backward(self, xp, ins, out, g, attrs, n, needs):
        if not any(attrs):
            return [None]  # nothing flows back: the arguments get no gradient from here
        return [g * _column(attrs, g.ndim)]


_SCALE = register(Scale())
_SHIFT = register(Shift())
_ELU = register(Elu())
_SILU = register(Silu())
_GRADIENT_SCALE = register(GradientScale())


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


def elu(x, alpha=1.0):
    """The exponential linear unit: ``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    return build_memoized(_ELU, x, _number(alpha, "elu"))


def silu(x, beta=1.0):
    """The sigmoid-weighted linear unit (swish): ``x * sigmoid(beta * x)``."""
    return build_memoized(_SILU, x, _number(beta, "silu"))


def scale_gradient(x, factor):
    """``x`` unchanged, whose gradient is multiplied by ``factor`` on the way back."""
    return build_memoized(_GRADIENT_SCALE, x, _number(factor, "scale_gradient"))


def nobackprop(x):
    """``x`` unchanged; no gradient flows back through it (a constant from here on)."""
    return build_memoized(_GRADIENT_SCALE, x, 0.0)


def flip_gradient(x):
    """``x`` unchanged; its gradient flips sign on the way back (adversarial training)."""
    return build_memoized(_GRADIENT_SCALE, x, -1.0)


__all__ = ["scale", "shift", "elu", "silu", "scale_gradient", "nobackprop", "flip_gradient"]
