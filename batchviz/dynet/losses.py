"""DyNet's softmax, losses and noise: ``softmax``, ``log_softmax``, ``sparsemax``,
``constrained_softmax``,
``pickneglogsoftmax`` (and ``_batch``, one loss per instance), ``hinge`` (and ``_batch``),
``binary_log_loss``, ``huber_distance``, ``pairwise_rank_loss``, ``poisson_loss``,
``dropout`` (and ``_dim``, ``_batch``, ``block_dropout``) and ``noise``. The last three
losses are compositions of element-wise ops and sums, with DyNet's definitions.

Dropout masks are drawn from the seeded generator of :mod:`.graph` (DyNet's draws differ;
the distribution is the same): ``dropout`` is batchviz's reproducible dropout op, seeded per
node; the other kinds are a random 0/1 mask input, broadcast and multiplied in.
"""
from __future__ import annotations

import math
import numbers

from ..graph import shape_of
from ..ops import api as bv
# (the op built at every node, as a name of this module: not looked up in ``bv``)
from ..ops.losses import pickneglogsoftmax as bv_pickneglogsoftmax
from . import graph as _graph
from .arith import bmin, cmult, exp, rectify
from .dims import dims_of, layout, to_shape
from .expression import Expression, add, as_expression, expression_of, node_of, sub
from .inputs import random_bernoulli, random_normal
from .reductions import sum_elems
from .shaping import transpose


def softmax(x, d: int = 0) -> Expression:
    """``exp(x) / sum(exp(x))`` along dimension ``d`` (0: each column; 1: each row)."""
    x = as_expression(x, "softmax")
    if d == 1:
        return transpose(softmax(transpose(x), 0))
    if d != 0:
        raise NotImplementedError(f"softmax(x, d={d}): batchviz.dynet normalises along "
                                  "dimension 0 or 1; transpose the expression first")
    node = x.x
    return expression_of(bv.softmax(node if shape_of(node) else bv.reshape(node, (1,))), x.bd)


def log_softmax(x, restrict=None) -> Expression:
    """``log(softmax(x))`` of each column. ``restrict``: a list of the entries of a vector
    the softmax runs over, as in DyNet; the others are ``-inf`` (a parser's actions that
    are not allowed in its state)."""
    x = as_expression(x, "log_softmax")
    node = x.x if x.x.shape else bv.reshape(x.x, (1,))
    if restrict is None:
        return Expression(bv.log_softmax(node), x.bd)
    if x.bd != 1 or len(dims_of(x)) != 1:
        raise ValueError(f"log_softmax(x, restrict=...) needs a vector, as in DyNet; got "
                         f"dimension {x.dim()}")
    return Expression(bv.log_softmax(node, allowed=restrict), 1)


def sparsemax(x) -> Expression:
    """The sparsemax of a vector (or a ``(d, 1)`` column), as DyNet's: the probabilities
    nearest to ``x``, exactly 0 for low scores (:func:`batchviz.sparsemax`)."""
    x = as_expression(x, "sparsemax")
    if x.bd != 1:
        raise NotImplementedError(f"sparsemax of a minibatch (dimension {x.dim()}): DyNet "
                                  "computes it for one vector; build one expression per "
                                  "instance and let autobatching batch them "
                                  "(--dynet-autobatch 1)")
    dims = dims_of(x)
    if dims[1:] not in ((), (1,)):
        raise ValueError(f"sparsemax: needs a vector, as DyNet's; got dimension {x.dim()}")
    return Expression(bv.sparsemax(to_shape(x, dims, 1)), 1)


