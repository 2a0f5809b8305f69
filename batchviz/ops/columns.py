"""Ops for *manual* batching: matrices whose columns are the instances of a minibatch.

The paper's baseline "Train-Batch-Manual" (§4.1) aggregates the inputs of all sentences
that share a time step into one matrix and runs the network on matrices. batchviz has no
hidden minibatch dimension, so manual batching is written with matrices of ``m`` columns,
one per instance, and these three ops (DyNet's names) fill the gaps that plain matrices
leave:

* ``lookup_batch(E, ids)``: the ``(dim, m)`` matrix whose column ``j`` is ``E[ids[j]]``;
* ``affine_batch([b, W1, X1, ...])``: ``W1 @ X1 + ...`` plus the bias vector ``b`` added to
  every column;
* ``pickneglogsoftmax_batch(X, labels)``: the summed loss ``sum_j -log softmax(X[:, j])[labels[j]]``;
* ``pickneglogsoftmax_columns(X, labels)``: the ``m`` losses, one per column (DyNet's
  ``pickneglogsoftmax_batch``, which keeps one loss per instance).

They are ordinary ops with signatures, so automatic batching still applies on top of manual
batching (the paper's rows "manual + depth/agenda": the lookups and losses of all time steps
batch together).
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..parameters import LookupBase
from .base import Op, register, shared_node
from ._build import build, expression_list
from .gradients import SparseRows
from .linalg import AffineArguments, _mm_shape


class LookupBatch(Op):
    """Columns ``E[ids[0]], ..., E[ids[m-1]]`` of a lookup table, as one ``(dim, m)`` matrix."""

    name = "lookup_batch"

    def infer_shape(self, shapes, attrs):
        return (shapes[0][1], len(attrs))

    def signature(self, graph, args, attrs, shape):
        return ("lookup_batch", shared_node(args[0]), shape), (0,)

    def memo_key(self, graph, args, attrs):
        return (self, args[0], len(attrs))  # the indices are checked by lookup_batch()

    def forward(self, xp, ins, attrs, n):
        rows = backend.to_device_index(np.asarray(attrs, dtype=np.int64))  # (n, m)
        return ins[0][rows].transpose(0, 2, 1)

    def backward(self, xp, ins, out, gout, attrs, n, needs):
        rows = backend.to_device_index(np.asarray(attrs, dtype=np.int64).reshape(-1))
        dim = ins[0].shape[1]
        return [SparseRows(rows, gout.transpose(0, 2, 1).reshape(-1, dim))]


class AffineBatch(AffineArguments):
    """``b + W1 @ X1 + W2 @ X2 + ...`` with the vector ``b`` added to every column."""

    name = "affine_batch"
    cheap = False
    arity = None

    def infer_shape(self, shapes, attrs):
        self.check_terms(shapes, vector_bias=True)
        b = shapes[0]
        out = None
        for i in range(1, len(shapes), 2):
            W, X = shapes[i], shapes[i + 1]
            if len(X) != 2:
                raise self.error(f"X{i // 2 + 1} must be a matrix with one column per instance, "
                                 f"got shape {X}")
            term = _mm_shape(self, W, X)
            if term[0] != b[0] or (out is not None and term != out):
                raise self.error(f"term {i // 2 + 1} (W{W} @ X{X}) has shape {term}, which does "
                                 f"not match the bias {b} or the other terms")
            out = term
        return out

    #: the products are formed in the batch's own segment: a language model's output
    #: layer is megabytes per time step, not to be made elsewhere and copied in
    writes_output = True

    def forward(self, xp, ins, attrs, n, out=None):
        total = xp.matmul(ins[1], ins[2], out=out)  # (n, rows, m), W shared or not
        for i in range(3, len(ins), 2):
            total += xp.matmul(ins[i], ins[i + 1])
        total += ins[0][..., None]
        return total

    def backward(self, xp, ins, out, g, attrs, n, needs):
        grads = [None] * len(ins)
        if needs[0]:
            grads[0] = g.sum(axis=(0, 2)) if ins[0].ndim == 1 else g.sum(axis=2)
        return self.products_backward(xp, ins, g, needs, grads)


class PickNegLogSoftmaxBatch(Op):
    """``sum_j -log softmax(X[:, j])[labels[j]]`` over the columns of a ``(classes, m)`` matrix."""

    name = "pickneglogsoftmax_batch"

    def infer_shape(self, shapes, attrs):
        X = shapes[0]
        if len(X) != 2:
            raise self.error(f"needs a (classes, m) matrix, got shape {X}")
        if len(attrs) != X[1]:
            raise self.error(f"{len(attrs)} labels for a matrix of {X[1]} columns")
        return ()  # the labels' range is checked by pickneglogsoftmax_batch()

    def memo_key(self, graph, args, attrs):
        return (self, graph.shapes[args[0]], len(attrs))

    def _picked(self, xp, attrs, n, m):
        labels = backend.to_device_index(np.asarray(attrs, dtype=np.int64))  # (n, m)
        return xp.arange(n)[:, None], labels, xp.arange(m)[None, :]

    def forward(self, xp, ins, attrs, n):
        X = ins[0]  # (n, classes, m): the softmax runs over axis 1
        i, lab, j = self._picked(xp, attrs, n, X.shape[2])
        return (_logsumexp_columns(xp, X) - X[i, lab, j]).sum(axis=1)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        X = ins[0]
        lse = _logsumexp_columns(xp, X)
        return [_softmax_gradient(xp, X, lse, self._picked(xp, attrs, n, X.shape[2]),
                                  g[:, None])]


class PickNegLogSoftmaxColumns(PickNegLogSoftmaxBatch):
    """The ``m`` losses ``-log softmax(X[:, j])[labels[j]]`` of the columns of ``X``."""

    name = "pickneglogsoftmax_columns"

    def infer_shape(self, shapes, attrs):
        super().infer_shape(shapes, attrs)
        return (shapes[0][1],)

    def forward(self, xp, ins, attrs, n):
        X = ins[0]
        i, lab, j = self._picked(xp, attrs, n, X.shape[2])
        return _logsumexp_columns(xp, X) - X[i, lab, j]

    def backward(self, xp, ins, out, g, attrs, n, needs):
        X = ins[0]
        picked = self._picked(xp, attrs, n, X.shape[2])
        lse = out + X[picked]                             # logsumexp = loss + picked score
        return [_softmax_gradient(xp, X, lse, picked, g)]


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


def _logsumexp_columns(xp, X):
    """``log(sum(exp(X)))`` over axis 1 of ``(n, classes, m)`` scores, as ``(n, m)``.

    On the CPU node by node: one node's ``(classes, m)`` block (a language model's scores
    of a time step, a megabyte) stays in the cache through its maximum, exponentials and
    sum, where the whole array would go through memory for each of them, and no
    temporary of the array's size is made (at tens of megabytes, every one is a fresh
    allocation from the operating system, whose pages fault in as they are written)."""
    if xp is not np:
        return logsumexp(xp, X)[:, 0, :]
    out = np.empty((X.shape[0], X.shape[2]), dtype=X.dtype)
    scratch = np.empty(X.shape[1:], dtype=X.dtype)
    for k, block in enumerate(X):
        top = block.max(axis=0)
        np.subtract(block, top, out=scratch)
        np.exp(scratch, out=scratch)
        total = scratch.sum(axis=0)
        np.log(total, out=total)
        np.add(total, top, out=out[k])
    return out


def _softmax_gradient(xp, X, lse, picked, scale):
    """``(softmax(X) - one_hot(labels)) * scale``: the gradient of the picked losses of
    ``(n, classes, m)`` scores, from their log-sum-exp ``lse`` (``(n, m)``), the picked
    entries ``picked`` (``X[picked]``) and each node's (``(n, 1)``) or column's (``(n,
    m)``) gradient ``scale``. On the CPU node by node, for the reason
    :func:`_logsumexp_columns` gives: each block is read once, from memory, and written
    once, where the array-wide formula would go through memory four times."""
    if xp is not np:
        probs = X - lse[:, None, :]
        xp.exp(probs, out=probs)
        probs[picked] -= 1.0
        probs *= scale[:, None, :]
        return probs
    probs = np.empty_like(X)
    labels, columns = picked[1], picked[2][0]
    for k, block in enumerate(probs):
        np.subtract(X[k], lse[k], out=block)
        np.exp(block, out=block)
        block[labels[k], columns] -= 1.0
        block *= scale[k]
    return probs


_LOOKUP_BATCH = register(LookupBatch())
_AFFINE_BATCH = register(AffineBatch())
_PNLS_BATCH = register(PickNegLogSoftmaxBatch())
_PNLS_COLUMNS = register(PickNegLogSoftmaxColumns())


def _int_list(values, what):
    out = []
    for v in values:
        if not isinstance(v, numbers.Integral):
            raise TypeError(f"{what}: indices must be ints, got {type(v).__name__}")
        out.append(int(v))
    if not out:
        raise ValueError(f"{what}: needs at least one index")
    return tuple(out)


def lookup_batch(table, indices):
    """The ``(dim, m)`` matrix whose column ``j`` is row ``indices[j]`` of ``table``."""
    if not isinstance(table, LookupBase):
        raise TypeError(f"lookup_batch needs lookup parameters, got {type(table).__name__}")
    rows = _int_list(indices, "lookup_batch")
    bad = [r for r in rows if not 0 <= r < table.shape[0]]
    if bad:
        raise IndexError(f"lookup_batch: index {bad[0]} is out of range for {table.name}, "
                         f"which has {table.shape[0]} rows")
    return build(_LOOKUP_BATCH, (table,), rows)


def affine_batch(terms):
    """``b + W1 @ X1 + W2 @ X2 + ...`` from ``[b, W1, X1, ...]``, the bias vector ``b`` added
    to every column."""
    return build(_AFFINE_BATCH, expression_list(terms, "affine_batch"))


def _class_labels(X, labels, name: str) -> list:
    """``labels`` as a list of ints, each a row of ``X`` (classes x m) when its shape is known."""
    labels = _int_list(labels, name)
    classes = X.shape[0] if len(X.shape) == 2 else None
    bad = [c for c in labels if classes is not None and not 0 <= c < classes]
    if bad:
        raise IndexError(f"{name}: class {bad[0]} is out of range for {classes} scores")
    return labels


def pickneglogsoftmax_batch(X, labels):
    """Summed cross-entropy of the columns of ``X`` (classes x m) against ``labels`` (m ints)."""
    return build(_PNLS_BATCH, (X,), _class_labels(X, labels, "pickneglogsoftmax_batch"))


def pickneglogsoftmax_columns(X, labels):
    """The cross-entropy of every column of ``X`` (classes x m) against ``labels`` (m
    ints): a vector of ``m`` losses."""
    return build(_PNLS_COLUMNS, (X,), _class_labels(X, labels, "pickneglogsoftmax_columns"))


__all__ = ["lookup_batch", "affine_batch", "pickneglogsoftmax_batch", "pickneglogsoftmax_columns"]
