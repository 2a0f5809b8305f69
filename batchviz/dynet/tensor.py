"""DyNet's ``Tensor``: a value taken out of the graph (``expr.tensor_value()``), with the
few operations DyNet offers on it: ``as_numpy``, ``argmax``, ``topk`` and
``categorical_sample_log_prob``.

DyNet keeps a Tensor on the device, in the graph's memory, so that an argmax does not copy
the whole value to Python (and the Tensor is garbage once the graph is renewed). batchviz
copies the value when the Tensor is made, as ``npvalue()`` does: it stays valid after
``renew_cg`` and the operations run with NumPy on that copy. Its dimensions are DyNet's:
an array of ``dims`` with the minibatch as a last axis when there is one
(``expr.npvalue()``'s shape), and an operation along dimension ``d`` works on every
instance of a minibatch separately.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import graph as _graph


class Tensor:
    """A value of the graph, copied out of it: what ``expr.tensor_value()`` returns.

    ``Tensor(values, batch_size)`` makes one from an array shaped as ``npvalue()`` gives
    (the minibatch last when ``batch_size > 1``); ``Tensor()`` holds nothing, as DyNet's.
    A tensor of indices (from ``argmax``, ``topk``, ``categorical_sample_log_prob``) holds
    integers."""

    __slots__ = ("_values", "_bd")

    def __init__(self, values=None, batch_size: int = 1):
        if not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError(f"Tensor: batch_size must be a positive int, got {batch_size!r}")
        if values is not None:
            values = np.array(values)
            if values.dtype.kind not in "fiub":
                raise TypeError(f"Tensor: needs numbers, got an array of {values.dtype}")
            if values.ndim == 0:
                values = values.reshape(1)
            if batch_size > 1 and (values.ndim < 2 or values.shape[-1] != batch_size):
                raise ValueError(f"Tensor: a minibatch of {batch_size} is the last axis of "
                                 f"its values, but their shape is {values.shape}")
            values = values.astype(np.int64 if values.dtype.kind in "iub" else np.float64)
        self._values, self._bd = values, int(batch_size)

    # --- what DyNet's Tensor offers ----------------------------------------------------
    def as_numpy(self) -> np.ndarray:
        """The values as a NumPy array of their own (float64, or int64 for indices)."""
        return self._array("as_numpy").copy()

    def argmax(self, dim: int = 0, num: int = 1) -> "Tensor":
        """The index of the largest entry along dimension ``dim`` (the first one, if
        several are equal), for every position of the other dimensions: a tensor of
        indices whose dimension ``dim`` is 1. ``num`` must be 1, as in DyNet (which
        aborts for more; :meth:`topk` gives the ``num`` largest)."""
        values, axis = self._along("argmax", dim, num, only_one=True)
        return self._result(np.argmax(values, axis=axis, keepdims=True))

    def topk(self, dim: int = 0, num: int = 1) -> tuple:
        """``(values, indices)``: the ``num`` largest entries along dimension ``dim`` and
        where they were, two tensors whose dimension ``dim`` is ``num``. They come largest
        first (of equal ones, the first first); DyNet gives the same entries in no set
        order (and picks among equal ones its own way)."""
        values, axis = self._along("topk", dim, num)
        order = np.take(np.argsort(-values, axis=axis, kind="stable"), np.arange(num),
                        axis=axis)
        return self._result(np.take_along_axis(values, order, axis=axis)), self._result(order)

    def categorical_sample_log_prob(self, dim: int = 0, num: int = 1) -> "Tensor":
        """An index drawn along dimension ``dim`` from the distribution whose log
        probabilities the entries are (a ``log_softmax``'s value), for every position of
        the other dimensions; drawn from the seeded generator (DyNet's draws differ).
        ``num`` must be 1, as in DyNet."""
        values, axis = self._along("categorical_sample_log_prob", dim, num, only_one=True)
        tiny = np.finfo(np.float64).tiny
        uniform = np.clip(_graph.rng().random(values.shape), tiny, 1.0 - 1e-16)
        return self._result(np.argmax(values - np.log(-np.log(uniform)), axis=axis,
                                      keepdims=True))

    def __str__(self) -> str:
        kind = "int" if self._values is not None and self._values.dtype.kind == "i" else "float"
        return f"<Dynet Tensor:{kind}>"

    def __repr__(self) -> str:
        if self._values is None:
            return "<Dynet Tensor: empty>"
        return f"{str(self)[:-1]} {self._values.shape}>"

    # --- dimensions --------------------------------------------------------------------
    def _array(self, who: str) -> np.ndarray:
        if self._values is None:
            raise ValueError(f"Tensor.{who}(): this Tensor holds no value (made by Tensor() "
                             "alone); get one from expr.tensor_value()")
        return self._values

    def _along(self, who: str, dim, num, only_one: bool = False) -> tuple:
        """``(values, axis)``: the values with as many axes as dimension ``dim`` needs, and
        the axis that is dimension ``dim``. DyNet's tensors have three dimensions besides
        the minibatch, missing ones of size 1 (``argmax(1)`` of a vector is all zeros)."""
        values = self._array(who)
        dims = values.shape[:-1] if self._bd > 1 else values.shape
        for name, n in (("dim", dim), ("num", num)):
            if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
                raise ValueError(f"Tensor.{who}: {name} must be an int >= 0, got {n!r}")
        if dim >= max(3, len(dims)):
            raise ValueError(f"Tensor.{who}: dim {dim} is out of range: a tensor of dimensions "
                             f"{dims} has dimensions 0 to {max(3, len(dims)) - 1} (the missing "
                             "ones of size 1)")
        size = dims[dim] if dim < len(dims) else 1
        if only_one and num != 1:
            raise ValueError(f"Tensor.{who}: num must be 1 (DyNet does not support more either); "
                             "topk(dim, num) gives the num largest entries")
        if not 1 <= num <= size:
            raise ValueError(f"Tensor.{who}: num must be between 1 and {size}, the size of "
                             f"dimension {dim} of {dims}, got {num}")
        if dim >= len(dims):  # an axis of size 1 before the minibatch's
            extra = (1,) * (dim + 1 - len(dims))
            values = values.reshape(dims + extra + values.shape[len(dims):])
        return values, dim

    def _result(self, values: np.ndarray) -> "Tensor":
        """A tensor of the same minibatch, its dimensions those of ``self`` but along the
        axis worked on (an axis added for the operation is dropped again)."""
        dims = self._values.shape[:-1] if self._bd > 1 else self._values.shape
        batch = values.shape[-1:] if self._bd > 1 else ()
        kept = values.shape[:len(dims)]
        return Tensor(values.reshape(kept + batch), self._bd)