def constrained_softmax(x, y) -> Expression:
    """The softmax of the scores ``x`` with no probability above its bound in ``y``: the
    entries that a softmax would put above their bounds are held at them, and the others
    share what is left in the softmax's proportions (:func:`batchviz.constrained_softmax`).
    Both are vectors (or ``(d, 1)`` columns) of one size, as DyNet's; the result has the
    dimension of ``x``. Bounds that sum to less than 1 leave no room: the result is then
    the bounds, as DyNet's. Gradients reach both the scores and the bounds, as in DyNet;
    unlike DyNet's, it also runs on a GPU."""
    x = as_expression(x, "constrained_softmax")
    y = as_expression(y, "constrained_softmax")
    if x.bd != 1 or y.bd != 1:
        raise NotImplementedError(f"constrained_softmax of a minibatch (dimensions {x.dim()} "
                                  f"and {y.dim()}): DyNet computes it for one vector; build "
                                  "one expression per instance and let autobatching batch "
                                  "them (--dynet-autobatch 1)")
    dims_x, dims_y = dims_of(x), dims_of(y)
    if dims_x[1:] not in ((), (1,)) or dims_y[1:] not in ((), (1,)) or dims_x[0] != dims_y[0]:
        raise ValueError(f"constrained_softmax: needs scores and bounds that are vectors of "
                         f"one size, as DyNet's; got dimensions {x.dim()} and {y.dim()}")
    scores = to_shape(x, dims_x, 1)
    bounds = to_shape(y, dims_y, 1)
    if bounds.shape != scores.shape:   # a vector and a (d, 1) column
        bounds = bv.reshape(bounds, scores.shape)
    return Expression(bv.constrained_softmax(scores, bounds), 1)


def pickneglogsoftmax(x, v) -> Expression:
    """``-log(softmax(x)[v])``: the cross-entropy loss of the scores ``x`` for class ``v``
    (a list of classes, one per instance, for a minibatch: :func:`pickneglogsoftmax_batch`)."""
    if type(v) is not int and not isinstance(v, numbers.Integral):
        return pickneglogsoftmax_batch(x, v)
    e = as_expression(x, "pickneglogsoftmax")
    if e.bd != 1:
        raise ValueError(f"pickneglogsoftmax was called with a single class ({v}) for a "
                         f"minibatch of {e.bd}; pass a list of {e.bd} classes")
    return expression_of(bv_pickneglogsoftmax(_scores(e, "pickneglogsoftmax"), v), 1)


def _scores(x: Expression, who: str):
    """The batchviz node of the scores ``x``: a vector per instance, ``(n,)`` or ``(n,
    bd)``. A column ``(n, 1)`` is a vector, as in DyNet (a network that reshapes its input
    to a column computes its scores as one)."""
    node = node_of(x)
    if len(shape_of(node)) == (1 if x.bd == 1 else 2):  # the usual case: a vector per instance
        return node
    return _scores_reshaped(x, who)


def _scores_reshaped(x: Expression, who: str):
    """:func:`_scores` of scores that are not a vector per instance."""
    node = x.x
    dims = dims_of(x)
    if len(dims) == 2 and dims[1] == 1:
        return bv.reshape(node, layout(dims[:1], x.bd))
    if len(dims) != 1:
        raise ValueError(f"{who}: the scores must be a vector per instance, got dimension "
                         f"{x.dim()}")
    return to_shape(x, dims, x.bd)    # DyNet's (1,) as a node of shape ()


def pickneglogsoftmax_batch(x, vs) -> Expression:
    """One cross-entropy loss per instance of the minibatch ``x``, ``vs[j]`` the class of
    instance ``j``: a minibatch of losses (sum them with ``dy.sum_batches``)."""
    x = as_expression(x, "pickneglogsoftmax_batch")
    vs = [int(v) for v in vs]
    if x.bd == 1 and len(vs) == 1:
        return pickneglogsoftmax(x, vs[0])
    if len(vs) != x.bd:
        raise ValueError(f"pickneglogsoftmax_batch: {len(vs)} classes for scores of "
                         f"dimension {x.dim()} (one vector of scores per instance)")
    return Expression(bv.pickneglogsoftmax_columns(
        _scores(x, "pickneglogsoftmax_batch"), vs), x.bd)


