"""DyNet's inputs: data, constants, random values, one-hot vectors and lookups.

Data is copied when the expression is made (as DyNet copies it); ``vecInput``,
``matInput``, ``scalarInput``, ``inputVector`` and ``inputTensor`` return an input whose
``set(values)`` replaces the data and marks the graph for recomputation, so that the next
``value()`` computes everything again with the new data (DyNet's way of reusing one graph
for many examples). ``device=`` arguments and ``to_device`` take DyNet's device names;
every expression runs on the one device of the program (:func:`.config.check_device`).
Random values (``random_normal``, ``random_bernoulli``, ``random_uniform``) are drawn on
the host from the seeded generator of :mod:`.graph`: they are inputs, constants to the
backward pass, as in DyNet (which draws other numbers: only their distribution is the
same).
"""
from __future__ import annotations

import numbers

import numpy as np

from ..backend import state
from ..ops import api as bv
from ..ops.leaves import INPUT
from . import config
from . import graph as _graph
from .dims import layout
from .expression import Expression, as_expression


def _dims(dim, who: str) -> tuple:
    dims = (int(dim),) if isinstance(dim, numbers.Integral) else tuple(int(d) for d in dim)
    if not dims or any(d <= 0 for d in dims):
        raise ValueError(f"{who}: dimensions must be positive, got {dim!r}")
    return dims


def _batch_size(batch_size, who: str) -> int:
    if not isinstance(batch_size, numbers.Integral) or batch_size < 1:
        raise ValueError(f"{who}: batch_size must be a positive int, got {batch_size!r}")
    return int(batch_size)


class InputExpression(Expression):
    """An input whose data can be replaced with :meth:`set`."""

    __slots__ = ()

    def set(self, values) -> None:
        """New data of the same size (a number, a list or an array; DyNet reads a list in
        column-major order, as it stores tensors). The graph computes again on the next
        ``value()``."""
        node = self.x
        g = node.graph
        g.check_alive()
        flat = np.asarray(values, dtype=np.float64).reshape(-1)
        shape = node.shape
        if flat.size != int(np.prod(shape)):
            raise ValueError(f"set(): {flat.size} values for an input of dimension {self.dim()}")
        g.recompute({node.node: flat.astype(state.dtype).reshape(shape, order="F")})


def _input_node(values: np.ndarray):
    """A batchviz input node holding ``values`` (already in the batchviz layout)."""
    return _graph.current().add(INPUT, (), np.ascontiguousarray(values, dtype=state.dtype))


def _input(values: np.ndarray, bd: int) -> InputExpression:
    """An input expression holding ``values`` (already in the batchviz layout)."""
    return InputExpression(_input_node(values), bd)


def _checked(values, who: str) -> np.ndarray:
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{who}: needs numbers, got {type(values).__name__} ({exc})") from None
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{who}: data contains NaN or infinity")
    return array


def scalarInput(s, device="") -> InputExpression:
    """A number, dimension ``(1,)``."""
    config.check_device(device, "scalarInput")
    return _input(_checked(float(s), "scalarInput"), 1)


def inputVector(v, device="") -> InputExpression:
    """A vector of the numbers ``v``."""
    config.check_device(device, "inputVector")
    array = _checked(v, "inputVector").reshape(-1)
    return _input(array if array.size > 1 else array.reshape(()), 1)


def vecInput(dim: int, device="") -> InputExpression:
    """A vector of ``dim`` zeros, to be filled with ``set``."""
    config.check_device(device, "vecInput")
    return inputVector(np.zeros(int(dim)))


def inputMatrix(v, d) -> InputExpression:
    """A matrix of dimension ``d`` from the flat list ``v`` in column-major order."""
    dims = _dims(d, "inputMatrix")
    return _input(_checked(v, "inputMatrix").reshape(dims, order="F"), 1)


def matInput(d1: int, d2: int) -> InputExpression:
    """A ``d1 x d2`` matrix of zeros, to be filled with ``set``."""
    return _input(np.zeros((int(d1), int(d2))), 1)


