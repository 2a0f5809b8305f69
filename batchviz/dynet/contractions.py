"""DyNet's contractions of a 3-d tensor: ``contract3d_1d`` (``z_ij = sum_k x_ijk y_k``), its
``_bias`` form (``+ b_ij``), ``contract3d_1d_1d`` (``t_i = sum_jk x_ijk y_k z_j``) and its
``_bias`` form (``+ b_i``). DyNet's definitions, checked by computing them: ``y`` is
contracted with the *last* axis of ``x``, then ``z`` with the middle one.

Each is a composition of ops batchviz already has, so they batch like any other: ``x``
``(I, J, K)`` seen as an ``(I*J, K)`` matrix is a view of the same values (the batchviz
node's row-major layout, row ``i*J + j``), and ``z = x y`` is then that matrix times ``y``,
one affine node with the bias (:class:`.expression.Affine`), seen again as ``(I, J)``;
``t`` is that ``(I, J)`` matrix times ``z``. Minibatches follow DyNet's rule (an
unbatched argument is used for every instance); a minibatch of tensors ``x`` is a product
per instance (:func:`.dims.products_per_instance`). DyNet 2.1 computes
``contract3d_1d`` of a minibatch without a bias wrongly, and refuses minibatches in
``contract3d_1d_1d``: see "What differs" in the docs.
"""
from __future__ import annotations

from ..ops import api as bv
from .dims import dims_of, layout
from .expression import Expression, as_expression, matmul


def _tensor(x, who: str) -> tuple:
    x = as_expression(x, who)
    d = dims_of(x)
    if len(d) != 3:
        raise ValueError(f"{who}: x must be a 3-d tensor (I, J, K), got {x.dim()}")
    return x, d


def _vector(v, size: int, what: str, who: str) -> Expression:
    """``v`` as a ``(size,)`` vector: DyNet also takes a ``(size, 1)`` column."""
    v = as_expression(v, who)
    d = dims_of(v)
    if d[0] != size or any(k != 1 for k in d[1:]):
        raise ValueError(f"{who}: {what} must be a vector of {size}, got {v.dim()}")
    if len(d) > 1:
        v = Expression(bv.reshape(v.x, layout((size,), v.bd)), v.bd)
    return v


def _bias(b, dims: tuple, who: str) -> Expression:
    b = as_expression(b, who)
    if dims_of(b) != dims:
        raise ValueError(f"{who}: the bias b must be {dims}, got {b.dim()}")
    return b


def _contract(x: Expression, d: tuple, y: Expression, b, who: str) -> Expression:
    """``sum_k x_ijk y_k (+ b_ij)`` as an ``(I, J)`` matrix (of ``x``'s, ``y``'s and ``b``'s
    minibatch)."""
    I, J, K = d
    rows = Expression(bv.reshape(x.x, layout((I * J, K), x.bd)), x.bd)
    flat = matmul(rows, y)                        # (I*J,), a pending product if x is one
    if b is not None:
        b = _bias(b, (I, J), who)
        flat = flat + Expression(bv.reshape(b.x, layout((I * J,), b.bd)), b.bd)
    return Expression(bv.reshape(flat.x, layout((I, J), flat.bd)), flat.bd)


def contract3d_1d(x, y) -> Expression:
    """The ``(I, J)`` matrix ``z_ij = sum_k x_ijk y_k`` of a tensor ``x`` (``(I, J, K)``)
    and a vector ``y`` (``(K,)``)."""
    x, d = _tensor(x, "contract3d_1d")
    return _contract(x, d, _vector(y, d[2], "y", "contract3d_1d"), None, "contract3d_1d")


def contract3d_1d_bias(x, y, b) -> Expression:
    """:func:`contract3d_1d` plus the ``(I, J)`` matrix ``b``."""
    x, d = _tensor(x, "contract3d_1d_bias")
    return _contract(x, d, _vector(y, d[2], "y", "contract3d_1d_bias"), b,
                     "contract3d_1d_bias")


def _contract_twice(x, y, z, b, who: str) -> Expression:
    x, d = _tensor(x, who)
    m = _contract(x, d, _vector(y, d[2], "y", who), None, who)
    t = matmul(m, _vector(z, d[1], "z", who))     # sum_j m_ij z_j
    return t if b is None else t + _bias(b, d[:1], who)


def contract3d_1d_1d(x, y, z) -> Expression:
    """The ``(I,)`` vector ``t_i = sum_jk x_ijk y_k z_j`` of a tensor ``x`` (``(I, J, K)``)
    and vectors ``y`` (``(K,)``) and ``z`` (``(J,)``): :func:`contract3d_1d` times ``z``."""
    return _contract_twice(x, y, z, None, "contract3d_1d_1d")


def contract3d_1d_1d_bias(x, y, z, b) -> Expression:
    """:func:`contract3d_1d_1d` plus the vector ``b`` (``(I,)``)."""
    return _contract_twice(x, y, z, b, "contract3d_1d_1d_bias")


__all__ = ["contract3d_1d", "contract3d_1d_bias", "contract3d_1d_1d", "contract3d_1d_1d_bias"]
