"""Ops that move values between axes: broadcasting, picking and selecting along an axis,
concatenating along an axis, permuting axes, and reshaping in column-major order.

:mod:`batchviz.ops.structure` works on the first axis; these take the axis as an attribute,
which DyNet's API needs (``pick(x, i, dim=1)``, ``select_cols``, ``concatenate_cols``,
``transpose(x, [1, 0, 2])``) and so does manual batching, whose instances lie along the
last axis (``pick_batch``: a different row in every column). All are dimension-sensitive
(App. A): the signature names the argument's shape and the axis; an index that varies per
node is an attribute and not part of it, so that picks from same-shaped values batch into
one indexing kernel.
"""
from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from .. import backend
from ..signature import shape_text
from .base import Op, register
from ._build import build, build_memoized, expression_list
from .axes import TakeAlongAxis


def _size(shape) -> int:
    return math.prod(shape)  # (of Python ints: exact, without NumPy's Python-level wrapper)


def _indices(xp, attrs, column_shape):
    """Per-node index lists (``attrs``) as a device array shaped ``(n,) + column_shape``."""
    rows = np.asarray(attrs, dtype=np.int64).reshape((len(attrs),) + tuple(column_shape))
    return backend.to_device_index(rows)


class Broadcast(Op):
    """The argument viewed as ``view`` (same size), repeated along every axis where ``view``
    has 1 and ``target`` more: DyNet's broadcasting of an element-wise op's arguments (a
    vector added to every column, one instance added to every instance of a minibatch)."""

    name = "broadcast"
    writes_output = True  # the repeated values go straight into the segment

    def infer_shape(self, shapes, attrs):
        view, target = attrs
        if _size(view) != _size(shapes[0]) or len(view) != len(target) or any(
                v != t and v != 1 for v, t in zip(view, target)):
            raise self.error(f"cannot view shape {shapes[0]} as {view} and broadcast it to "
                             f"{target}")
        return target

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]]) + attrs, ()

    def memo_key(self, graph, args, attrs):
        return (self, graph.shapes[args[0]], attrs)

    def forward(self, xp, ins, attrs, n, out=None):
        # (an assignment repeats the values as it copies them: ``np.broadcast_to`` would
        # make a read-only view first, by Python code that costs more than the copy)
        view, target = attrs[0]
        if out is None:
            out = xp.empty((n,) + target, dtype=ins[0].dtype)
        out[...] = ins[0].reshape((n,) + view)
        return out

    def backward(self, xp, ins, out, g, attrs, n, needs):
        view, target = attrs[0]
        summed = tuple([a + 1 for a, (v, t) in enumerate(zip(view, target)) if v != t])
        return [g.sum(axis=summed).reshape(ins[0].shape)]


class PickAxis(Op):
    """Index ``i`` along ``axis`` (that axis removed). Attributes ``(axis, i)``; ``i`` is per
    node and not part of the signature."""

    name = "pick_axis"

    def infer_shape(self, shapes, attrs):
        axis, index = attrs
        s = shapes[0]
        if not 0 <= axis < len(s):
            raise self.error(f"axis {axis} is not an axis of shape {s}")
        if not 0 <= index < s[axis]:
            raise IndexError(f"pick: index {index} is out of range for axis {axis} of shape {s}")
        return s[:axis] + s[axis + 1:]

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs[0]), ()

    def memo_key(self, graph, args, attrs):
        return (self, graph.shapes[args[0]], attrs)

    def forward(self, xp, ins, attrs, n):
        axis = attrs[0][0]
        rows = backend.to_device_index(np.array([i for _, i in attrs], dtype=np.int64))
        return xp.moveaxis(ins[0], axis + 1, 1)[xp.arange(n), rows]

    def backward(self, xp, ins, out, g, attrs, n, needs):
        axis = attrs[0][0]
        rows = backend.to_device_index(np.array([i for _, i in attrs], dtype=np.int64))
        grad = xp.zeros_like(ins[0])
        xp.moveaxis(grad, axis + 1, 1)[xp.arange(n), rows] = g
        return [grad]


