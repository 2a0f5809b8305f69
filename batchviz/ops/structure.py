"""Ops that move values around: concatenate, pick, pick_range, reshape, transpose.

All are dimension-sensitive (App. A): their signatures name the shapes, and for
``pick_range`` the slice bounds (the paper's ``slice-400x500-100:200``). ``pick``'s index
varies per node and is *not* part of its signature, so picks from same-shaped vectors batch
into one fancy-indexing kernel (DyNet leaves pick unbatched).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import backend
from ..signature import shape_text
from .base import Op, register
from ._build import (as_nodes, build, build_memoized, build_over_nodes, expression_list,
                     shapes_memo_key)


class Concatenate(Op):
    """Concatenation along the first axis (rows), as DyNet's ``concatenate``."""

    name = "concatenate"
    arity = None
    writes_output = True  # the pieces go straight into the segment: one copy, not two

    def infer_shape(self, shapes, attrs):
        first = shapes[0]
        for s in shapes[1:]:
            if len(s) != len(first) or s[1:] != first[1:]:
                raise self.error(
                    "arguments must agree in every dimension but the first, got "
                    + ", ".join(str(x) for x in shapes))
        if len(first) == 0:
            raise self.error("cannot concatenate scalars; make them vectors with bv.reshape(x, (1,))")
        return (sum(s[0] for s in shapes),) + first[1:]

    def memo_key(self, graph, args, attrs):
        """The op and its arguments' shapes (:func:`._build.shapes_memo_key`, which
        :func:`concatenate` computes itself)."""
        return shapes_memo_key(self, graph, args)

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.concatenate(ins, axis=1, out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        grads, start = [], 0
        for x, need in zip(ins, needs):
            stop = start + x.shape[1]
            grads.append(g[:, start:stop] if need else None)
            start = stop
        return grads

    def describe_signature(self, key, graph=None):
        return "concatenate-" + "+".join(shape_text(s) for s in key[2:])


class Pick(Op):
    """Element (or row) ``i`` of the first axis. The index is per node, not in the signature."""

    name = "pick"

    def infer_shape(self, shapes, attrs):
        s = shapes[0]
        if len(s) == 0:
            raise self.error("cannot pick from a scalar")
        if not -s[0] <= attrs < s[0]:
            raise IndexError(f"pick: index {attrs} is out of range for shape {s}")
        return s[1:]

    def memo_key(self, graph, args, attrs):
        # the index is in the key: whether it is in range depends on the shape and on it
        return (self, graph.shapes[args[0]], attrs)

    def forward(self, xp, ins, attrs, n):
        rows = backend.to_device_index(np.asarray(attrs, dtype=np.int64))
        return ins[0][xp.arange(n), rows]

    def backward(self, xp, ins, out, g, attrs, n, needs):
        rows = backend.to_device_index(np.asarray(attrs, dtype=np.int64))
        grad = xp.zeros_like(ins[0])
        grad[xp.arange(n), rows] = g
        return [grad]


class PickRange(Op):
    """Rows ``start:stop`` of the first axis; the bounds are part of the signature."""

    name = "pick_range"

    def infer_shape(self, shapes, attrs):
        s = shapes[0]
        start, stop = attrs
        if len(s) == 0:
            raise self.error(f"cannot take a range of a scalar (shape {s})")
        if 0 <= start and stop <= s[0] and start >= stop:
            raise self.error(f"range {start}:{stop} of shape {s} is empty, and an expression "
                             "cannot be")
        if not 0 <= start < stop <= s[0]:
            raise self.error(f"range {start}:{stop} is not inside the first dimension of shape {s}")
        return (stop - start,) + s[1:]

    def signature(self, graph, args, attrs, shape):
        return ("pick_range", graph.shapes[args[0]], attrs), ()

    def forward(self, xp, ins, attrs, n):
        start, stop = attrs[0]
        return ins[0][:, start:stop]

    def backward(self, xp, ins, out, g, attrs, n, needs):
        start, stop = attrs[0]
        grad = xp.zeros_like(ins[0])
        grad[:, start:stop] = g
        return [grad]

    def describe_signature(self, key, graph=None):
        return f"pick_range-{shape_text(key[1])}-{key[2][0]}:{key[2][1]}"


class Reshape(Op):
    name = "reshape"

    def infer_shape(self, shapes, attrs):
        if any(d <= 0 for d in attrs):
            raise self.error(f"dimensions must be positive (one may be -1), got {attrs}")
        if math.prod(shapes[0]) != math.prod(attrs):
            raise self.error(f"cannot reshape {shapes[0]} into {attrs}: sizes differ")
        return attrs

    def memo_key(self, graph, args, attrs):
        """The argument's shape and the new shape (``attrs``) fix the node's shape and
        signature: an RNN's builders reshape every input column, a graph per sentence."""
        return (self, graph.shapes[args[0]], attrs)

    def forward(self, xp, ins, attrs, n):
        return ins[0].reshape((n,) + attrs[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g.reshape(ins[0].shape)]


class Transpose(Op):
    name = "transpose"

    def infer_shape(self, shapes, attrs):
        s = shapes[0]
        if len(s) == 1:
            return (1, s[0])
        if len(s) != 2:
            raise self.error(f"needs a vector or a matrix, got shape {s}")
        return (s[1], s[0])

    def memo_key(self, graph, args, attrs):
        """The argument's shape fixes the node's shape and signature."""
        return (self, graph.shapes[args[0]])

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        return x[:, None, :] if x.ndim == 2 else x.transpose(0, 2, 1)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        return [g[:, 0, :] if x.ndim == 2 else g.transpose(0, 2, 1)]


_CONCAT = register(Concatenate())
_PICK = register(Pick())
_PICK_RANGE = register(PickRange())
_RESHAPE = register(Reshape())
_TRANSPOSE = register(Transpose())


def concatenate(xs):
    """Concatenate a list of expressions along the first axis."""
    if type(xs) is list:
        return build_over_nodes(_CONCAT, xs)
    return build(_CONCAT, expression_list(xs, "concatenate"))


def pick(x, index):
    """Element ``index`` of a vector (or row ``index`` of a matrix)."""
    if type(index) is not int:
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"pick: index must be an int, got {type(index).__name__}")
        index = int(index)
    return build_memoized(_PICK, x, index)


def pick_range(x, start, stop):
    """Rows ``start:stop`` (``stop`` exclusive) of a vector or matrix."""
    if stop is None:
        g, (node,) = as_nodes((x,))
        stop = g.shapes[node][0] if g.shapes[node] else 0
    return build(_PICK_RANGE, (x,), (int(start), int(stop)))


def reshape(x, shape):
    """The same values in a new shape (an int or a tuple); one dimension may be -1, the
    size that the others leave, as in NumPy."""
    if type(shape) is not tuple and isinstance(shape, numbers.Integral):  # (the ABC's test
        shape = (int(shape),)                      # is slow: a tuple, the usual, skips it)
    shape = tuple([int(d) for d in shape])
    if -1 in shape and hasattr(x, "shape"):
        size, known = math.prod(x.shape), math.prod([d for d in shape if d != -1])
        if shape.count(-1) > 1 or known <= 0 or size % known:
            raise _RESHAPE.error(f"cannot reshape {x.shape} into {shape}: one dimension may be "
                                 "-1, and the others must divide the size")
        shape = tuple(size // known if d == -1 else d for d in shape)
    return build_memoized(_RESHAPE, x, shape)


def transpose(x):
    """Matrix transpose; a vector becomes a ``1 x d`` row."""
    return build_memoized(_TRANSPOSE, x, None)


__all__ = ["concatenate", "pick", "pick_range", "reshape", "transpose"]