def inputTensor(arr, batched: bool = False, device="", reusable_expr=False) -> InputExpression:
    """An array as an expression; with ``batched=True`` its last axis is the minibatch
    (a 1-D array is then a batch of numbers). A list of NumPy arrays is a minibatch of
    them, whatever ``batched`` says, as in DyNet: its instances are the list's items."""
    config.check_device(device, "inputTensor")
    if isinstance(arr, list) and arr and all(isinstance(a, np.ndarray) for a in arr):
        shapes = {a.shape for a in arr}
        if len(shapes) > 1:
            raise ValueError(f"inputTensor: a list of arrays is a minibatch, and its arrays "
                             f"must have one shape, got {sorted(shapes)}")
        arr, batched = np.stack(arr, axis=-1), True
    array = _checked(arr, "inputTensor")
    if not batched:
        if array.size == 1 and array.ndim <= 1:
            array = array.reshape(())
        return _input(array, 1)
    if array.ndim == 0:
        raise ValueError("inputTensor(batched=True) needs the batch as the last axis of an array")
    bd = array.shape[-1]
    if bd == 1:
        return inputTensor(array[..., 0] if array.ndim > 1 else array.reshape(()), False)
    if array.ndim == 1 or array.shape[:-1] == (1,):  # a batch of numbers
        return _input(array.reshape(bd), bd)
    return _input(array, bd)


class inputTensorTranspose(Expression):  # (DyNet's name, a class there too)
    """DyNet's ``inputTensorTranspose(val, dim, batch_size)``: an input whose values come
    flat, in the order DyNet keeps them in memory: column-major, the first index moving
    fastest, the minibatch last. ``dim`` (default: one vector of every value) and
    ``batch_size`` say how to read them; their product must be ``len(val)``.

    Why: data already laid out that way (from DyNet, Fortran or Eigen code, or
    ``arr.ravel(order="F")``) goes in without being rearranged first; ``inputTensor``
    reads a NumPy array by its own indices instead. Unlike the inputs made by
    ``inputTensor``, it has no ``set()``, as in DyNet."""

    __slots__ = ()

    def __init__(self, val, dim=None, batch_size: int = 1, device=""):
        config.check_device(device, "inputTensorTranspose")
        flat = _checked(val, "inputTensorTranspose")
        if flat.ndim != 1:
            raise TypeError(f"inputTensorTranspose: needs the values as a flat list or a 1-d "
                            f"array (in column-major order), got an array of shape "
                            f"{flat.shape}; flatten it first, e.g. arr.ravel(order='F')")
        if dim is not None and not isinstance(dim, (tuple, list)):
            raise TypeError(f"inputTensorTranspose: dim must be a tuple of dimensions such as "
                            f"(2, 3), as in DyNet, got {dim!r}")
        dims = (flat.size,) if dim is None else _dims(dim, "inputTensorTranspose")
        bd = _batch_size(batch_size, "inputTensorTranspose")
        wanted = int(np.prod(dims)) * bd
        if wanted != flat.size:
            raise ValueError(f"inputTensorTranspose: dimensions {dims} and batch size {bd} "
                             f"hold {wanted} values, but {flat.size} were given")
        if dims == (1,):  # a number, or a minibatch of numbers
            values = flat.reshape(()) if bd == 1 else flat
        else:
            values = flat.reshape(layout(dims, bd), order="F")
        super().__init__(_input_node(values), bd)


def sparse_inputTensor(idxs, values, shape, batched: bool = False, defval: float = 0.0,
                       device="") -> InputExpression:
    """An array of ``shape`` that holds ``defval`` except at the positions ``idxs`` (one
    sequence of indices per dimension, as NumPy's advanced indexing), which hold
    ``values``; with ``batched=True`` the last dimension is the minibatch."""
    config.check_device(device, "sparse_inputTensor")
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise TypeError("sparse_inputTensor: values should be a 1d array")
    shape = tuple(int(d) for d in shape)
    if len(idxs) != len(shape):
        raise ValueError(f"sparse_inputTensor: {len(idxs)} sequences of indices for the "
                         f"{len(shape)} dimensions of {shape}")
    array = np.full(shape, float(defval))
    array[tuple(np.asarray(i, dtype=np.int64) for i in idxs)] = values
    return inputTensor(array, batched)


