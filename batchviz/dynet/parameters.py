"""DyNet's Parameters and LookupParameters, and the expressions made of them (``lookup``,
``lookup_batch``, ``parameter``, ``const_parameter``).

Each DyNet parameter wraps one batchviz parameter of its collection's model
(:mod:`.collection`), so the runtime sees ordinary parameters (a ``W`` used by many ``W *
h`` is their shared argument, App. A). A parameter is an expression too, as in DyNet: ``W
* x`` works directly.

A parameter may be stored with a constant ``offset`` added (the forget-gate bias of an LSTM
builder, which DyNet adds at every step): DyNet's view of its values (``as_array``,
``set_value``, saving) takes the offset off, and used as an expression it is the stored
values minus the offset. Its gradient and updates are the same either way.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..backend import state
from ..ops import api as bv
# (the op built at every node, as a name of this module: not looked up in ``bv``)
from ..ops.leaves import lookup as bv_lookup
from . import files
from . import graph as _graph
from .expression import Expression, expression_of


class _Stored(Expression):
    """What Parameters and LookupParameters share: the batchviz parameter ``_p``, DyNet's
    full name, the ``updated`` flag and the offset of the stored values."""

    __slots__ = ("_p", "_name", "_updated", "_offset", "_const")

    def __init__(self, p, name: str, offset=None):
        self.bd = 1   # (``x``, what ops take, is set or computed by the subclasses)
        self._x = None  # (None: computed, see .expression.node_of)
        self._p, self._name, self._updated, self._offset = p, name, True, offset
        self._const = None  # (graph, its constant expression), see const_expr

    # --- values, in DyNet's view: float64 copies, as DyNet gives them ----------------------
    def as_array(self) -> np.ndarray:
        values = self._p.value().astype(np.float64)
        return values if self._offset is None else values - self._offset

    def grad_as_array(self) -> np.ndarray:
        return self._p.grad.astype(np.float64)

    def _file_values(self) -> np.ndarray:
        """The values as files keep them: :meth:`as_array` in the dtype they are computed
        in (float32 by default, half the bytes of float64)."""
        return self.as_array().astype(state.dtype)

    def gradient(self) -> np.ndarray:
        return self.grad_as_array()

    def set_value(self, arr) -> None:
        arr = np.asarray(arr, dtype=np.float64)
        if arr.shape != self.shape():
            raise ValueError(f"Shape of values and parameter don't match in set_value: "
                             f"{arr.shape} != {self.shape()}")
        self._p.set_value(arr if self._offset is None else arr + self._offset)

    def shape(self) -> tuple:
        return self._p.shape

    def zero(self) -> None:
        self.set_value(np.zeros(self.shape()))

    def scale(self, s: float) -> None:
        self.set_value(self.as_array() * float(s))

    def scale_gradient(self, s: float) -> None:
        if self._p._grad is not None:
            self._p.grad_array()[...] *= float(s)

    def clip_inplace(self, left: float, right: float) -> None:
        self.set_value(np.clip(self.as_array(), left, right))

    def is_updated(self) -> bool:
        return self._updated

    def set_updated(self, b: bool) -> None:
        """Whether trainers update this parameter (its gradient is still computed)."""
        self._updated = bool(b)

    def name(self) -> str:
        return self._name

    def npvalue(self, recalculate: bool = False) -> np.ndarray:
        return self.as_array()

    def const_expr(self) -> Expression:
        """This parameter as a constant: no gradient flows to it (``const_parameter``)."""
        g = _graph.current()
        if self._const is None or self._const[1].x.graph is not g:  # (or removed by a revert)
            self._const = (g, Expression(bv.nobackprop(self.x), 1))
        return self._const[1]

    def expr(self, update: bool = False) -> Expression:
        """DyNet's ``p.expr(update)``: the parameter, or (by default) a constant copy."""
        return self if update else self.const_expr()

    def save(self, fname, key: str = "", append: bool = False) -> None:
        """Write the values to the file ``fname`` in DyNet's text format, under ``key``
        (default: the parameter's name); ``append`` adds them to what the file holds."""
        files.save_one(fname, self, key, append)

    def populate(self, fname, key: str = "") -> None:
        """Read the values saved under ``key`` (default: the parameter's name) from a file
        in DyNet's text format (or an older batchviz.dynet ``.npz``)."""
        source = files.ModelFile(fname)
        self.set_value(source.named(files.kind_of(self), key or self._name, self.shape()))

    write_to_textfile = save
    populate_from_textfile = populate

    def __repr__(self) -> str:
        return f"<dynet {type(self).__name__} {self._name} {self.shape()}>"


class Parameters(_Stored):
    """A dense parameter; also an expression (``W * x``)."""

    __slots__ = ()

    def __init__(self, p, name: str, offset=None):
        super().__init__(p, name, offset)
        self._x = p


class OffsetParameters(Parameters):
    """A parameter stored with a constant offset added (see the module's docstring)."""

    __slots__ = ()

    def __init__(self, p, name: str, offset):
        _Stored.__init__(self, p, name, offset)

    @property
    def x(self):
        """As an expression: the stored values less the offset."""
        return bv.sub(self._p, bv.input(self._offset))


