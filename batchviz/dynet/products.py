"""DyNet's ``*`` (the matrix product) and ``+``, and the affine transforms they make.

DyNet programs write layers as ``b + W * x`` (or ``W * x + b``, or ``b + U * h + V * c``):
in DyNet a product node and a sum node each. batchviz has one node for the whole
``b + W1 x1 + W2 x2 + ...`` (``affine_transform``, whose weights and bias are shared
arguments when they are parameters, App. A), so ``W * x`` here gives an :class:`Affine`
expression that is *pending*: it becomes a node when something uses it, and a ``+`` of a
bias or of another pending product extends it instead. ``b + W * x`` is then one node,
built by batchviz's fastest path (a memo lookup and a push), and the runtime batches one
signature instead of two. The values are DyNet's (the same sums, up to the order in which
floating-point terms are added).
"""
from __future__ import annotations

from ..ops import api as bv
from .expression import Expression, as_expression, dims_of, elementwise


class Affine(Expression):
    """``b + W1 * x1 + ...`` (``b`` may be absent), a node only once it is used.

    ``terms`` is ``[b or None, W1, x1, W2, x2, ...]`` in batchviz objects (parameters or
    nodes); ``x`` builds the node on first use."""

    __slots__ = ("terms", "_built")

    def __init__(self, terms: list, bd: int):
        self.terms, self.bd, self._built = terms, bd, None

    @property
    def x(self):
        node = self._built
        if node is None:
            node = self._built = self._build()
        return node

    @property
    def pending(self) -> bool:
        return self._built is None

    def _build(self):
        terms = self.terms
        if terms[0] is None:
            if len(terms) == 3:
                return bv.matmul(terms[1], terms[2])
            products = [bv.matmul(W, v) for W, v in zip(terms[1::2], terms[2::2])]
            return bv.esum(products)
        if self.bd > 1 and len(terms[0].shape) == 1:  # a bias added to every instance
            return bv.affine_batch(terms)
        return bv.affine_transform(terms)


def _bias_of(b: Expression, pending: Affine):
    """The batchviz bias for ``pending`` if ``b`` can be its bias (a vector of its rows,
    unbatched, or shaped as the product), else None."""
    if b.bd not in (1, pending.bd) or isinstance(b, Affine) and b.pending:
        return None
    rows = pending.terms[1].shape[0]
    shape = b.x.shape
    if shape == (rows,) or (b.bd == pending.bd > 1 and shape == (rows, pending.bd)):
        return b.x
    return None


def _extend(a, b):
    """``a + b`` as a pending affine transform, or None when it is not one."""
    if type(b) is Affine and b.pending and type(a) is not Affine:
        a, b = b, a
    if type(a) is not Affine or not a.pending:
        return None
    if type(b) is Affine and b.pending and b.bd == a.bd:
        if a.terms[0] is not None and b.terms[0] is None:
            return Affine(a.terms + b.terms[1:], a.bd)
        if a.terms[0] is None and b.terms[0] is not None:
            return Affine(b.terms + a.terms[1:], a.bd)
        return None
    if a.terms[0] is None and isinstance(b, Expression):
        bias = _bias_of(b, a)
        if bias is not None:
            return Affine([bias] + a.terms[1:], a.bd)
    return None


def add(a, b) -> Expression:
    """DyNet's ``a + b`` (broadcast as its element-wise ops); a bias plus pending products
    stays one pending affine transform."""
    if type(a) is Affine or type(b) is Affine:
        extended = _extend(a, b)
        if extended is not None:
            return extended
    return elementwise(bv.add, a, b, "x + y")


def sub(a, b) -> Expression:
    return elementwise(bv.sub, a, b, "x - y")


def _as_matrix(e: Expression):
    """The batchviz node of a left factor as a matrix (a vector is one column)."""
    shape = e.x.shape
    if len(shape) == 2:
        return e.x
    return bv.reshape(e.x, (shape[0] if shape else 1, 1))


def matmul(a, b) -> Expression:
    """DyNet's ``a * b``: the matrix product (a vector is a column; a matrix times a
    vector is a vector). A matrix times a vector or a minibatch of vectors is a pending
    :class:`Affine`; a batch of right factors is one product with all their columns; a
    batch of left factors, a product per instance (:func:`_instance_by_instance`)."""
    if type(b) is Expression and isinstance(a, Expression) and a.bd == 1:  # W * x: at once
        left, right, bd = a.x, b.x, b.bd
        ls, rs = left.shape, right.shape
        if len(ls) == 2 and rs and ls[1] == rs[0] and len(rs) == (1 if bd == 1 else 2):
            return Affine([None, left, right], bd)
    a, b = as_expression(a, "x * y"), as_expression(b, "x * y")
    da, db = dims_of(a), dims_of(b)
    if len(da) > 2 or len(db) > 2:
        raise ValueError(f"x * y: cannot multiply tensors of more than 2 dimensions: "
                         f"{a.dim()} and {b.dim()}")
    cols = da[1] if len(da) == 2 else 1
    if cols != db[0]:
        raise ValueError(f"x * y: mismatched dimensions {a.dim()} and {b.dim()}: {cols} "
                         f"columns times {db[0]} rows")
    if a.bd > 1:
        if b.bd not in (1, a.bd):
            raise ValueError(f"x * y: minibatch sizes of {a.dim()} and {b.dim()} differ")
        return _instance_by_instance(a, b, da, db, a.bd)
    left, right, bd = a.x, b.x, b.bd
    if len(left.shape) == 2 and len(db) == 1 and right.shape:   # W x, or W X of a minibatch
        return Affine([None, left, right], bd)
    left = left if len(left.shape) == 2 else _as_matrix(a)
    if len(db) == 1:                       # a vector times a number
        return Expression(bv.matmul(left, bv.reshape(right, (1,))), bd)
    if bd == 1:                            # a matrix
        return Expression(bv.matmul(left, right), 1)
    k = db[1]                              # a batch of matrices: all their columns at once
    product = bv.matmul(left, bv.reshape(right, (db[0], k * bd)))
    return Expression(bv.reshape(product, (da[0], k, bd)), bd)


def _instance_by_instance(a, b, da, db, bd: int) -> Expression:
    """``a * b`` for a minibatch of left factors (``((r, c), bd)``; of right factors too, or
    one for all): ``sum_j A[:, j] * X[j, :]`` of every instance, as element-wise products of
    ``(r, c, k, bd)`` broadcasts summed over ``c``. It makes the whole ``r x c x k`` block
    of products per instance: DyNet programs use it for small factors (a masked loss is a
    minibatch of numbers times another)."""
    r, c = da[0], (da[1] if len(da) == 2 else 1)
    k = db[1] if len(db) == 2 else 1
    target = (r, c, k, bd)
    products = bv.cmult(bv.broadcast(a.x, (r, c, 1, a.bd), target),
                        bv.broadcast(b.x, (1, c, k, b.bd), target))
    summed = bv.sum_axes(products, [1])
    return Expression(bv.reshape(summed, (r, bd) if len(db) == 1 else (r, k, bd)), bd)
