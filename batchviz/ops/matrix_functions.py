"""Functions of a square matrix: its inverse and the log of its determinant (DyNet's
``inverse`` and ``logdet``).

A batch is a stack of matrices of one size (the size is in the signature, App. A), and
NumPy's and CuPy's ``linalg`` routines take stacks: one call inverts or factorises every
matrix of the batch. The gradients need no factorisation of their own:

* ``Y = X^-1``: ``dX = -Y^T dY Y^T`` (from ``d(X^-1) = -X^-1 dX X^-1``), from the output;
* ``y = log det X``: ``dX = dy X^-T`` (Jacobi's formula).
"""
from __future__ import annotations

from ._build import build
from .base import Op, register


def _check_square(op: Op, shape: tuple) -> None:
    if len(shape) != 2 or shape[0] != shape[1]:
        raise op.error(f"needs a square matrix, got shape {shape}")


class Inverse(Op):
    """``X^-1`` of a square matrix ``X``."""

    name = "inverse"
    cheap = False

    def infer_shape(self, shapes, attrs):
        _check_square(self, shapes[0])
        return shapes[0]

    def forward(self, xp, ins, attrs, n):
        return xp.linalg.inv(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        y_t = out.swapaxes(1, 2)
        return [-(y_t @ g @ y_t)]


class LogDet(Op):
    """``log(det X)`` of a square matrix ``X``: NaN where the determinant is negative, as
    DyNet's (the log of a negative number), minus infinity where it is zero."""

    name = "logdet"
    cheap = False

    def infer_shape(self, shapes, attrs):
        _check_square(self, shapes[0])
        return ()

    def forward(self, xp, ins, attrs, n):
        sign, log_abs = xp.linalg.slogdet(ins[0])
        return xp.where(sign < 0, xp.nan, log_abs)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g[:, None, None] * xp.linalg.inv(ins[0]).swapaxes(1, 2)]


_INVERSE = register(Inverse())
_LOGDET = register(LogDet())


def inverse(x):
    """The inverse of the square matrix ``x``."""
    return build(_INVERSE, (x,))


def logdet(x):
    """The log of the determinant of the square matrix ``x`` (NaN when it is negative)."""
    return build(_LOGDET, (x,))


__all__ = ["inverse", "logdet"]