class LookupParameters(_Stored):
    """A lookup table: ``E[i]`` is row ``i``; ``E.batch(ids)`` a minibatch of rows. As an
    expression it is DyNet's ``dim x rows`` matrix (the transpose of ``as_array()``).

    A row may be a tensor (``add_lookup_parameters((rows, 1, 1, d))``, a CNN's word
    vectors as one-pixel images): batchviz's table holds each row flat, ``row_dims`` says
    what a row is, and a looked-up row is reshaped to it."""

    __slots__ = ("row_dims",)

    def __init__(self, p, name: str, offset=None, row_dims: tuple | None = None):
        super().__init__(p, name, offset)
        self.row_dims = tuple(row_dims) if row_dims is not None else tuple(p.shape[1:])

    @property
    def x(self):
        if len(self.row_dims) != 1:
            raise NotImplementedError(f"a table of rows of {self.row_dims} as an expression: "
                                      "look its rows up instead")
        return bv.transpose(self._p)

    def _rows(self, node, batch: int = 1):
        """A looked-up row (``batch``: a minibatch of rows, last) shaped as the table's."""
        if len(self.row_dims) == 1:
            return node
        return bv.reshape(node, self.row_dims + ((batch,) if batch > 1 else ()))

    def __getitem__(self, i) -> Expression:
        return lookup(self, i)

    def shape(self) -> tuple:
        return (self._p.shape[0],) + self.row_dims

    def as_array(self) -> np.ndarray:
        return super().as_array().reshape(self.shape())

    def grad_as_array(self) -> np.ndarray:
        return super().grad_as_array().reshape(self.shape())

    def set_value(self, arr) -> None:
        arr = np.asarray(arr, dtype=np.float64)
        if arr.shape != self.shape():
            raise ValueError(f"Shape of values and parameter don't match in set_value: "
                             f"{arr.shape} != {self.shape()}")
        self._p.set_value(arr.reshape(self._p.shape))

    def __len__(self) -> int:
        return self._p.shape[0]

    def batch(self, indices) -> Expression:
        return lookup_batch(self, indices)

    def init_row(self, i: int, row) -> None:
        """Row ``i`` from ``row``, a list of its values in DyNet's (column-major) order."""
        values = self.as_array()
        values[int(i)] = np.asarray(row, dtype=np.float64).reshape(values.shape[1:], order="F")
        self.set_value(values)

    def init_from_array(self, arr) -> None:
        self.set_value(arr)

    def row_as_array(self, row: int) -> np.ndarray:
        return self.as_array()[int(row)]

    def rows_as_array(self, rows) -> np.ndarray:
        return self.as_array()[list(rows)]

    def row_grad_as_array(self, row: int) -> np.ndarray:
        return self.grad_as_array()[int(row)]

    def rows_grad_as_array(self, rows) -> np.ndarray:
        return self.grad_as_array()[list(rows)]

    def npvalue(self, recalculate: bool = False) -> np.ndarray:
        return self.as_array().T

    def scalar_value(self, recalculate: bool = False):
        raise ValueError("scalar_value not applicable for LookupParameters")


class LookupExpression(Expression):
    """A looked-up row of a table (or a minibatch of rows), whose row ``set`` changes, as
    DyNet's lookup expressions: the graph computes again, with the new row, at the next
    ``value()`` (DyNet's way of reusing one graph for many words)."""

    __slots__ = ("table", "looked_up")

    def __init__(self, x, bd: int, table: LookupParameters, looked_up):
        super().__init__(x, bd)
        self.table, self.looked_up = table, looked_up   # the lookup node itself

    def set(self, index) -> None:
        """Look up row ``index`` instead (a list of rows, one per instance, for a
        minibatch)."""
        rows = [index] if self.bd == 1 and not isinstance(index, (list, tuple, range)) \
            else list(index)
        if len(rows) != self.bd:
            raise ValueError(f"set(): {len(rows)} rows for a lookup of a minibatch of {self.bd}")
        size = len(self.table)
        for row in rows:
            if not isinstance(row, numbers.Integral) or not 0 <= row < size:
                raise IndexError(f"set(): row {row!r} is not one of the {size} rows of "
                                 f"{self.table.name()}")
        node = self.looked_up
        node.graph.check_alive()
        node.graph.recompute({node.node: int(rows[0]) if self.bd == 1 else
                              [int(row) for row in rows]})


def lookup(p: LookupParameters, index: int = 0, update: bool = True) -> Expression:
    """Row ``index`` of the table ``p``; ``update=False`` makes it a constant."""
    if not isinstance(p, LookupParameters):
        raise TypeError(f"lookup needs LookupParameters, got {type(p).__name__}")
    table = p  # (a lookup table: its fields and methods reached directly when compiled)
    node = bv_lookup(table._p, index)
    row = table._rows(node)
    return looked_up(row if update else bv.nobackprop(row), 1, table, node)


def looked_up(x, bd: int, table: LookupParameters, node) -> LookupExpression:
    """``LookupExpression(x, bd, table, node)``, made without calling the class (see
    :func:`.expression.expression_of`): a word's lookup is built for every word."""
    e = expression_of(x, bd, LookupExpression)
    e.table, e.looked_up = table, node
    return e


def lookup_batch(p: LookupParameters, indices, update: bool = True) -> Expression:
    """Rows ``indices`` of ``p`` as a minibatch of vectors (one instance per index)."""
    if not isinstance(p, LookupParameters):
        raise TypeError(f"lookup_batch needs LookupParameters, got {type(p).__name__}")
    indices = list(indices)
    if len(indices) == 1:
        return lookup(p, indices[0], update)
    node = bv.lookup_batch(p._p, indices)
    rows = p._rows(node, len(indices))
    return LookupExpression(rows if update else bv.nobackprop(rows), len(indices), p, node)


def parameter(*params):
    """DyNet's ``parameter(p, ...)``: the parameters as expressions (they already are)."""
    return params[0] if len(params) == 1 else list(params)


def const_parameter(*params):
    """The parameters as constants: no gradient reaches them."""
    exprs = [p.const_expr() for p in params]
    return exprs[0] if len(exprs) == 1 else exprs


__all__ = ["Parameters", "LookupParameters", "LookupExpression", "lookup", "lookup_batch",
           "parameter", "const_parameter"]
