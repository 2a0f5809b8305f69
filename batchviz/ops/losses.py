"""Softmax, sparsemax, the constrained softmax and the classification losses.

``pickneglogsoftmax(x, i) = -log softmax(x)[i]`` is one node (log-sum-exp); ``i`` is per
node, not in the signature, so every word's loss batches into one kernel. ``softmax``,
``log_softmax``, ``sparsemax`` and ``constrained_softmax`` (a softmax whose entries may not
exceed given bounds) normalise over the first axis: a vector's entries, or each column of
a matrix (DyNet's meaning, and a manual minibatch's, one instance per column). ``hinge``
and ``binary_log_loss`` are DyNet's margin and binary cross-entropy losses.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..graph import ExpressionBase, shape_of
from .base import Op, register
from ._build import build, build_memoized


def _vector_only(op, shapes):
    if len(shapes[0]) != 1:
        raise op.error(f"needs a vector, got shape {shapes[0]}")


def _log_softmax(xp, x):
    shifted = x - x.max(axis=1, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))


def _not_scalar(op, shapes):
    if len(shapes[0]) == 0:
        raise op.error("needs a vector or a matrix (normalised over its first axis), got a scalar")


class Normalised(Op):
    """An op that normalises its argument over the first axis, whose shape it keeps."""

    def infer_shape(self, shapes, attrs):
        _not_scalar(self, shapes)
        return shapes[0]

    def memo_key(self, graph, args, attrs):
        """The argument's shape fixes the node's shape and signature (memoized)."""
        return (self, graph.shapes[args[0]])


class Softmax(Normalised):
    name = "softmax"

    def forward(self, xp, ins, attrs, n):
        return xp.exp(_log_softmax(xp, ins[0]))

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [out * (g - (g * out).sum(axis=1, keepdims=True))]


class LogSoftmax(Normalised):
    name = "log_softmax"

    def forward(self, xp, ins, attrs, n):
        return _log_softmax(xp, ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g - xp.exp(out) * g.sum(axis=1, keepdims=True)]


class Sparsemax(Normalised):
    """The Euclidean projection of ``x`` onto the probability simplex (Martins & Astudillo,
    2016): ``max(x - tau, 0)``, with the threshold ``tau`` that makes it sum to 1, over the
    first axis as :class:`Softmax`. Unlike softmax it is exactly 0 outside a *support*.

    With the entries sorted in decreasing order ``z_1 >= z_2 >= ...``, the support is the
    ``k`` largest, ``k`` the last with ``1 + k z_k > z_1 + ... + z_k`` (they form a prefix),
    and ``tau = (z_1 + ... + z_k - 1) / k``. The Jacobian is ``diag(s) - s s^T / k`` on the
    support ``s``: the gradient is ``g`` less its mean over the support, there, and 0 off it."""

    name = "sparsemax"

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        ranked = -xp.sort(-x, axis=1)
        ks = xp.arange(1, x.shape[1] + 1, dtype=x.dtype).reshape((1, -1) + (1,) * (x.ndim - 2))
        support = 1.0 + ks * ranked > xp.cumsum(ranked, axis=1)
        size = support.sum(axis=1, keepdims=True)
        tau = ((ranked * support).sum(axis=1, keepdims=True) - 1.0) / size
        return xp.maximum(x - tau, 0.0)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        support = out > 0
        mean = (g * support).sum(axis=1, keepdims=True) / support.sum(axis=1, keepdims=True)
        return [xp.where(support, g - mean, 0.0)]


class ConstrainedSoftmax(Op):
    """The softmax of scores ``x`` whose probabilities may not exceed bounds ``u`` (Martins
    & Kreutzer, 2017; DyNet's ``constrained_softmax``), over the first axis as
    :class:`Softmax`: ``p_i = min(u_i, c exp(x_i))``, with the one scale ``c`` that makes
    ``p`` sum to 1. What it is for: an attention over a sentence's words in which each
    word may get only what is left of its budget (Martins & Kreutzer's easy-first tagger).

    Why this form: an entry either sits at its bound (*clamped*) or is a softmax entry
    scaled by ``c``, and raising ``c`` only ever clamps more entries. With the entries in
    increasing order of ``u_i / exp(x_i)``, the clamped ones are therefore the first ``k``:
    with ``U_k`` the bounds of the first ``k`` and ``Q_k`` the ``exp(x_i)`` of the others,
    ``c_k = (1 - U_k) / Q_k``, and ``k`` is the first position whose ratio is not below
    ``c_k`` (the positions before it all are). One sort finds it, for every node of a
    batch at once, with no loop that runs until nothing changes (DyNet's way, one vector
    at a time). An entry exactly at its bound stays unclamped, as in DyNet.

    If the bounds sum to less than 1 no distribution fits under them; every entry is then
    clamped and the result is the bounds themselves, as DyNet's.

    Its signature is the default, dimension-sensitive one (its name and the shapes): the
    constrained softmaxes of one size, of every sentence, are one batch for the agenda,
    and the sort above runs along the rows of that batch.

    The gradient: on the unclamped entries ``p`` is ``1 - mass`` (``mass``: the clamped
    bounds' sum) times a softmax over them, so with ``dhat = sum_unclamped(p g) / (1 -
    mass)`` the scores get ``p (g - dhat)`` there and 0 where clamped; a clamped bound
    moves its own entry and takes that much from the others in proportion, so the bounds
    get ``g - dhat`` where clamped and 0 elsewhere. DyNet's backward pass computes the
    same (for both arguments)."""

    name = "constrained_softmax"
    arity = 2

    def infer_shape(self, shapes, attrs):
        x, u = shapes
        _not_scalar(self, [x])
        if len(x) > 2 or x != u:
            raise self.error(f"needs scores and bounds of one shape, a vector or a matrix "
                             f"(each column normalised), got {x} and {u}")
        return x

    @staticmethod
    def solve(xp, x, u):
        """``(p, clamped)`` for a batch (the normalised axis is axis 1), in logarithms so
        that nothing overflows: an entry's key is ``log(u / exp(x))``, and it is clamped
        when its key is below ``log c``. A bound of 0 or less is always clamped (no
        probability can go below it)."""
        z = x - x.max(axis=1, keepdims=True)
        bounded = u > 0
        key = xp.where(bounded, xp.log(xp.where(bounded, u, 1.0)) - z, -xp.inf)
        order = xp.argsort(key, axis=1, kind="stable")
        keys = xp.take_along_axis(key, order, axis=1)
        bounds = xp.take_along_axis(u, order, axis=1)
        exps = xp.exp(xp.take_along_axis(z, order, axis=1))
        room = 1.0 - (xp.cumsum(bounds, axis=1) - bounds)     # 1 - U_k
        rest = xp.flip(xp.cumsum(xp.flip(exps, axis=1), axis=1), axis=1)   # Q_k
        tiny = np.finfo(x.dtype).tiny
        log_scales = xp.where(room > 0, xp.log(xp.where(room > 0, room, 1.0))
                              - xp.log(xp.maximum(rest, tiny)), -xp.inf)   # log c_k
        below = ((keys < log_scales) | ~xp.take_along_axis(bounded, order, axis=1))
        k = xp.cumprod(below.astype(x.dtype), axis=1).sum(axis=1, keepdims=True)
        at = xp.minimum(k, x.shape[1] - 1).astype(order.dtype)
        log_scale = xp.take_along_axis(log_scales, at, axis=1)
        rank = xp.argsort(order, axis=1, kind="stable")        # each entry's place in order
        clamped = rank < k                                      # (the first k are)
        return xp.where(clamped, u, xp.exp(xp.where(clamped, 0.0, log_scale + z))), clamped

    def forward(self, xp, ins, attrs, n):
        return self.solve(xp, ins[0], ins[1])[0]

    def backward(self, xp, ins, out, g, attrs, n, needs):
        u = ins[1]
        _, clamped = self.solve(xp, ins[0], u)   # (the same entries as the forward pass)
        free = ~clamped
        mass = (u * clamped).sum(axis=1, keepdims=True)
        spread = (out * g * free).sum(axis=1, keepdims=True)
        room = 1.0 - mass
        dhat = xp.where(free.any(axis=1, keepdims=True),
                        spread / xp.where(room != 0, room, 1.0), 0.0)
        gx = xp.where(free, out * (g - dhat), 0.0) if needs[0] else None
        gu = xp.where(clamped, g - dhat, 0.0) if needs[1] else None
        return [gx, gu]


class RestrictedLogSoftmax(Op):
    """``log_softmax`` of a vector over some of its entries (``attrs``, the allowed ones);
    the others are ``-inf``. A transition parser scores every action but may take only
    those its state allows, and normalises over those (DyNet's ``log_softmax(x,
    restrict)``). Nodes with different allowed entries batch together: the kernel masks
    each row with its own."""

    name = "log_softmax_restricted"

    def infer_shape(self, shapes, attrs):
        _vector_only(self, shapes)
        if not attrs or not all(0 <= i < shapes[0][0] for i in attrs):
            raise self.error(f"the allowed entries must be at least one of the {shapes[0][0]} "
                             f"of the vector, got {list(attrs)}")
        return shapes[0]

    def _allowed(self, attrs, n: int, size: int):
        mask = np.zeros((n, size), dtype=bool)
        for row, allowed in enumerate(attrs):
            mask[row, list(allowed)] = True
        return backend.to_device_index(mask)  # (a boolean mask: kept as it is)

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        return _log_softmax(xp, xp.where(self._allowed(attrs, n, x.shape[1]), x, -xp.inf))

    def backward(self, xp, ins, out, g, attrs, n, needs):
        # only the allowed entries take part (exp(out) is 0 at the others, whose output is -inf)
        g = xp.where(self._allowed(attrs, n, g.shape[1]), g, 0.0)
        return [g - xp.exp(out) * g.sum(axis=1, keepdims=True)]


class PickNegLogSoftmax(Op):
    name = "pickneglogsoftmax"

    def infer_shape(self, shapes, attrs):
        _vector_only(self, shapes)
        return ()

    def memo_key(self, graph, args, attrs):
        return (self, graph.shapes[args[0]])  # the class index is checked by the constructor

    writes_output = True  # the losses are written straight into the batch's segment
    writes_gradients = True

    def forward(self, xp, ins, attrs, n, out=None):
        # -log softmax(x)[i] = log(sum(exp(x - top))) - (x[i] - top), top the maximum:
        # the picked score read from the shifted ones, top cancels (no pass adds it back)
        x = ins[0]
        shifted = x - x.max(axis=1, keepdims=True)
        picked = shifted.reshape(-1)[_picked_index(attrs, x.shape[1])]
        xp.exp(shifted, out=shifted)
        total = shifted.sum(axis=1)
        xp.log(total, out=total)
        return xp.subtract(total, picked, out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs, into=None):
        # g softmax(x), less g at the picked class (DyNet's order of operations), where
        # softmax(x) = exp(x - logsumexp(x)) and logsumexp(x) = loss + x[i] (the forward
        # pass's output gives it back without another pass over the scores)
        x = ins[0]
        picked = _picked_index(attrs, x.shape[1])
        lse = x.reshape(-1)[picked]
        lse += out
        probs = xp.subtract(x, lse[:, None], out=None if into is None else into[0])
        xp.exp(probs, out=probs)
        probs *= g[:, None]
        probs.reshape(-1)[picked] -= g
        return [probs]


def _picked_index(classes_of_nodes, classes: int):
    """The flat index ``row * classes + class`` of each node's class in a batch's ``(n,
    classes)`` scores (cheaper to read and write by than a row index and a column index)."""
    return backend.to_device_index(np.asarray(
        [row * classes + c for row, c in enumerate(classes_of_nodes)], dtype=np.int64))


class Hinge(Op):
    """``sum_{j != i} max(0, m - x[i] + x[j])`` of the scores ``x`` and the correct class
    ``i``: of a vector (a scalar), or of every column of a ``(classes, k)`` matrix (``k``
    losses). Attributes ``(margin, classes)``, one class per column, per node."""

    name = "hinge"

    def infer_shape(self, shapes, attrs):
        x = shapes[0]
        margin, classes = attrs
        if len(x) not in (1, 2) or len(classes) != (x[1] if len(x) == 2 else 1):
            raise self.error(f"needs a vector and one class, or a matrix and one class per "
                             f"column; got shape {x} and {len(classes)} classes")
        if any(not 0 <= c < x[0] for c in classes):
            raise IndexError(f"hinge: a class of {list(classes)} is out of range for {x[0]} scores")
        return x[1:]

    def memo_key(self, graph, args, attrs):
        return (self, graph.shapes[args[0]], attrs[1])  # the classes are checked per node

    def _terms(self, xp, x, attrs, n):
        """``(scores as (n, classes, k), correct-class mask, active margin terms)``."""
        scores = x.reshape(n, x.shape[1], -1)
        classes = backend.to_device_index(np.asarray([c for _, c in attrs], dtype=np.int64))
        correct = xp.arange(scores.shape[1]).reshape(1, -1, 1) == classes[:, None, :]
        margins = backend.to_device(np.asarray([m for m, _ in attrs])).reshape(n, 1, 1)
        picked = (scores * correct).sum(axis=1, keepdims=True)
        terms = xp.maximum(margins - picked + scores, 0.0) * ~correct
        return scores, correct, terms

    def forward(self, xp, ins, attrs, n):
        _, _, terms = self._terms(xp, ins[0], attrs, n)
        return terms.sum(axis=1).reshape((n,) + ins[0].shape[2:])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        scores, correct, terms = self._terms(xp, ins[0], attrs, n)
        active = (terms > 0).astype(scores.dtype)
        gk = g.reshape(n, 1, -1)
        grad = active * gk - correct * (active.sum(axis=1, keepdims=True) * gk)
        return [grad.reshape(ins[0].shape)]


class BinaryLogLoss(Op):
    """``-sum(y log x + (1 - y) log(1 - x))`` of probabilities ``x`` and targets ``y`` of one
    shape, a scalar. ``x`` is kept inside ``[tiny, 1 - 1e-7]`` so that a probability of
    exactly 0 or 1 costs a large finite loss, as in DyNet."""

    name = "binary_log_loss"
    arity = 2

    def infer_shape(self, shapes, attrs):
        if shapes[0] != shapes[1]:
            raise self.error(f"probabilities and targets must have one shape, got {shapes[0]} "
                             f"and {shapes[1]}")
        return ()

    def _clipped(self, xp, x):
        return xp.clip(x, np.finfo(x.dtype).tiny, 1.0 - 1e-7)

    def forward(self, xp, ins, attrs, n):
        x, y = self._clipped(xp, ins[0]), ins[1]
        terms = y * xp.log(x) + (1.0 - y) * xp.log1p(-x)
        return -terms.reshape(n, -1).sum(axis=1)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x, y = self._clipped(xp, ins[0]), ins[1]
        gk = g.reshape((n,) + (1,) * (x.ndim - 1))
        gx = gk * ((1.0 - y) / (1.0 - x) - y / x) if needs[0] else None
        gy = gk * (xp.log1p(-x) - xp.log(x)) if needs[1] else None
        return [gx, gy]


_SOFTMAX = register(Softmax())
_LOG_SOFTMAX = register(LogSoftmax())
_SPARSEMAX = register(Sparsemax())
_CONSTRAINED_SOFTMAX = register(ConstrainedSoftmax())
_RESTRICTED_LOG_SOFTMAX = register(RestrictedLogSoftmax())
_PNLS = register(PickNegLogSoftmax())
_HINGE = register(Hinge())
_BINARY_LOG_LOSS = register(BinaryLogLoss())


def softmax(x):
    """``exp(x) / sum(exp(x))`` over the first axis: probabilities that sum to 1 (of a
    vector, or of each column of a matrix)."""
    return build_memoized(_SOFTMAX, x, None)


def log_softmax(x, allowed=None):
    """``log(softmax(x))`` over the first axis, computed without overflow. ``allowed``: the
    entries of a vector the softmax runs over; the others are ``-inf``."""
    if allowed is None:
        return build_memoized(_LOG_SOFTMAX, x, None)
    if isinstance(allowed, numbers.Integral) or any(
            not isinstance(i, numbers.Integral) for i in allowed):
        raise TypeError(f"log_softmax: allowed must be a list of ints, got {allowed!r}")
    return build(_RESTRICTED_LOG_SOFTMAX, (x,), tuple(int(i) for i in allowed))


def sparsemax(x):
    """The sparsemax of ``x`` over the first axis (of a vector, or of each column of a
    matrix): probabilities that sum to 1, like softmax's, but exactly 0 for low scores."""
    return build(_SPARSEMAX, (x,))


def constrained_softmax(x, bounds):
    """The softmax of the scores ``x`` with no probability above its bound in ``bounds``
    (same shape): ``min(bounds, c * exp(x))``, ``c`` making it sum to 1, over the first
    axis (of a vector, or of each column of a matrix). Bounds that sum to less than 1 leave
    no room: the result is then the bounds."""
    return build(_CONSTRAINED_SOFTMAX, (x, bounds))


def pickneglogsoftmax(x, index):
    """``-log(softmax(x)[index])``: the cross-entropy loss of a score vector."""
    if type(index) is not int:
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"pickneglogsoftmax: index must be an int, got {type(index).__name__}")
        index = int(index)
    shape = shape_of(x) if isinstance(x, ExpressionBase) else getattr(x, "shape", None)
    if shape is not None and len(shape) == 1 and not 0 <= index < shape[0]:
        raise IndexError(f"pickneglogsoftmax: class {index} is out of range for {shape[0]} scores")
    return build_memoized(_PNLS, x, index)  # one loss per word: usually a memo lookup


def hinge(x, index, margin=1.0):
    """The multi-class hinge loss ``sum_{j != index} max(0, margin - x[index] + x[j])`` of a
    score vector ``x``; of a ``(classes, k)`` matrix, with ``index`` a list of ``k`` classes,
    the ``k`` losses of its columns."""
    classes = (index,) if isinstance(index, numbers.Integral) else tuple(index)
    if any(not isinstance(c, numbers.Integral) for c in classes):
        raise TypeError(f"hinge: classes must be ints, got {index!r}")
    return build(_HINGE, (x,), (float(margin), tuple(int(c) for c in classes)))


def binary_log_loss(x, y):
    """The binary cross-entropy ``-sum(y log x + (1 - y) log(1 - x))`` of probabilities
    ``x`` against targets ``y`` (same shape), a scalar."""
    return build(_BINARY_LOG_LOSS, (x, y))


__all__ = ["softmax", "log_softmax", "sparsemax", "constrained_softmax", "pickneglogsoftmax",
           "hinge", "binary_log_loss"]