class PickBatch(TakeAlongAxis):
    """For every entry ``j`` of the last axis (an instance of a manual minibatch), index
    ``indices[j]`` along ``axis``, which is removed. Attributes ``(axis, indices)``."""

    name = "pick_batch"

    def infer_shape(self, shapes, attrs):
        axis, indices = attrs
        s = shapes[0]
        if len(s) < 2 or not 0 <= axis < len(s) - 1:
            raise self.error(f"needs an axis before the last (the instances) of shape {s}, "
                             f"got axis {axis}")
        if len(indices) != s[-1]:
            raise self.error(f"{len(indices)} indices for {s[-1]} instances (shape {s})")
        if any(not 0 <= i < s[axis] for i in indices):
            raise IndexError(f"pick_batch: an index of {list(indices)} is out of range for "
                             f"axis {axis} of shape {s}")
        return s[:axis] + s[axis + 1:]

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs[0]), ()

    def _where(self, xp, x, attrs):
        axis = attrs[0][0]
        column = [1] * (x.ndim - 1)
        column[-1] = x.shape[-1]
        return axis + 1, _indices(xp, [ids for _, ids in attrs], column)


class SelectAxis(Op):
    """The entries ``indices`` (in that order, repeats allowed) along ``axis``. Attributes
    ``(axis, indices)``; the indices are per node, their number is in the signature."""

    name = "select_axis"

    def infer_shape(self, shapes, attrs):
        axis, indices = attrs
        s = shapes[0]
        if not 0 <= axis < len(s):
            raise self.error(f"axis {axis} is not an axis of shape {s}")
        if any(not 0 <= i < s[axis] for i in indices):
            raise IndexError(f"select: an index of {list(indices)} is out of range for axis "
                             f"{axis} of shape {s}")
        return s[:axis] + (len(indices),) + s[axis + 1:]

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs[0], len(attrs[1])), ()

    def _where(self, xp, x, attrs):
        axis = attrs[0][0]
        m = len(attrs[0][1])
        return axis + 1, _indices(xp, [ids for _, ids in attrs],
                                  [m if a == axis else 1 for a in range(x.ndim - 1)])

    def forward(self, xp, ins, attrs, n):
        axis, where = self._where(xp, ins[0], attrs)
        return xp.take_along_axis(ins[0], where, axis=axis)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        axis, where = self._where(xp, x, attrs)
        # (n, m, D): which of the D entries each of the m selected is; repeats add up
        chosen = (where.reshape(n, -1, 1) == xp.arange(x.shape[axis])).astype(g.dtype)
        rest = xp.moveaxis(g, axis, 1)
        grad = xp.matmul(chosen.transpose(0, 2, 1), rest.reshape(n, rest.shape[1], -1))
        return [xp.moveaxis(grad.reshape((n, x.shape[axis]) + rest.shape[2:]), 1, axis)]


