"""What a DyNet expression's values are, in DyNet's views: ``value()``, ``npvalue()``,
``vec_value()``, ``dim()``, ``backward()``, ``gradient()`` (a base class of
:class:`.expression.Expression`, which holds the node ``x`` and the minibatch size ``bd``)."""
from __future__ import annotations

import numpy as np

from ..expression import Expression as BvExpression
from ..ops import api as bv
from . import graph as _graph
from .dims import dims_of, full_shape
from .tensor import Tensor


class Values:
    """The values and gradients of a DyNet expression ``self`` (its ``x`` and ``bd``)."""

    __slots__ = ()

    # --- dimensions ---------------------------------------------------------------------
    def dim(self) -> tuple:
        """``((dims), batch)``, as DyNet."""
        return (dims_of(self), self.bd)

    def _node(self) -> BvExpression:
        x = self.x
        return x if type(x) is BvExpression else x.expr()

    # --- values -------------------------------------------------------------------------
    def npvalue(self, recalculate: bool = False) -> np.ndarray:
        """The value as an array shaped ``dims`` (``dims + (batch,)`` when batched), in
        float64, as DyNet gives it (batchviz computes in float32 by default)."""
        node = self._node()
        if recalculate:
            node.graph.recompute()
        value = node.npvalue()
        _graph.check_values(value, f"expression {node.node}")
        return value.reshape(full_shape(self)).astype(np.float64)

    def value(self, recalculate: bool = False):
        """A float for one number, a list for a vector (a batch of vectors: one list, in
        DyNet's column-major order), an array for a matrix or more."""
        if len(dims_of(self)) >= 2:
            return self.npvalue(recalculate)
        values = self.vec_value(recalculate)
        return values[0] if len(values) == 1 else values

    def vec_value(self, recalculate: bool = False) -> list:
        """Every value in a list, in DyNet's column-major order (batch last)."""
        return self.npvalue(recalculate).flatten(order="F").tolist()

    def scalar_value(self, recalculate: bool = False) -> float:
        v = self.npvalue(recalculate)
        if v.size != 1:
            raise ValueError(f"scalar_value() of an expression of dimension {self.dim()}")
        return float(v.reshape(()))

    def forward(self, recalculate: bool = False) -> None:
        """Compute the graph (every node built so far, in batches)."""
        self.npvalue(recalculate)

    def tensor_value(self, recalculate: bool = False) -> Tensor:
        """The value as a DyNet :class:`~.tensor.Tensor`, for its ``argmax``, ``topk`` and
        ``categorical_sample_log_prob`` (a copy, as :meth:`npvalue`)."""
        return Tensor(self.npvalue(recalculate), self.bd)

    def backward(self, full: bool = False) -> None:
        """Accumulate the gradient of this scalar into every parameter it depends on; with
        ``full=True`` keep every expression's gradient too, for :meth:`gradient`."""
        d = dims_of(self)
        if self.bd != 1 or int(np.prod(d)) != 1:
            raise ValueError(f"backward() can only be called on scalar nodes, but this "
                             f"expression has dimension {self.dim()}; sum it first, e.g. "
                             "with dy.sum_batches or dy.sum_elems")
        node = self._node()
        if node.shape not in ((), (1,)):
            node = bv.reshape(node, ())
        graph = node.graph
        if full and not graph.keep_gradients:  # constants' gradients too: run it again so
            graph.keep_gradients = True        # that every batch takes part in backward
            graph.recompute()
        node.backward()

    def gradient(self) -> np.ndarray:
        """The gradient of the last ``backward(full=True)``'s scalar with respect to this
        expression, shaped as :meth:`npvalue` (batchviz keeps the gradients of expressions
        that are not parameters only when ``full=True`` asks for them)."""
        node = self._node()
        graph = node.graph
        if not graph.keep_gradients and node.node not in graph.param_of_node:
            raise RuntimeError("gradient(): call backward(full=True) first; batchviz keeps "
                               "the gradients of expressions other than parameters only then")
        return graph.gradient_of(node.node).reshape(full_shape(self)).astype(np.float64)
