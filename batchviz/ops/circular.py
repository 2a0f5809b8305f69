"""Circular convolution and correlation of two vectors (DyNet's ``circ_conv`` and
``circ_corr``; holographic embeddings compose a pair of vectors with them):

* ``conv(u, v)[k] = sum_i u[i] v[(k - i) mod d]``;
* ``corr(u, v)[k] = sum_i u[i] v[(i + k) mod d]``.

Each is a product with a matrix of ``v``'s entries gathered at an index matrix ``M``,
``y = v[M] @ u``, with ``M[k, i] = (k - i) mod d`` or ``(i + k) mod d``. A batch is a
stack of pairs of one length (the length is in the signature, App. A): one gather and one
batched product, exact, with only functions NumPy and CuPy share. It costs ``d^2`` per
pair against an FFT's ``d log d``, and needs no complex arithmetic; the vectors of such
models are a few hundred long. The gradients are the same kind of product:

* conv: ``du = v[M]^T g``, and ``dv = u[M]^T g`` (convolution is symmetric in ``u, v``);
* corr: ``du = v[M]^T g``, and ``dv = conv(g, u)``, i.e. ``u[C] g`` with the convolution's
  index matrix ``C``.
"""
from __future__ import annotations

import numpy as np

from .. import backend
from ._build import build
from .base import Op, register


def _convolution_index(d: int) -> np.ndarray:
    """``M[k, i] = (k - i) mod d``."""
    rows = np.arange(d)
    return (rows[:, None] - rows[None, :]) % d


def _correlation_index(d: int) -> np.ndarray:
    """``M[k, i] = (i + k) mod d``."""
    rows = np.arange(d)
    return (rows[:, None] + rows[None, :]) % d


def _gathered(v, index):
    """``(n, d, d)``: each row of ``v`` (``(n, d)``) gathered at the index matrix."""
    return v[:, backend.to_device_index(index)]


def _times(matrices, g):
    """``matrices @ g`` for a stack of matrices ``(n, d, d)`` and of vectors ``(n, d)``."""
    return (matrices @ g[:, :, None])[:, :, 0]


def _transposed_times(matrices, g):
    """``matrices^T @ g``, without transposing the stack."""
    return (g[:, None, :] @ matrices)[:, 0, :]


class _Circular(Op):
    """The shape check and forward pass the two share: ``v[M] @ u``."""

    arity = 2
    cheap = False

    @staticmethod
    def index(d: int) -> np.ndarray:
        """The index matrix ``M`` of the output, ``y = v[M] @ u``, for vectors of length ``d``."""
        raise NotImplementedError

    def infer_shape(self, shapes, attrs):
        u, v = shapes
        if len(u) != 1 or u != v:
            raise self.error(f"needs two vectors of one length, got shapes {u} and {v}")
        return u

    def forward(self, xp, ins, attrs, n):
        u, v = ins
        return _times(_gathered(v, self.index(u.shape[1])), u)


class CircConv(_Circular):
    name = "circ_conv"
    index = staticmethod(_convolution_index)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        u, v = ins
        index = _convolution_index(u.shape[1])
        gu = _transposed_times(_gathered(v, index), g) if needs[0] else None
        gv = _transposed_times(_gathered(u, index), g) if needs[1] else None
        return [gu, gv]


class CircCorr(_Circular):
    name = "circ_corr"
    index = staticmethod(_correlation_index)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        u, v = ins
        d = u.shape[1]
        gu = _transposed_times(_gathered(v, _correlation_index(d)), g) if needs[0] else None
        gv = _times(_gathered(u, _convolution_index(d)), g) if needs[1] else None
        return [gu, gv]


_CIRC_CONV = register(CircConv())
_CIRC_CORR = register(CircCorr())


def circ_conv(u, v):
    """The circular convolution of two vectors of one length ``d``: ``y[k] = sum_i u[i]
    v[(k - i) mod d]``."""
    return build(_CIRC_CONV, (u, v))


def circ_corr(u, v):
    """The circular correlation of two vectors of one length ``d``: ``y[k] = sum_i u[i]
    v[(i + k) mod d]``."""
    return build(_CIRC_CORR, (u, v))


__all__ = ["circ_conv", "circ_corr"]
