"""DyNet's reductions: sums, means, standard deviations, moments, maxima (and ``argmax``)
and norms over elements, dimensions and the minibatch, running sums (``cumsum``,
``fold_rows``), and ``layer_norm``, ``weight_norm`` and ``trace_of_product``.

A reduction over a batched expression reduces each instance (DyNet's ``sum_elems`` of a
minibatch is a minibatch of sums); ``sum_batches`` and ``mean_batches`` reduce over the
instances, the batchviz node's last axis. The standard deviations, moments and running sums
are compositions of these and of element-wise ops and products, as DyNet defines them: their
gradients and their batching come with the ops they are made of.
"""
from __future__ import annotations

import numpy as np

from ..ops import api as bv
from .arith import cdiv, cmult, sqrt
from .dims import dims_of, layout, to_shape
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


def argmax(x, gradient_mode: str) -> Expression:
    """The one-hot vector of the maximum of a vector (of each instance's), 1 at the first of
    equal maxima. ``gradient_mode``: ``"zero_gradient"`` passes no gradient back,
    ``"straight_through_gradient"`` passes it as it comes (Bengio et al., 2013)."""
    x = as_expression(x, "argmax")
    if gradient_mode not in ("zero_gradient", "straight_through_gradient"):
        raise ValueError(f"argmax: unknown gradient mode {gradient_mode!r} (as in DyNet: "
                         "'zero_gradient' or 'straight_through_gradient')")
    dims = dims_of(x)
    if len(dims) != 1:
        raise ValueError(f"argmax: needs a vector, as in DyNet, got dimension {x.dim()}")
    return Expression(bv.argmax_axis(to_shape(x, dims, x.bd), 0,
                                     gradient_mode == "straight_through_gradient"), x.bd)


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


def std_dim(x, d, b: bool, n: int = 0) -> Expression:
    """The standard deviation over the dimensions ``d`` (and the minibatch with ``b``),
    dividing by the number of entries. ``n`` is accepted and ignored, as DyNet 2.1's Python
    ``std_dim`` ignores it (it passes 0 to DyNet's C++ whatever ``n`` is)."""
    x = as_expression(x, "std_dim")
    d = [int(a) for a in d]
    mean = mean_dim(x, d, b)
    kept = tuple(1 if a in d else size for a, size in enumerate(dims_of(x)))
    centered = sub(x, Expression(bv.reshape(mean.x, layout(kept, mean.bd)), mean.bd))
    return sqrt(mean_dim(Expression(bv.square(centered.x), centered.bd), d, b))


def std_batches(x) -> Expression:
    """The standard deviation of the instances of a minibatch, entry by entry."""
    return std_dim(as_expression(x, "std_batches"), [], True)


def _powered(x, r, who: str) -> Expression:
    """``x ** r`` for a moment of order ``r``, an integer from 1 on as in DyNet."""
    x = as_expression(x, who)
    if int(r) != r or r < 1:
        raise ValueError(f"{who}: the order of a moment must be an integer >= 1, got {r}")
    return x ** int(r)


def moment_elems(x, r: int) -> Expression:
    """The moment of order ``r``, ``mean(x ** r)``, of the elements of each instance."""
    return mean_elems(_powered(x, r, "moment_elems"))


def moment_dim(x, d, r: int, b: bool, n: int = 0) -> Expression:
    """The moment of order ``r`` over the dimensions ``d`` (and the minibatch with ``b``);
    ``n > 0`` divides by ``n`` instead of the number of entries (DyNet's masking)."""
    return mean_dim(_powered(x, r, "moment_dim"), d, b, n)


def moment_batches(x, r: int) -> Expression:
    """The moment of order ``r`` of the instances of a minibatch, entry by entry."""
    return mean_batches(_powered(x, r, "moment_batches"))


