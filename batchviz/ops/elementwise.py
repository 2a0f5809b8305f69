"""Element-wise ops (App. A, "component-wise operations").

Their signature is only the op's name: a ``tanh`` batches with every other ``tanh``,
whatever its shape, because the kernels see the batch as one flat 1-D array (the
executor concatenates the nodes' values). Multi-argument element-wise ops (``add``,
``cmult``) take same-shaped arguments; batchviz never broadcasts.

The common ones write their results straight into the batch's segment of the arena
(``writes_output``, the ufuncs' ``out=``): a batch is then one pass over its values, not a
pass into a new array and a copy of it.
"""
from __future__ import annotations

import numpy as np

from ..backend import constant, segment_sums, to_device
from .base import Op, register, same_shapes
from ._build import binary_elementwise, build, expression_list, unary_elementwise


class Elementwise(Op):
    elementwise = True
    cheap = True

    def infer_shape(self, shapes, attrs):
        return same_shapes(self, shapes)


class Neg(Elementwise):
    name = "neg"
    writes_output = True

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.negative(ins[0], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [-g]


class Tanh(Elementwise):
    name = "tanh"
    writes_output = True

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.tanh(ins[0], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        d = xp.multiply(out, out)  # g * (1 - out^2), in one new array
        xp.subtract(constant(xp, 1.0, d), d, out=d)
        d *= g
        return [d]


def logistic_values(xp, x, out=None):
    """``1 / (1 + exp(-x))`` as ``0.5 * (1 + tanh(x / 2))``, which never overflows (in
    ``out`` when it is given), computed as ``0.5 * tanh(x / 2) + 0.5``: one constant to
    look up, and the same numbers (halving is exact, so the sum is rounded alike)."""
    half = constant(xp, 0.5, x)
    out = xp.multiply(x, half, out=out)
    xp.tanh(out, out=out)
    xp.multiply(out, half, out=out)
    xp.add(out, half, out=out)
    return out


class Logistic(Elementwise):
    name = "logistic"
    writes_output = True

    def forward(self, xp, ins, attrs, n, out=None):
        return logistic_values(xp, ins[0], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        d = xp.multiply(g, out)  # g * out * (1 - out), one temporary fewer
        d *= xp.subtract(constant(xp, 1.0, out), out)
        return [d]


class Rectify(Elementwise):
    name = "rectify"
    writes_output = True

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.maximum(ins[0], 0.0, out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * (ins[0] > 0)]


class Exp(Elementwise):
    name = "exp"
    writes_output = True

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.exp(ins[0], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * out]


class Log(Elementwise):
    name = "log"
    writes_output = True

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.log(ins[0], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g / ins[0]]


class Square(Elementwise):
    name = "square"
    writes_output = True

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.multiply(ins[0], ins[0], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [2.0 * g * ins[0]]


class Sqrt(Elementwise):
    name = "sqrt"
    writes_output = True

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.sqrt(ins[0], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [0.5 * g / out]


class Add(Elementwise):
    name = "add"
    writes_output = True
    arity = 2

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.add(ins[0], ins[1], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g, g]


class Sub(Elementwise):
    name = "sub"
    writes_output = True
    arity = 2

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.subtract(ins[0], ins[1], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g, -g]


class CMult(Elementwise):
    name = "cmult"
    writes_output = True
    writes_gradients = True
    arity = 2

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.multiply(ins[0], ins[1], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs, into=None):
        into0, into1 = (None, None) if into is None else into
        return [xp.multiply(g, ins[1], out=into0) if needs[0] else None,
                xp.multiply(g, ins[0], out=into1) if needs[1] else None]


class CDiv(Elementwise):
    name = "cdiv"
    writes_output = True
    arity = 2

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.divide(ins[0], ins[1], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g / ins[1] if needs[0] else None, -g * out / ins[1] if needs[1] else None]


class ESum(Elementwise):
    """Sum of k same-shaped expressions. An element-wise operation, so sums of any number
    of arguments batch together (``any_arity``; the signature names the shape, so that a
    batch's values are all one size). A batch reads all its arguments with one gather
    (``one_gather``): when every node has k of them it sums that ``(n, k, size)`` block
    over its axis of arguments, otherwise it sums each node's run of rows
    (:func:`batchviz.backend.segment_sums`)."""

    name = "esum"
    arity = None
    one_gather = True
    any_arity = True

    def signature(self, graph, args, attrs, shape):
        return (self.name, shape), ()

    # forward and backward position by position, as every op defines them; the executor
    # runs the block kernels below, which give the same numbers
    def forward(self, xp, ins, attrs, n):
        total = ins[0].copy()
        for x in ins[1:]:
            total += x
        return total

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g] * len(ins)

    def forward_together(self, xp, block, attrs, n):
        return block.sum(axis=1)

    def backward_together(self, xp, block, out, g, attrs, n):
        # every argument's gradient is its node's ``g``: one repeat makes them all (a
        # broadcast view would cost more to make, and the executor copies it anyway to
        # add it back through the gather's index)
        return g.reshape(n, 1, -1).repeat(block.shape[1], axis=1)

    def forward_segments(self, xp, rows, counts, attrs, n):
        return segment_sums(xp, rows, counts)

    def backward_segments(self, xp, rows, counts, out, g, attrs, n):
        return xp.repeat(g.reshape(n, -1), counts, axis=0)


class Average(ESum):
    name = "average"

    def forward(self, xp, ins, attrs, n):
        return super().forward(xp, ins, attrs, n) * (1.0 / len(ins))

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * (1.0 / len(ins))] * len(ins)

    def forward_together(self, xp, block, attrs, n):
        return block.sum(axis=1) * (1.0 / block.shape[1])

    def backward_together(self, xp, block, out, g, attrs, n):
        return (g * (1.0 / block.shape[1])).reshape(n, 1, -1).repeat(block.shape[1], axis=1)

    def forward_segments(self, xp, rows, counts, attrs, n):
        return segment_sums(xp, rows, counts) / _column(xp, counts, rows.dtype)

    def backward_segments(self, xp, rows, counts, out, g, attrs, n):
        return xp.repeat(g.reshape(n, -1) / _column(xp, counts, g.dtype), counts, axis=0)


def _column(xp, counts, dtype):
    """``counts`` as an ``(n, 1)`` column of ``xp`` in ``dtype``, to divide rows by."""
    column = np.asarray(counts, dtype=dtype).reshape(-1, 1)
    return column if xp is np else to_device(column)


neg = unary_elementwise(register(Neg()), "``-x``, element by element.")
tanh = unary_elementwise(register(Tanh()), "hyperbolic tangent, element by element.")
logistic = unary_elementwise(register(Logistic()), "the sigmoid ``1 / (1 + exp(-x))``, element by element.")
rectify = unary_elementwise(register(Rectify()), "ReLU, ``max(x, 0)``, element by element.")
exp = unary_elementwise(register(Exp()), "``e ** x``, element by element.")
log = unary_elementwise(register(Log()), "natural logarithm, element by element.")
square = unary_elementwise(register(Square()), "``x * x``, element by element.")
sqrt = unary_elementwise(register(Sqrt()), "square root, element by element.")
add = binary_elementwise(register(Add()), "``x + y`` for two expressions of the same shape.")
sub = binary_elementwise(register(Sub()), "``x - y`` for two expressions of the same shape.")
cmult = binary_elementwise(register(CMult()), "element-wise product ``x * y`` of two same-shaped expressions.")
cdiv = binary_elementwise(register(CDiv()), "element-wise quotient ``x / y`` of two same-shaped expressions.")
_ESUM = register(ESum())
_AVERAGE = register(Average())

sigmoid = logistic
relu = rectify


def esum(xs):
    """Sum of a non-empty list of same-shaped expressions. A batch of sums reads all their
    arguments with one gather (a sentence's loss adds dozens of word losses)."""
    return build(_ESUM, expression_list(xs, "esum", instead="bv.sum_elems"))


def average(xs):
    """Element-wise mean of a non-empty list of same-shaped expressions."""
    return build(_AVERAGE, expression_list(xs, "average", instead="bv.mean_elems"))


__all__ = ["neg", "tanh", "logistic", "sigmoid", "rectify", "relu", "exp", "log", "square",
           "sqrt", "add", "sub", "cmult", "cdiv", "esum", "average"]
