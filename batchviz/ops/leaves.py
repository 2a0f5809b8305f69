"""Leaves of the graph: inputs, zeros, and lookups into embedding tables."""
from __future__ import annotations

import numbers

import numpy as np

from .. import backend
from ..backend import state
from ..graph import current_graph
from ..parameters import LookupBase
from .base import Op, register, shared_node
from .gradients import SparseRows


class Input(Op):
    """A constant given by the user (``bv.input(array)``). Batched: the data of all nodes
    is stacked into one block with one host-to-device copy."""

    name = "input"
    arity = 0

    def infer_shape(self, shapes, attrs):
        return attrs.shape

    def signature(self, graph, args, attrs, shape):
        return ("input", shape), ()

    def forward(self, xp, ins, attrs, n):
        return backend.to_device(np.stack(attrs))

    def backward(self, xp, ins, out, gout, attrs, n, needs):
        return []


class Zeros(Op):
    name = "zeros"
    arity = 0

    def infer_shape(self, shapes, attrs):
        return attrs

    def signature(self, graph, args, attrs, shape):
        return ("zeros", shape), ()

    def memo_key(self, graph, args, attrs):
        return (self, attrs)  # (the shape, which is the signature's)

    def forward(self, xp, ins, attrs, n):
        return xp.zeros((n,) + attrs[0], dtype=state.dtype)

    def backward(self, xp, ins, out, gout, attrs, n, needs):
        return []


class Lookup(Op):
    """Row ``i`` of a lookup table. The table is a shared argument, so all lookups into one
    table batch into a single gather ``E[[i1, i2, ...]]``."""

    name = "lookup"

    def infer_shape(self, shapes, attrs):
        return shapes[0][1:]

    def signature(self, graph, args, attrs, shape):
        return ("lookup", shared_node(args[0])), (0,)

    def memo_key(self, graph, args, attrs):
        return (self, args[0])  # the table's node fixes both the shape and the signature

    def forward(self, xp, ins, attrs, n):
        rows = backend.to_device_index(np.asarray(attrs, dtype=np.int64))
        return ins[0][rows]

    def backward(self, xp, ins, out, gout, attrs, n, needs):
        rows = backend.to_device_index(np.asarray(attrs, dtype=np.int64))
        return [SparseRows(rows, gout)]


INPUT = register(Input())
ZEROS = register(Zeros())
LOOKUP = register(Lookup())


def input(data, name=None):  # noqa: A001  (DyNet's and the paper's name)
    """A constant expression holding ``data`` (a number or an array), copied now, so that
    changing the array later does not silently change the graph."""
    if data is None:  # (NumPy would make it a NaN)
        raise TypeError("bv.input needs a number or an array of numbers, got None")
    if isinstance(data, np.ndarray) and data.dtype.kind not in "fiub":
        raise TypeError(f"bv.input needs numbers, got an array of {data.dtype}")
    try:
        values = np.array(data, dtype=state.dtype, copy=True)
    except (TypeError, ValueError) as exc:  # strings, ragged lists
        raise TypeError(f"bv.input needs a number or an array of numbers, got "
                        f"{type(data).__name__} ({exc})") from None
    if not np.all(np.isfinite(values)):
        where = tuple(int(i) for i in np.argwhere(~np.isfinite(values))[0]) if values.ndim else ()
        raise ValueError(f"bv.input: data contains NaN or infinity (first at index {where})")
    g = current_graph()
    return g.add(INPUT, (), values)


def zeros(shape):
    """A zero expression of ``shape`` (an int or a tuple), e.g. an RNN's initial state."""
    if type(shape) is not tuple and isinstance(shape, numbers.Integral):  # (a tuple skips
        shape = (int(shape),)                              # the ABC's slow test)
    shape = tuple([int(d) for d in shape])
    if shape and min(shape) <= 0:
        raise ValueError(f"bv.zeros: dimensions must be positive, got {shape}")
    g = current_graph()
    return g.add(ZEROS, (), shape)


def lookup(table, index):
    """Row ``index`` of lookup parameters ``table`` (also written ``table[index]``).

    Every word of every sentence is a lookup, so the common case (an ``int`` index into a
    table already used in the current graph) is a few checks, a dict lookup and a push."""
    if type(index) is not int:
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"lookup index into {getattr(table, 'name', table)} must be an "
                            f"int, got {type(index).__name__}")
        index = int(index)
    if not isinstance(table, LookupBase):
        raise TypeError(f"bv.lookup needs lookup parameters, got {type(table).__name__}")
    if not 0 <= index < table.shape[0]:
        raise IndexError(
            f"lookup index {index} is out of range for {table.name}, which has "
            f"{table.shape[0]} rows (valid: 0..{table.shape[0] - 1})"
        )
    graph = current_graph()
    node = graph.param_node.get(table)  # (a lookup table, checked above: hashable)
    if node is None:
        node = graph.parameter_node(table)
    return graph.add_memoized(LOOKUP, (node,), index, 1)  # (a parameter's depth is 0)


__all__ = ["input", "zeros", "lookup"]