def hinge(x, index, m: float = 1.0) -> Expression:
    """The multi-class hinge loss ``sum_{j != index} max(0, m - x[index] + x[j])``."""
    if not isinstance(index, numbers.Integral):
        return hinge_batch(x, index, m)
    x = as_expression(x, "hinge")
    if x.bd != 1:
        raise ValueError(f"hinge was passed a single index for a minibatch of {x.bd}; use "
                         "hinge_batch with one index per instance")
    return Expression(bv.hinge(x.x, int(index), m), 1)


def hinge_batch(x, indices, m: float = 1.0) -> Expression:
    """One hinge loss per instance of the minibatch ``x``."""
    x = as_expression(x, "hinge_batch")
    indices = [int(i) for i in indices]
    if x.bd == 1 and len(indices) == 1:
        return hinge(x, indices[0], m)
    if len(indices) != x.bd:
        raise ValueError(f"hinge_batch: {len(indices)} indices for a minibatch of {x.bd}")
    return Expression(bv.hinge(x.x, indices, m), x.bd)


def hinge_dim(x, indices, d: int = 0, m: float = 1.0) -> Expression:
    """The hinge loss of every column (``d = 0``; of every row, ``d = 1``) of a matrix,
    ``indices[j]`` the right row of column ``j`` (the right column of row ``j``): a vector
    of losses, as DyNet's ``hinge_dim``."""
    x = as_expression(x, "hinge_dim")
    dims = dims_of(x)
    if x.bd != 1 or len(dims) != 2 or d not in (0, 1):
        raise ValueError(f"hinge_dim needs a matrix (not a minibatch) and d = 0 or 1; got "
                         f"dimension {x.dim()} and d = {d}")
    indices = [int(i) for i in indices]
    if len(indices) != dims[1 - d]:
        raise ValueError(f"hinge_dim: {len(indices)} indices for the {dims[1 - d]} "
                         f"{'columns' if d == 0 else 'rows'} of {x.dim()}")
    scores = x.x if d == 0 else bv.transpose(x.x)
    return Expression(bv.hinge(scores, indices, m), 1)


def binary_log_loss(x, y) -> Expression:
    """``-sum(y log x + (1 - y) log(1 - x))`` of probabilities ``x`` and targets ``y``."""
    x, y = as_expression(x, "binary_log_loss"), as_expression(y, "binary_log_loss")
    if x.bd != 1 or y.bd != 1:
        raise ValueError("binary_log_loss does not support minibatches (as in DyNet); pick "
                         "the instances with dy.pick_batch_elem first")
    if dims_of(x) != dims_of(y):
        raise ValueError(f"binary_log_loss: dimensions {x.dim()} and {y.dim()} differ")
    ynode = y.x if y.x.shape == x.x.shape else bv.reshape(y.x, x.x.shape)
    return Expression(bv.binary_log_loss(x.x, ynode), 1)


def huber_distance(x, y, c: float = 1.345) -> Expression:
    """The Huber distance ``sum_i L_c(x_i - y_i)``: ``a^2 / 2`` where ``|a| <= c``, ``c |a| -
    c^2 / 2`` beyond, of two expressions of the same dimensions (not minibatches, as in
    DyNet). Both branches are ``q (|a| - q / 2)`` with ``q = min(|a|, c)``, whose slope is
    ``a`` and then ``c sign(a)``."""
    x, y = as_expression(x, "huber_distance"), as_expression(y, "huber_distance")
    if x.bd != 1 or y.bd != 1 or dims_of(x) != dims_of(y):
        raise ValueError(f"huber_distance: needs two expressions of the same dimensions, not "
                         f"minibatches (as in DyNet), got {x.dim()} and {y.dim()}")
    a = Expression(bv.abs(sub(x, y).x), 1)
    q = bmin(a, Expression(bv.input(float(c)), 1))
    return sum_elems(cmult(q, a - q * 0.5))


