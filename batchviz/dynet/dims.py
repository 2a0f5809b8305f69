"""DyNet's dimensions over batchviz shapes, and the batchviz nodes that lay a value out as
DyNet sees it.

A DyNet value of dimension ``dims`` and minibatch ``bd`` is a batchviz node of shape
``dims + (bd,)`` (``dims`` alone when ``bd`` is 1); DyNet's scalar ``(1,)`` may also be a
node of shape ``()`` (``(bd,)`` batched). These functions take anything with ``x`` (the
node, or a parameter) and ``bd``, and return dimensions or batchviz nodes.
"""
from __future__ import annotations

from ..errors import ShapeError
from ..graph import shape_of
from ..ops import api as bv
from ..sourcelines import user_frame, where_text


def dims_error(who: str, message: str) -> ShapeError:
    """The error of arguments whose dimensions ``who`` cannot combine: a
    :class:`~batchviz.ShapeError`, as batchviz's own ops raise, which is a ``ValueError``,
    as DyNet raises; it names the user's line, since DyNet programs build expressions
    in helpers and loops where the traceback alone is long."""
    where = user_frame()
    at = f" (at {where_text(f'{where[0]}:{where[1]}')})" if where is not None else ""
    return ShapeError(f"{who}: {message}{at}")


def dims_of(e) -> tuple:
    """DyNet's dims of ``e`` (without the batch): its batchviz shape, less the last axis
    when batched; a scalar is ``(1,)``."""
    shape = shape_of(e.x)
    if e.bd > 1:
        shape = shape[:-1]
    return shape if shape else (1,)


def full_shape(e) -> tuple:
    """DyNet's ``npvalue()`` shape: the dims, and the batch last when batched."""
    dims = dims_of(e)
    return dims + (e.bd,) if e.bd > 1 else dims


def layout(dims, bd: int) -> tuple:
    """The batchviz shape of a DyNet value of ``dims`` and batch ``bd``."""
    return tuple(dims) + ((bd,) if bd > 1 else ())


def combine_dims(first: tuple, second: tuple, who: str, right_only: bool = False) -> tuple:
    """DyNet's broadcasting of two ``(dims, batch)`` pairs of an element-wise op's
    arguments: the result's; every dimension (and the batch) must match or be 1 (for
    ``cdiv``, 1 on the right only)."""
    (da, ba), (db, bb) = first, second
    common = min(len(da), len(db))
    for i in range(common):
        x, y = da[i], db[i]
        if x != y and not (y == 1 if right_only else min(x, y) == 1):
            raise dims_error(who, f"dimensions {first} and {second} do not match: dimension "
                                  f"{i} is {x} and {y}, and must match or be 1")
    if ba != bb and not (bb == 1 if right_only else min(ba, bb) == 1):
        raise dims_error(who, f"batch sizes of {first} and {second} must match or be 1")
    longer = da if len(da) >= len(db) else db
    dims = tuple([max(da[i], db[i]) for i in range(common)]) + longer[common:]
    return dims, max(ba, bb)


def to_shape(e, dims: tuple, bd: int):
    """The batchviz node of ``e`` laid out as a value of ``dims`` and batch ``bd`` (which
    ``e``'s dims and batch broadcast to): ``e.x`` itself when it already is one, else a
    ``broadcast`` node (a vector repeated along the columns, one instance repeated over the
    batch), or a ``reshape`` node where nothing is repeated (a vector seen as a column, a
    ``()`` scalar seen as ``(1,)``)."""
    target = layout(dims, bd)
    x = e.x
    if shape_of(x) == target:
        return x
    have = dims_of(e)
    mine = have + (1,) * (len(dims) - len(have))
    view = layout(mine, e.bd) if e.bd > 1 else mine + ((1,) if bd > 1 else ())
    return bv.reshape(x, target) if view == target else bv.broadcast(x, view, target)


def as_matrix(e):
    """The batchviz node of an unbatched left factor as a matrix (a vector is one column)."""
    shape = e.x.shape
    if len(shape) == 2:
        return e.x
    return bv.reshape(e.x, (shape[0] if shape else 1, 1))


def products_per_instance(a, b, da: tuple, db: tuple, bd: int):
    """The node of ``a * b`` for a minibatch of left factors (``((r, c), bd)``; of right
    factors too, or one for all): ``sum_j A[:, j] * X[j, :]`` of every instance, as
    element-wise products of ``(r, c, k, bd)`` broadcasts summed over ``c``. It makes the
    whole ``r x c x k`` block of products per instance: DyNet programs use it for small
    factors (a masked loss is a minibatch of numbers times another)."""
    r, c = da[0], (da[1] if len(da) == 2 else 1)
    k = db[1] if len(db) == 2 else 1
    target = (r, c, k, bd)
    products = bv.cmult(bv.broadcast(a.x, (r, c, 1, a.bd), target),
                        bv.broadcast(b.x, (1, c, k, b.bd), target))
    return bv.reshape(bv.sum_axes(products, [1]), (r, bd) if len(db) == 1 else (r, k, bd))


def selected_rows(e, index) -> tuple:
    """``(node, batch)`` of DyNet's ``x[index]`` for a slice or a tuple of slices (one per
    dimension, and one more for the instances of a minibatch): the entries kept along each
    dimension, selected."""
    x, dims = e.x, dims_of(e)
    sizes = dims + ((e.bd,) if e.bd > 1 else ())   # the instances: the node's last axis
    if len(index) > len(sizes):
        raise IndexError(f"{len(index)} slices for an expression of dimension "
                         f"{(dims, e.bd)}")
    if not x.shape:
        x = bv.reshape(x, (1,))
    bd = e.bd
    for axis, s in enumerate(index):
        picked = list(range(*s.indices(sizes[axis])))
        if not picked:
            raise IndexError(f"slice {s} of dimension {axis} ({sizes[axis]}) is empty")
        if picked != list(range(sizes[axis])):
            x = bv.select_axis(x, picked, axis)
        if axis == len(dims):
            bd = len(picked)
    if bd == 1 and e.bd > 1:   # one instance left: an unbatched value
        x = bv.reshape(x, x.shape[:-1])
    return x, bd