class ConcatenateAxis(Op):
    """Concatenation along ``axis``. An argument with one axis fewer than the others is read
    with an axis of size 1 inserted there (vectors as columns: ``concatenate_cols``)."""

    name = "concatenate_axis"
    arity = None

    def padded(self, shapes, axis) -> list:
        """The arguments' shapes with the missing axis of size 1 inserted: at ``axis`` in
        an argument of one axis fewer than the others, and in every argument when they all
        have ``axis`` axes (a new last axis)."""
        ndim = max(len(s) for s in shapes)
        if axis == ndim and all(len(s) == ndim for s in shapes):
            ndim += 1
        if not 0 <= axis < ndim:
            raise self.error(f"axis {axis} is not an axis of shapes {shapes}")
        out = []
        for s in shapes:
            if len(s) == ndim - 1:
                s = s[:axis] + (1,) + s[axis:]
            elif len(s) != ndim:
                raise self.error(f"cannot concatenate shapes {shapes} along axis {axis}")
            out.append(s)
        return out

    def infer_shape(self, shapes, attrs):
        axis = attrs
        padded = self.padded(shapes, axis)
        first = padded[0]
        for s in padded[1:]:
            if len(s) != len(first) or s[:axis] + s[axis + 1:] != first[:axis] + first[axis + 1:]:
                raise self.error(f"arguments must agree in every axis but {axis}, got "
                                 + ", ".join(str(x) for x in shapes))
        return first[:axis] + (sum(s[axis] for s in padded),) + first[axis + 1:]

    def signature(self, graph, args, attrs, shape):
        return (self.name, attrs) + tuple(graph.shapes[a] for a in args), ()

    def memo_key(self, graph, args, attrs):
        return (self, attrs) + tuple(graph.shapes[a] for a in args)

    def forward(self, xp, ins, attrs, n):
        shapes, _ = _concatenation(attrs[0], tuple([x.shape for x in ins]))
        return xp.concatenate([x.reshape(s) for x, s in zip(ins, shapes)], axis=attrs[0] + 1)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        _, parts = _concatenation(attrs[0], tuple([x.shape for x in ins]))
        return [g[part].reshape(x.shape) if need else None
                for x, part, need in zip(ins, parts, needs)]


@functools.lru_cache(maxsize=4096)
def _concatenation(axis: int, shapes: tuple) -> tuple:
    """For a batch of ``concatenate_axis`` whose arguments are ``shapes`` (``(n,) +
    shape``): each argument's shape with the missing axis inserted
    (:meth:`ConcatenateAxis.padded`), and the index of its part of the result. The same
    concatenations recur in every graph of a program (a graph per sentence), so these
    are kept, not worked out at every batch."""
    n = shapes[0][0]
    padded = _CONCATENATE_AXIS.padded([s[1:] for s in shapes], axis)
    lead = (slice(None),) * (axis + 1)
    parts, start = [], 0
    for s in padded:
        parts.append(lead + (slice(start, start + s[axis]),))
        start += s[axis]
    return tuple([(n,) + s for s in padded]), tuple(parts)


class Permute(Op):
    """The axes in the order ``perm`` (``perm[k]``: which axis of the argument becomes
    axis ``k``), as NumPy's ``transpose(x, perm)``."""

    name = "permute"

    def infer_shape(self, shapes, attrs):
        s = shapes[0]
        if sorted(attrs) != list(range(len(s))):
            raise self.error(f"{list(attrs)} is not an order of the {len(s)} axes of shape {s}")
        return tuple(s[a] for a in attrs)

    def signature(self, graph, args, attrs, shape):
        return (self.name, graph.shapes[args[0]], attrs), ()

    def describe_signature(self, key, graph=None):
        """``permute-2x3x4-to2,0,1``: the argument's shape and the new order of its axes."""
        return f"{self.name}-{shape_text(key[1])}-to{','.join(map(str, key[2]))}"

    def forward(self, xp, ins, attrs, n):
        return ins[0].transpose((0,) + tuple(a + 1 for a in attrs[0]))

    def backward(self, xp, ins, out, g, attrs, n, needs):
        inverse = np.argsort(attrs[0])
        return [g.transpose((0,) + tuple(int(a) + 1 for a in inverse))]


class ReshapeColumnMajor(Op):
    """The same values in a new shape, read and written in column-major (Fortran) order:
    the first axis varies fastest. DyNet stores tensors that way, so its ``reshape`` of a
    ``3 x 4`` matrix into ``4 x 3`` differs from NumPy's."""

    name = "reshape_column_major"

    def infer_shape(self, shapes, attrs):
        if _size(attrs) != _size(shapes[0]) or any(d <= 0 for d in attrs):
            raise self.error(f"cannot reshape {shapes[0]} into {attrs}: sizes differ")
        return attrs

    def forward(self, xp, ins, attrs, n):
        return _fortran_reshape(ins[0], attrs[0], n)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [_fortran_reshape(g, ins[0].shape[1:], n)]