def pairwise_rank_loss(x, y, m: float = 1.0) -> Expression:
    """``max(0, m - x_i + y_i)`` of each entry of two numbers or rows ``(1, n)`` of the same
    dimensions (minibatches of the same size, or none): one loss per entry, as DyNet
    computes it (its docstring's sum over ``i`` is not taken)."""
    x, y = as_expression(x, "pairwise_rank_loss"), as_expression(y, "pairwise_rank_loss")
    dims = dims_of(x)
    if x.dim() != y.dim() or dims[0] != 1 or len(dims) > 2:
        raise ValueError(f"pairwise_rank_loss: needs two numbers or rows (1, n) of the same "
                         f"dimensions and minibatch size, got {x.dim()} and {y.dim()}")
    return rectify(sub(y, x) + m)


def poisson_loss(log_lambda, x: int) -> Expression:
    """``-log P(x)`` of a count ``x`` under a Poisson distribution of mean ``exp(log_lambda)``
    (one number): ``exp(log_lambda) - x log_lambda + log(x!)``, ``log(x!)`` a constant."""
    log_lambda = as_expression(log_lambda, "poisson_loss")
    if log_lambda.bd != 1 or math.prod(dims_of(log_lambda)) != 1:
        raise ValueError(f"poisson_loss: log_lambda must be one number, not a minibatch (as "
                         f"in DyNet), got {log_lambda.dim()}")
    if int(x) != x or x < 0:
        raise ValueError(f"poisson_loss: the count must be an integer >= 0, got {x}")
    return exp(log_lambda) - log_lambda * float(x) + math.lgamma(int(x) + 1.0)


def dropout(x, p: float) -> Expression:
    """Each value set to 0 with probability ``p``, the others scaled by ``1 / (1 - p)``."""
    x = as_expression(x, "dropout")
    if p == 0:
        return x
    seed = int(_graph.rng().integers(0, 2**63))
    return Expression(bv.dropout(x.x, p, seed=seed), x.bd)


def _masked(x: Expression, p: float, mask_dims, who: str) -> Expression:
    """``x`` times a 0/``1/(1-p)`` mask of ``mask_dims`` (broadcast over ``x``)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{who}: p must be in [0, 1), got {p}")
    if p == 0:
        return x
    return cmult(x, random_bernoulli(mask_dims[0], 1.0 - p, 1.0 / (1.0 - p), mask_dims[1]))


def dropout_dim(x, d: int, p: float) -> Expression:
    """Dropout of whole slices: one decision per entry of every dimension but ``d``."""
    x = as_expression(x, "dropout_dim")
    dims = list(dims_of(x))
    dims[d] = 1
    return _masked(x, p, (tuple(dims), x.bd), "dropout_dim")


def dropout_batch(x, p: float) -> Expression:
    """Dropout of whole instances of a minibatch."""
    x = as_expression(x, "dropout_batch")
    return _masked(x, p, ((1,), x.bd), "dropout_batch")


def block_dropout(x, p: float) -> Expression:
    """All of ``x`` set to 0 with probability ``p`` (else scaled by ``1 / (1 - p)``)."""
    x = as_expression(x, "block_dropout")
    return _masked(x, p, ((1,), 1), "block_dropout")


def noise(x, stddev: float) -> Expression:
    """``x`` plus Gaussian noise of standard deviation ``stddev``."""
    x = as_expression(x, "noise")
    return add(x, random_normal(dims_of(x), 0.0, stddev, x.bd))


__all__ = ["softmax", "log_softmax", "sparsemax", "constrained_softmax", "pickneglogsoftmax",
           "pickneglogsoftmax_batch",
           "hinge", "hinge_batch", "hinge_dim", "binary_log_loss", "huber_distance",
           "pairwise_rank_loss", "poisson_loss", "dropout", "dropout_dim",
           "dropout_batch", "block_dropout", "noise"]
