"""DyNet's ops that pick, select, concatenate, transpose and reshape, and those that move
values into and out of the minibatch (``pick_batch``, ``concatenate_to_batch``,
``pick_batch_elem(s)``), and the gradient modifiers (``nobackprop``, ``flip_gradient``,
``scale_gradient``).

The minibatch is the last axis of a batched node (:mod:`.expression`), so picking the
``j``-th instance is a pick along that axis, and ``concatenate_to_batch`` a concatenation
along it.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..graph import shape_of
from ..ops import api as bv
# (the op built at every node, as a name of this module: not looked up in ``bv``)
from ..ops.structure import concatenate as bv_concatenate
from .dims import dims_of, layout, to_shape
from .expression import Expression, ExpressionCore, as_expression, expression_of, node_of


def pick(e, index=0, dim: int = 0) -> Expression:
    """Entry ``index`` along dimension ``dim`` (removed); a list of indices, one per
    instance, is :func:`pick_batch`."""
    e = as_expression(e, "pick")
    if not isinstance(index, numbers.Integral):
        return pick_batch(e, index, dim)
    dims = dims_of(e)
    if not 0 <= dim < len(dims):
        raise ValueError(f"pick: dimension {dim} out of range for {e.dim()}")
    if not 0 <= index < dims[dim]:
        raise IndexError(f"pick: index {index} out of range for dimension {dim} of {e.dim()}")
    if not e.x.shape:  # a scalar: its only entry
        return e
    return Expression(bv.pick_axis(e.x, int(index), dim), e.bd)


def pick_batch(e, indices, dim: int = 0) -> Expression:
    """Entry ``indices[j]`` along ``dim`` in instance ``j`` of a minibatch (of an
    unbatched ``e``: a minibatch of picks)."""
    e = as_expression(e, "pick_batch")
    indices = [int(i) for i in indices]
    dims = dims_of(e)
    if not 0 <= dim < len(dims) or any(not 0 <= i < dims[dim] for i in indices):
        raise IndexError(f"pick_batch: indices {indices} along dimension {dim} out of range "
                         f"for {e.dim()}")
    if e.bd == 1:
        x = e.x if e.x.shape else bv.reshape(e.x, (1,))
        picked = bv.select_axis(x, indices, dim)
        if len(indices) == 1:
            return Expression(bv.pick_axis(picked, 0, dim), 1)
        order = [a for a in range(len(dims)) if a != dim] + [dim]
        return Expression(bv.permute(picked, order) if order != sorted(order) else picked,
                          len(indices))
    if len(indices) != e.bd:
        raise ValueError(f"pick_batch: {len(indices)} indices for a minibatch of {e.bd}")
    return Expression(bv.pick_batch(to_shape(e, dims, e.bd), indices, dim), e.bd)


def pick_range(x, s: int, e: int, d: int = 0) -> Expression:
    """Entries ``s`` to ``e - 1`` along dimension ``d``."""
    x = as_expression(x, "pick_range")
    dims = dims_of(x)
    if not 0 <= d < len(dims) or not 0 <= s < e <= dims[d]:
        raise ValueError(f"pick_range: range {s}:{e} of dimension {d} is not inside {x.dim()}")
    node = to_shape(x, dims, x.bd)
    if d == 0:
        return Expression(bv.pick_range(node, int(s), int(e)), x.bd)
    return Expression(bv.select_axis(node, list(range(s, e)), d), x.bd)


pickrange = pick_range


def select_rows(x, rs) -> Expression:
    x = as_expression(x, "select_rows")
    return Expression(bv.select_axis(to_shape(x, dims_of(x), x.bd), list(rs), 0), x.bd)


def select_cols(x, cs) -> Expression:
    x = as_expression(x, "select_cols")
    dims = dims_of(x)
    if len(dims) != 2:
        dims = dims + (1,)
    return Expression(bv.select_axis(to_shape(x, dims, x.bd), list(cs), 1), x.bd)


def strided_select(x, strides, range_from, range_to) -> Expression:
    """Every ``strides[d]``-th entry from ``range_from[d]`` to ``range_to[d]`` along each
    dimension ``d`` (missing lists: the whole dimension)."""
    x = as_expression(x, "strided_select")
    dims = dims_of(x)
    index = tuple(slice(range_from[d] if d < len(range_from) else None,
                        range_to[d] if d < len(range_to) else None,
                        strides[d] if d < len(strides) else None) for d in range(len(dims)))
    return x[index]


def _aligned(xs, who: str):
    """The expressions broadcast to a common minibatch size, as ``(dims, bd)`` each."""
    xs = [as_expression(x, who) for x in xs]
    if not xs:
        raise ValueError(f"{who}: needs at least one expression")
    bd = 1
    for x in xs:
        e = x
        if e.bd != 1:
            if bd != 1 and e.bd != bd:
                raise ValueError(f"{who}: minibatch sizes {[x.bd for x in xs]} differ")
            bd = e.bd
    return xs, bd


def concatenate(xs, d: int = 0) -> Expression:
    """Concatenation along dimension ``d`` (vectors: ``d = 0``).

    As in DyNet, dimensions missing at the end count as 1: a ``(64, 1)`` matrix (a
    product of a matrix and a column) and a ``(32,)`` vector concatenate into ``(96, 1)``.
    The result has as many dimensions as the first argument (at least ``d + 1``)."""
    if d == 0 and type(xs) is list:  # a list of nodes of one minibatch size (a BiLSTM's
        nodes = _rows_of(xs)          # [f; b] at every word): no broadcasting to check
        if nodes is not None:
            first = xs[0]
            return expression_of(bv_concatenate(nodes), first.bd)
    return concatenate_aligned(xs, d)


def concatenate_aligned(xs, d: int) -> Expression:
    """:func:`concatenate` of any expressions: broadcast to one minibatch size, and missing
    dimensions added."""
    xs, bd = _aligned(list(xs), "concatenate")
    if bd == 1:
        columns = [x.x for x in xs]
        for node in columns:
            if len(shape_of(node)) != d:
                break
        else:  # vectors as columns: a new axis
            return Expression(bv.concatenate_axis(columns, d), 1)
    dims = [dims_of(x) for x in xs]
    ndim = d + 1
    for have in dims:
        if len(have) > ndim:
            ndim = len(have)
    nodes = [to_shape(x, have + (1,) * (ndim - len(have)), bd) for x, have in zip(xs, dims)]
    # (laid out alike: rows are joined by the concatenation of rows, which is memoized)
    joined = Expression(bv_concatenate(nodes) if d == 0 else bv.concatenate_axis(nodes, d), bd)
    kept = max(len(dims[0]), d + 1)  # the dimensions after these are all 1
    return joined if kept == ndim else reshape(joined, dims_of(joined)[:kept], bd)


def _rows_of(xs: list):
    """The batchviz nodes of ``xs`` when they are all expressions (a pending product is
    built, a parameter is itself) of the same minibatch size and the same dimensions after
    the first, else None. (A minibatch of scalars may be a ``(bd,)`` node, whose one axis is
    the minibatch: not rows to concatenate.) An attention model concatenates a context,
    a pending ``memory * weights``, with a looked-up row at every step."""
    if not xs or not isinstance(xs[0], ExpressionCore):
        return None
    first = xs[0]
    bd, nodes, tail = first.bd, [], None
    for x in xs:
        if not isinstance(x, ExpressionCore):
            return None
        e = x
        if e.bd != bd:
            return None
        node = node_of(e)
        shape = shape_of(node)
        if len(shape) <= (bd > 1):
            return None
        if tail is None:
            tail = shape[1:]
        elif shape[1:] != tail:
            return None
        nodes.append(node)
    return nodes


def concatenate_cols(xs) -> Expression:
    """The columns of the arguments side by side (a vector is one column)."""
    return concatenate(xs, 1)


def concatenate_to_batch(xs) -> Expression:
    """One minibatch of all the instances of the arguments (of one dimension), in order."""
    xs = [as_expression(x, "concatenate_to_batch") for x in xs]
    if not xs:
        raise ValueError("concatenate_to_batch: needs at least one expression")
    dims = dims_of(xs[0])
    if any(dims_of(x) != dims for x in xs):
        raise ValueError(f"concatenate_to_batch: dimensions differ: {[x.dim() for x in xs]}")
    if len(xs) == 1:
        return xs[0]
    nodes = [to_shape(x, dims, x.bd) for x in xs]
    return Expression(bv.concatenate_axis(nodes, len(dims)), sum(x.bd for x in xs))


def pick_batch_elem(x, v: int) -> Expression:
    """Instance ``v`` of a minibatch."""
    x = as_expression(x, "pick_batch_elem")
    if not 0 <= v < x.bd:
        raise IndexError(f"pick_batch_elem: instance {v} of a minibatch of {x.bd}")
    if x.bd == 1:
        return x
    dims = dims_of(x)
    return Expression(bv.pick_axis(to_shape(x, dims, x.bd), int(v), len(dims)), 1)


def pick_batch_elems(x, vs) -> Expression:
    """Instances ``vs`` of a minibatch, as a minibatch."""
    x = as_expression(x, "pick_batch_elems")
    vs = [int(v) for v in vs]
    if len(vs) == 1:
        return pick_batch_elem(x, vs[0])
    if any(not 0 <= v < x.bd for v in vs):
        raise IndexError(f"pick_batch_elems: instances {vs} of a minibatch of {x.bd}")
    dims = dims_of(x)
    return Expression(bv.select_axis(to_shape(x, dims, x.bd), vs, len(dims)), len(vs))


def transpose(x, dims=(1, 0)) -> Expression:
    """The dimensions in the order ``dims`` (a vector becomes a ``1 x n`` row)."""
    x = as_expression(x, "transpose")
    dims = list(dims)
    node = x.x
    if x.bd == 1 and dims == [1, 0] and 0 < len(shape_of(node)) <= 2:  # a vector or matrix
        return expression_of(bv.transpose(node), 1)
    have = dims_of(x)
    full = have + (1,) * (len(dims) - len(have))
    if sorted(dims) != list(range(len(full))):
        raise ValueError(f"transpose: {dims} is not an order of the dimensions of {x.dim()}")
    new = tuple([full[a] for a in dims])
    order = dims + ([len(dims)] if x.bd > 1 else [])
    return Expression(bv.reshape(bv.permute(to_shape(x, full, x.bd), order),
                                 layout(new, x.bd)), x.bd)


def reshape(x, d, batch_size: int = 1) -> Expression:
    """The values in dimension ``d`` (and minibatch ``batch_size``), in DyNet's
    column-major order."""
    x = as_expression(x, "reshape")
    # (a tuple, the usual, skips the slow ABC test)
    if type(d) is not tuple and isinstance(d, numbers.Integral):
        dims = (int(d),)
    else:
        dims = tuple([int(k) for k in d])
    have = dims_of(x)
    if math.prod(dims) * batch_size != math.prod(have) * x.bd:
        raise ValueError(f"reshape: cannot reshape {x.dim()} into ({dims}, {batch_size})")
    target = layout(dims, batch_size)
    source = layout(have, x.bd)
    if [k for k in target if k != 1] == [k for k in source if k != 1]:
        node = x.x
        return expression_of(bv.reshape(node, target) if shape_of(node) != target else node,
                             batch_size)
    return expression_of(bv.reshape_column_major(to_shape(x, have, x.bd), target), batch_size)


def nobackprop(x) -> Expression:
    """``x``, through which no gradient flows back."""
    return Expression(bv.nobackprop(as_expression(x, "nobackprop").x), x.bd)


def flip_gradient(x) -> Expression:
    """``x``, whose gradient changes sign on the way back."""
    return Expression(bv.flip_gradient(as_expression(x, "flip_gradient").x), x.bd)


def scale_gradient(x, lambd: float = 1.0) -> Expression:
    """``x``, whose gradient is multiplied by ``lambd`` on the way back."""
    return Expression(bv.scale_gradient(as_expression(x, "scale_gradient").x, lambd), x.bd)


__all__ = ["pick", "pick_batch", "pick_range", "pickrange", "select_rows", "select_cols",
           "strided_select", "concatenate", "concatenate_cols", "concatenate_to_batch",
           "pick_batch_elem", "pick_batch_elems", "transpose", "reshape", "nobackprop",
           "flip_gradient", "scale_gradient"]
