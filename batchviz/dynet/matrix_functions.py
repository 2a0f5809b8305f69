"""DyNet's functions of a square matrix: ``inverse`` and ``logdet`` (batchviz's ops of
:mod:`batchviz.ops.matrix_functions`). DyNet computes them for one matrix, not a minibatch
of them; so does this module."""
from __future__ import annotations

from ..ops import api as bv
from .dims import dims_of
from .expression import Expression, as_expression


def _matrix(x, who: str):
    x = as_expression(x, who)
    if x.bd != 1:
        raise NotImplementedError(f"{who} of a minibatch of matrices (dimension {x.dim()}): "
                                  "DyNet computes it for one matrix; pick the instances "
                                  "with dy.pick_batch_elem and compute one each")
    dims = dims_of(x)
    if len(dims) != 2 or dims[0] != dims[1]:
        raise ValueError(f"{who}: needs a square matrix, got dimension {x.dim()}")
    return x.x


def inverse(x) -> Expression:
    """The inverse of the square matrix ``x``."""
    return Expression(bv.inverse(_matrix(x, "inverse")), 1)


def logdet(x) -> Expression:
    """The log of the determinant of the square matrix ``x`` (NaN where it is negative,
    as in DyNet)."""
    return Expression(bv.logdet(_matrix(x, "logdet")), 1)


__all__ = ["inverse", "logdet"]