def cumsum(x, d: int = 0) -> Expression:
    """The running sums along dimension ``d`` (of each instance): the product with a constant
    lower-triangular matrix of ones, one node whose gradient is the running sum backwards;
    dimension ``d`` is moved first for it and back. Past the last dimension (a dimension of
    1) there is nothing to add, as in DyNet."""
    x = as_expression(x, "cumsum")
    dims = dims_of(x)
    if d < 0:
        raise ValueError(f"cumsum: dimension {d} is negative")
    if d >= len(dims) or dims[d] == 1:
        return x
    node = to_shape(x, dims, x.bd)
    order = [d] + [a for a in range(len(node.shape)) if a != d]
    first = bv.permute(node, order) if d else node
    ones = bv.input(np.tril(np.ones((dims[d], dims[d]))))
    if len(first.shape) <= 2:   # a vector, a matrix or a minibatch of vectors: one product
        sums = bv.matmul(ones, first)
    else:
        sums = bv.reshape(bv.matmul(ones, bv.reshape(first, (dims[d], -1))), first.shape)
    return Expression(bv.permute(sums, np.argsort(order).tolist()) if d else sums, x.bd)


def fold_rows(x, nrows: int = 2) -> Expression:
    """Every ``nrows`` consecutive rows of a matrix summed into one row: ``(rows / nrows,
    columns)``, a vector being one column, as DyNet computes it. A minibatch raises: DyNet
    2.1 folds its first instance only and drops the others."""
    x = as_expression(x, "fold_rows")
    dims = dims_of(x)
    if x.bd != 1:
        raise ValueError(f"fold_rows of a minibatch {x.dim()}: DyNet folds its first instance "
                         "only; fold each instance (dy.pick_batch_elem) instead")
    if len(dims) > 2 or nrows < 1 or dims[0] % nrows:
        raise ValueError(f"fold_rows: needs a vector or a matrix of a multiple of {nrows} "
                         f"rows, got {x.dim()}")
    columns = dims[1] if len(dims) == 2 else 1
    groups = bv.reshape(x.x, (dims[0] // nrows, nrows, columns))
    return Expression(bv.sum_axes(groups, [1]), 1)


def trace_of_product(x, y) -> Expression:
    """DyNet's ``trace_of_product``: ``Tr(x y^T)``, the sum of ``x * y`` entry by entry, of two
    matrices (or vectors) of the same dimensions, not minibatches (as in DyNet)."""
    x, y = as_expression(x, "trace_of_product"), as_expression(y, "trace_of_product")
    if x.bd != 1 or y.bd != 1 or dims_of(x) != dims_of(y) or len(dims_of(x)) > 2:
        raise ValueError(f"trace_of_product: needs two matrices of the same dimensions, not "
                         f"minibatches (as in DyNet), got {x.dim()} and {y.dim()}")
    return dot_product(x, y)


def weight_norm(w, g) -> Expression:
    """Weight normalization (Salimans & Kingma, 2016): ``g * w / ||w||``, the direction of
    ``w`` scaled by the gain ``g`` (one number)."""
    w, g = as_expression(w, "weight_norm"), as_expression(g, "weight_norm")
    if w.bd != 1 or g.bd != 1 or _size(g) != 1:
        raise ValueError(f"weight_norm: needs weights and a gain of one number, not "
                         f"minibatches (as in DyNet), got {w.dim()} and {g.dim()}")
    gain = g if len(dims_of(g)) == 1 else Expression(bv.reshape(g.x, ()), 1)
    return cmult(w, cdiv(gain, l2_norm(w)))


def layer_norm(x, g, b) -> Expression:
    """Layer normalization (Ba et al., 2016): ``g * (x - mean(x)) / std(x) + b``."""
    x = as_expression(x, "layer_norm")
    centered = sub(x, mean_elems(x))
    return cmult(g, cdiv(centered, std_elems(x) + 1e-8)) + b


__all__ = ["sum_elems", "mean_elems", "sum_dim", "mean_dim", "sum_batches", "mean_batches",
           "max_dim", "min_dim", "argmax", "logsumexp_dim", "squared_norm", "l2_norm",
           "dot_product", "squared_distance", "l1_distance", "std_elems", "std_dim",
           "std_batches", "moment_elems", "moment_dim", "moment_batches", "cumsum", "fold_rows",
           "trace_of_product", "weight_norm", "layer_norm"]
