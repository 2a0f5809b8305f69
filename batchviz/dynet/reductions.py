"""DyNet's reductions: sums, means, maxima and norms over elements, dimensions and the
minibatch, and ``layer_norm``.

A reduction over a batched expression reduces each instance (DyNet's ``sum_elems`` of a
minibatch is a minibatch of sums); ``sum_batches`` and ``mean_batches`` reduce over the
instances, the batchviz node's last axis.
"""
from __future__ import annotations

import numpy as np

from ..ops import api as bv
from .arith import cdiv, cmult, sqrt
from .dims import dims_of, to_shape
from .expression import Expression, as_expression, sub


def _instance_axes(x: Expression) -> int:
    """How many axes of the batchviz node belong to one instance (not the minibatch)."""
    return len(x.x.shape) - (1 if x.bd > 1 else 0)


def _over(x: Expression, axes) -> Expression:
    """The sum of ``x`` over DyNet dimensions ``axes``, instance by instance (a scalar's
    ``(1,)`` may have no axis in the node: nothing to sum)."""
    axes = sorted({a for a in axes if a < _instance_axes(x)})
    if not axes:
        return x
    if x.bd == 1 and len(axes) == _instance_axes(x):
        return Expression(bv.sum_elems(x.x), 1)
    return Expression(bv.sum_axes(x.x, axes), x.bd)


def _size(x: Expression) -> int:
    return int(np.prod(dims_of(x)))


def sum_elems(x) -> Expression:
    """The sum of the elements of each instance."""
    x = as_expression(x, "sum_elems")
    return _over(x, range(_instance_axes(x)))


def mean_elems(x) -> Expression:
    x = as_expression(x, "mean_elems")
    return sum_elems(x) * (1.0 / _size(x))


def sum_dim(x, d, b: bool = False, n: int = 0) -> Expression:
    """The sum over the dimensions ``d`` (a list), and over the minibatch with ``b``."""
    x = as_expression(x, "sum_dim")
    d = [int(a) for a in d]
    if any(not 0 <= a < len(dims_of(x)) for a in d):
        raise ValueError(f"sum_dim: dimensions {d} out of range for {x.dim()}")
    total = _over(x, d)
    return sum_batches(total) if b else total


def mean_dim(x, d, b: bool, n: int = 0) -> Expression:
    """The mean over the dimensions ``d`` (and the minibatch with ``b``); ``n > 0``
    divides by ``n`` instead of the number of entries averaged."""
    x = as_expression(x, "mean_dim")
    count = int(np.prod([dims_of(x)[a] for a in d])) * (x.bd if b else 1)
    return sum_dim(x, d, b) * (1.0 / (n if n > 0 else count))


def sum_batches(x) -> Expression:
    """The sum of the instances of a minibatch."""
    x = as_expression(x, "sum_batches")
    if x.bd == 1:
        return x
    return Expression(bv.sum_axes(x.x, [len(x.x.shape) - 1]), 1)


def mean_batches(x) -> Expression:
    x = as_expression(x, "mean_batches")
    return sum_batches(x) * (1.0 / x.bd)


def _extreme(x, d: int, kind: str) -> Expression:
    x = as_expression(x, f"{kind}_dim")
    dims = dims_of(x)
    if not 0 <= d < len(dims):
        raise ValueError(f"{kind}_dim: dimension {d} out of range for {x.dim()}")
    node = to_shape(x, dims, x.bd)
    op = bv.max_axis if kind == "max" else bv.min_axis
    return Expression(op(node, d), x.bd)


def max_dim(x, d: int = 0) -> Expression:
    """The maximum along dimension ``d``."""
    return _extreme(x, d, "max")


def min_dim(x, d: int = 0) -> Expression:
    return _extreme(x, d, "min")


def logsumexp_dim(x, d: int = 0) -> Expression:
    """``log(sum(exp(x)))`` along dimension ``d``."""
    x = as_expression(x, "logsumexp_dim")
    dims = dims_of(x)
    if not 0 <= d < len(dims):
        raise ValueError(f"logsumexp_dim: dimension {d} out of range for {x.dim()}")
    return Expression(bv.logsumexp_axis(to_shape(x, dims, x.bd), d), x.bd)


def squared_norm(x) -> Expression:
    x = as_expression(x, "squared_norm")
    if x.bd == 1:
        return Expression(bv.squared_norm(x.x), 1)
    return sum_elems(Expression(bv.square(x.x), x.bd))


def l2_norm(x) -> Expression:
    return sqrt(squared_norm(x))


def dot_product(x, y) -> Expression:
    x, y = as_expression(x, "dot_product"), as_expression(y, "dot_product")
    if x.bd == y.bd == 1 and x.x.shape == y.x.shape:
        return Expression(bv.dot_product(x.x, y.x), 1)
    return sum_elems(cmult(x, y))


def squared_distance(x, y) -> Expression:
    x, y = as_expression(x, "squared_distance"), as_expression(y, "squared_distance")
    if x.bd == y.bd == 1 and x.x.shape == y.x.shape:
        return Expression(bv.squared_distance(x.x, y.x), 1)
    return squared_norm(sub(x, y))


def l1_distance(x, y) -> Expression:
    return sum_elems(Expression(bv.abs(sub(x, y).x), max(x.bd, y.bd)))


def std_elems(x) -> Expression:
    """The standard deviation of the elements of each instance (dividing by their number)."""
    x = as_expression(x, "std_elems")
    centered = sub(x, mean_elems(x))
    return sqrt(mean_elems(Expression(bv.square(centered.x), centered.bd)))


def layer_norm(x, g, b) -> Expression:
    """Layer normalization (Ba et al., 2016): ``g * (x - mean(x)) / std(x) + b``."""
    x = as_expression(x, "layer_norm")
    centered = sub(x, mean_elems(x))
    return cmult(g, cdiv(centered, std_elems(x) + 1e-8)) + b


__all__ = ["sum_elems", "mean_elems", "sum_dim", "mean_dim", "sum_batches", "mean_batches",
           "max_dim", "min_dim", "logsumexp_dim", "squared_norm", "l2_norm", "dot_product",
           "squared_distance", "l1_distance", "std_elems", "layer_norm"]
