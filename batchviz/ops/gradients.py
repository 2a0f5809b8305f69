"""The kinds of gradient an op's backward kernel may return, besides a plain array.

The executor adds each argument position's gradient to where the arguments live
(:func:`~batchviz.execute.execute_backward`). Four kinds say more than an array would, so that
nothing large is made only to be added back:

* :class:`WeightGradient` - ``g^T x`` for a shared matrix ``W`` of ``W @ x``, not computed
  yet: the executor sums the terms of all batches of ``W`` in one product at the end;
* ``RowSums`` - the sum of ``g``'s rows for a shared bias that every node of a batch
  adds, not computed yet: the executor sums the rows of all batches of the bias at once;
* :class:`BlockGradient` - a gradient that is zero outside a band of rows;
* :class:`SparseRows` - the gradient of a few rows of a lookup table.

They live here, apart from the ops that make them, so that the executor knows the kinds
of gradient and never a concrete op."""
from __future__ import annotations


class WeightGradient:
    """``g^T x``: one batch's gradient for a shared matrix ``W`` of ``W @ x``, not computed yet.

    ``g`` is ``(r, rows)`` and ``x`` is ``(r, cols)``, one row per instance (per column, for
    matrix inputs). The backward pass meets the same ``W`` once per batch - an LSTM's ``Wh``
    at every time step - and adding each batch's small product to ``W``'s gradient would
    stream the whole gradient through memory once per batch. The executor keeps these
    instead and adds ``G^T X`` over all batches of ``W`` at the end, as one large product."""

    __slots__ = ("g", "x")

    def __init__(self, g, x):
        self.g = g
        self.x = x

    def value(self, xp, out=None):
        """``g^T x`` (written into ``out`` when it is given: a parameter's gradient, where
        this is its first of the step). One row (a single instance: unbatched execution,
        or a weight used once) is an outer product, which BLAS libraries compute faster
        than a matrix product with an inner dimension of 1: the column of ``g``'s numbers
        times the row of ``x``'s, as ``xp.outer`` forms it."""
        g, x = self.g, self.x
        if g.shape[0] == 1:
            return xp.multiply(g[0][:, None], x[0][None, :], out=out)
        return xp.matmul(g.T, x, out=out)


class RowSums:
    """``g.sum(axis=0)``: one batch's gradient for a shared bias ``b`` of ``b + W @ x``, which
    every node of the batch adds, not computed yet.

    As with :class:`WeightGradient`, the backward pass meets the same bias once per batch (a
    Tree-LSTM's gate at every level of the tree), and one sum of a few rows per batch costs
    a NumPy reduction and an addition each. The executor keeps these instead and sums the
    rows of all batches of ``b`` at the end, as one reduction."""

    __slots__ = ("g",)

    def __init__(self, g):
        self.g = g

    def value(self, xp, out=None):
        """The sum of ``g``'s rows (written into ``out`` when it is given), by the array's
        own method: ``xp.sum`` is a layer of Python around it, the same reduction."""
        return self.g.sum(axis=0, out=out)


class BlockGradient:
    """The gradient of an argument block of ``shape`` ``(n, D, ...)`` that is zero except in
    rows ``lo:hi`` of axis 1, where it is ``values``.

    ``lstm_h`` uses only the ``o`` block of its gates: returning the whole ``(n, 5H)``
    gradient would mean writing four blocks of zeros and adding them back into the gates'
    gradient. The executor adds ``values`` into those rows only (or makes the dense array
    where the argument was gathered node by node)."""

    __slots__ = ("shape", "lo", "hi", "values")

    def __init__(self, shape, lo: int, hi: int, values):
        self.shape, self.lo, self.hi, self.values = tuple(shape), lo, hi, values

    def dense(self, xp):
        full = xp.zeros(self.shape, dtype=self.values.dtype)
        full[:, self.lo:self.hi] = self.values
        return full


class SparseRows:
    """A gradient for a few rows of a lookup table (never a dense table-sized array):
    ``values[k]`` is added to row ``rows[k]``."""

    __slots__ = ("rows", "values")

    def __init__(self, rows, values):
        self.rows = rows
        self.values = values
