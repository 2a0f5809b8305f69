"""Softmax and the classification losses, over vectors.

``pickneglogsoftmax(x, i) = -log softmax(x)[i]`` is one node (not three), computed with the
log-sum-exp trick. The target index ``i`` is per node, not in the signature, so the losses
of every word of every sentence batch into one kernel.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from .base import Op, register
from ._build import build, build_memoized


def _vector_only(op, shapes):
    if len(shapes[0]) != 1:
        raise op.error(f"needs a vector, got shape {shapes[0]}")


def _log_softmax(xp, x):
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))


def logsumexp(xp, x):
    """``log(sum(exp(x)))`` over axis 1, with the maximum taken out first so that nothing
    overflows; the axis is kept (size 1). A classification loss needs only this and the
    picked score, ``-log softmax(x)[i] = logsumexp(x) - x[i]``: one pass over the scores
    fewer than computing the whole ``log_softmax`` and picking from it."""
    top = x.max(axis=1, keepdims=True)
    e = x - top
    xp.exp(e, out=e)
    total = e.sum(axis=1, keepdims=True)
    xp.log(total, out=total)
    total += top
    return total


class Softmax(Op):
    name = "softmax"

    def infer_shape(self, shapes, attrs):
        _vector_only(self, shapes)
        return shapes[0]

    def forward(self, xp, ins, attrs, n):
        return xp.exp(_log_softmax(xp, ins[0]))

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [out * (g - (g * out).sum(axis=1, keepdims=True))]


class LogSoftmax(Op):
    name = "log_softmax"

    def infer_shape(self, shapes, attrs):
        _vector_only(self, shapes)
        return shapes[0]

    def forward(self, xp, ins, attrs, n):
        return _log_softmax(xp, ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g - xp.exp(out) * g.sum(axis=1, keepdims=True)]


class PickNegLogSoftmax(Op):
    name = "pickneglogsoftmax"

    def infer_shape(self, shapes, attrs):
        _vector_only(self, shapes)
        return ()

    def memo_key(self, graph, args, attrs):
        return (self, graph.shapes[args[0]])  # the class index is checked by the constructor

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        rows = backend.to_device_index(np.asarray(attrs, dtype=np.int64))
        return logsumexp(xp, x)[:, 0] - x[xp.arange(n), rows]

    def backward(self, xp, ins, out, g, attrs, n, needs):
        # softmax(x) = exp(x - logsumexp(x)), and logsumexp(x) = loss + x[i]: the forward
        # pass's output gives it back without another pass over the scores
        x = ins[0]
        rows = backend.to_device_index(np.asarray(attrs, dtype=np.int64))
        picked = (xp.arange(n), rows)
        lse = out + x[picked]
        probs = x - lse[:, None]
        xp.exp(probs, out=probs)
        probs[picked] -= 1.0
        probs *= g[:, None]
        return [probs]


_SOFTMAX = register(Softmax())
_LOG_SOFTMAX = register(LogSoftmax())
_PNLS = register(PickNegLogSoftmax())


def softmax(x):
    """``exp(x) / sum(exp(x))`` of a vector: probabilities that sum to 1."""
    return build(_SOFTMAX, (x,))


def log_softmax(x):
    """``log(softmax(x))`` of a vector, computed without overflow."""
    return build(_LOG_SOFTMAX, (x,))


def pickneglogsoftmax(x, index):
    """``-log(softmax(x)[index])``: the cross-entropy loss of a score vector."""
    if type(index) is not int:
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"pickneglogsoftmax: index must be an int, got {type(index).__name__}")
        index = int(index)
    shape = getattr(x, "shape", None)  # (non-vectors and non-expressions: build says why)
    if shape is not None and len(shape) == 1 and not 0 <= index < shape[0]:
        raise IndexError(f"pickneglogsoftmax: class {index} is out of range for {shape[0]} scores")
    return build_memoized(_PNLS, x, index)  # one loss per word: usually a memo lookup


__all__ = ["softmax", "log_softmax", "pickneglogsoftmax"]