def _constant(dims, bd, value: float) -> Expression:
    if value == 0.0:
        return Expression(bv.zeros(layout(dims, bd)), bd)
    return _input(np.full(layout(dims, bd), float(value)), bd)


def zeros(dim, batch_size: int = 1) -> Expression:
    return _constant(_dims(dim, "zeros"), _batch_size(batch_size, "zeros"), 0.0)


zeroes = zeros


def ones(dim, batch_size: int = 1) -> Expression:
    return _constant(_dims(dim, "ones"), _batch_size(batch_size, "ones"), 1.0)


def constant(dim, val: float, batch_size: int = 1) -> Expression:
    return _constant(_dims(dim, "constant"), _batch_size(batch_size, "constant"), float(val))


def _random(dim, batch_size, who, draw) -> Expression:
    dims = _dims(dim, who)
    bd = _batch_size(batch_size, who)
    return _input(draw(_graph.rng(), layout(dims, bd)), bd)


def random_normal(dim, mean: float = 0.0, stddev: float = 1.0, batch_size: int = 1) -> Expression:
    return _random(dim, batch_size, "random_normal",
                   lambda rng, shape: rng.normal(mean, stddev, size=shape))


def random_bernoulli(dim, p: float, scale: float = 1.0, batch_size: int = 1) -> Expression:
    """``scale`` with probability ``p``, else 0."""
    return _random(dim, batch_size, "random_bernoulli",
                   lambda rng, shape: (rng.random(size=shape) < p) * float(scale))


def random_uniform(dim, left: float, right: float, batch_size: int = 1) -> Expression:
    return _random(dim, batch_size, "random_uniform",
                   lambda rng, shape: rng.uniform(left, right, size=shape))


def random_gumbel(dim, mu: float = 0.0, beta: float = 1.0, batch_size: int = 1) -> Expression:
    return _random(dim, batch_size, "random_gumbel",
                   lambda rng, shape: rng.gumbel(mu, beta, size=shape))


def one_hot(d: int, idx, device="") -> Expression:
    """A vector of ``d`` zeros with a 1 at ``idx``; a list of indices gives a batch of them."""
    config.check_device(device, "one_hot")
    if isinstance(idx, numbers.Integral):
        return _input(np.eye(int(d))[int(idx)], 1)
    rows = [int(i) for i in idx]
    if any(not 0 <= i < d for i in rows):
        raise IndexError(f"one_hot: an index of {rows} is out of range for {d} entries")
    values = np.eye(int(d))[rows].T
    return _input(values if len(rows) > 1 else values[:, 0], len(rows))


def to_device(e, device: str) -> Expression:
    """DyNet's ``to_device(e, device)``: ``e`` itself, since every expression lives on the
    one device of the program (a device name other than that one is warned about once)."""
    config.check_device(device, "to_device")
    return as_expression(e, "to_device")


class FloatValue:
    """DyNet's holder of one number, which its ``scalarInput`` reads when the graph runs
    (``set`` changes it, ``get`` reads it). batchviz.dynet's inputs keep their own values
    (``InputExpression.set``); this class is here for programs that make one."""

    convert = float

    def __init__(self, val=0):
        self.set(val)

    def set(self, val) -> None:
        self.val = self.convert(val)

    def get(self):
        return self.val


class UnsignedValue(FloatValue):
    """DyNet's holder of one index (what a lookup reads), as :class:`FloatValue`."""

    convert = int


class FloatVectorValue:
    """DyNet's holder of a list of numbers (what ``vecInput`` reads), as
    :class:`FloatValue`; ``size()`` is its length."""

    convert = float

    def __init__(self, vals):
        self.set(vals)

    def set(self, vals) -> None:
        self.vals = [self.convert(v) for v in vals]

    def get(self) -> list:
        return list(self.vals)

    def size(self) -> int:
        return len(self.vals)


class UnsignedVectorValue(FloatVectorValue):
    """DyNet's holder of a list of indices (what ``lookup_batch`` reads)."""

    convert = int