def _fortran_reshape(x, shape, n):
    """Every node's value of the batch ``x`` reshaped into ``shape`` in column-major order."""
    k, m = x.ndim - 1, len(shape)
    flipped = x.transpose((0,) + tuple(range(k, 0, -1)))
    return flipped.reshape((n,) + tuple(shape[::-1])).transpose((0,) + tuple(range(m, 0, -1)))


_BROADCAST = register(Broadcast())
_PICK_AXIS = register(PickAxis())
_PICK_BATCH = register(PickBatch())
_SELECT_AXIS = register(SelectAxis())
_CONCATENATE_AXIS = register(ConcatenateAxis())
_PERMUTE = register(Permute())
_RESHAPE_COLUMN_MAJOR = register(ReshapeColumnMajor())


def _ints(values, who: str) -> tuple:
    """``values`` as a tuple of ints; a NumPy integer (any ``numbers.Integral``) becomes an
    int. Graph building calls this for every node, so the cheap test comes first: the ABC
    check is slower, and only a value that is not an int needs it."""
    out = []
    for v in values:
        if type(v) is not int:
            if not isinstance(v, numbers.Integral):
                raise TypeError(f"{who}: indices must be ints, got {type(v).__name__}")
            v = int(v)
        out.append(v)
    return tuple(out)


def _shape(shape, who: str) -> tuple:
    """``shape`` (an int or a sequence of ints) as a tuple of positive ints."""
    if type(shape) is tuple or not isinstance(shape, numbers.Integral):
        shape = _ints(shape, who)
    else:
        shape = (int(shape),)
    if shape and min(shape) <= 0:
        raise ValueError(f"{who}: dimensions must be positive, got {shape}")
    return shape


def broadcast(x, view, target):
    """``x`` viewed as ``view`` (a shape of the same size) and repeated to ``target`` along
    every axis where ``view`` has 1."""
    return build_memoized(_BROADCAST, x, (_shape(view, "broadcast"), _shape(target, "broadcast")))


def pick_axis(x, index: int, axis: int):
    """Index ``index`` along ``axis`` of ``x`` (the axis removed)."""
    return build_memoized(_PICK_AXIS, x, _ints((axis, index), "pick_axis"))


def pick_batch(x, indices, axis: int = 0):
    """For every entry ``j`` of the last axis of ``x``, index ``indices[j]`` along ``axis``."""
    return build(_PICK_BATCH, (x,), (int(axis), _ints(indices, "pick_batch")))


def select_axis(x, indices, axis: int):
    """The entries ``indices`` (a list of ints, in order) along ``axis`` of ``x``."""
    indices = _ints(indices, "select_axis")
    if not indices:
        raise ValueError("select_axis: needs at least one index")
    return build(_SELECT_AXIS, (x,), (int(axis), indices))


def concatenate_axis(xs, axis: int):
    """Concatenate a list of expressions along ``axis``; an expression with one axis fewer
    than the others counts as having size 1 there."""
    return build(_CONCATENATE_AXIS, expression_list(xs, "concatenate_axis"), int(axis))


def permute(x, perm):
    """The axes of ``x`` in the order ``perm``, as NumPy's ``transpose(x, perm)``."""
    return build(_PERMUTE, (x,), _ints(perm, "permute"))


def reshape_column_major(x, shape):
    """The values of ``x`` in ``shape``, read and written in column-major order (DyNet's)."""
    return build(_RESHAPE_COLUMN_MAJOR, (x,), _shape(shape, "reshape_column_major"))


__all__ = ["broadcast", "pick_axis", "pick_batch", "select_axis", "concatenate_axis", "permute",
           "reshape_column_major"]
