"""DyNet's ParameterCollection (``Model``), Parameters and LookupParameters.

A collection (and all its sub-collections) keeps its values in one batchviz
:class:`~batchviz.Model`; each DyNet parameter wraps one batchviz parameter, so the runtime
sees ordinary parameters (a ``W`` used by many ``W * h`` is their shared argument, App. A).
Names follow DyNet's scheme (``/_0``, ``/W``, ``/W_1``, ``/sub/_0``), and are the keys of
saved files. A parameter is an expression too, as in DyNet: ``W * x`` works directly.

A parameter may be stored with a constant ``offset`` added (the forget-gate bias of an LSTM
builder, which DyNet adds at every step): DyNet's view of its values (``as_array``,
``set_value``, saving) takes the offset off, and used as an expression it is the stored
values minus the offset. Its gradient and updates are the same either way.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..model import Model as BatchvizModel
from ..ops import api as bv
from . import files
from . import graph as _graph
from .expression import Expression
from .initializers import GlorotInitializer, NumpyInitializer, PyInitializer, initializer_for


def _check_name(name: str) -> str:
    if not isinstance(name, str) or "/" in name or "_" in name:
        raise ValueError(f"parameter and collection names may not contain '/' or '_' (DyNet's "
                         f"separators), got {name!r}")
    return name


class _Stored(Expression):
    """What Parameters and LookupParameters share: the batchviz parameter ``_p``, DyNet's
    full name, the ``updated`` flag and the offset of the stored values."""

    __slots__ = ("_p", "_name", "_updated", "_offset", "_const")

    def __init__(self, p, name: str, offset=None):
        self.bd = 1   # (``x``, what ops take, is set or computed by the subclasses)
        self._p, self._name, self._updated, self._offset = p, name, True, offset
        self._const = None  # (graph, its constant expression), see const_expr

    # --- values, in DyNet's view ----------------------------------------------------------
    def as_array(self) -> np.ndarray:
        values = self._p.value()
        return values if self._offset is None else values - self._offset

    def grad_as_array(self) -> np.ndarray:
        return self._p.grad

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
        if self._const is None or self._const[0] is not g:
            self._const = (g, Expression(bv.nobackprop(self.x), 1))
        return self._const[1]

    def expr(self, update: bool = False) -> Expression:
        """DyNet's ``p.expr(update)``: the parameter, or (by default) a constant copy."""
        return self if update else self.const_expr()

    def save(self, fname, key: str = "", append: bool = False) -> None:
        """Write the values to the file ``fname`` (``.npz``) under ``key`` (default: the
        parameter's name); ``append`` adds them to what the file holds."""
        files.write(fname, {key or self._name: self.as_array()}, append)

    def populate(self, fname, key: str = "") -> None:
        """Read the values saved under ``key`` (default: the parameter's name)."""
        self.set_value(files.read_one(fname, key or self._name, self.shape()))

    write_to_textfile = save
    populate_from_textfile = populate

    def __repr__(self) -> str:
        return f"<dynet {type(self).__name__} {self._name} {self.shape()}>"


class Parameters(_Stored):
    """A dense parameter; also an expression (``W * x``)."""

    __slots__ = ()

    def __init__(self, p, name: str, offset=None):
        super().__init__(p, name, offset)
        self.x = p


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
        return Expression(self._rows(bv.lookup(self._p, i)), 1)

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
        values = self.as_array()
        values[int(i)] = np.asarray(row, dtype=np.float64).reshape(values.shape[1:])
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


def lookup(p: LookupParameters, index: int = 0, update: bool = True) -> Expression:
    """Row ``index`` of the table ``p``; ``update=False`` makes it a constant."""
    if not isinstance(p, LookupParameters):
        raise TypeError(f"lookup needs LookupParameters, got {type(p).__name__}")
    row = Expression(p._rows(bv.lookup(p._p, index)), 1)
    return row if update else Expression(bv.nobackprop(row.x), 1)


def lookup_batch(p: LookupParameters, indices, update: bool = True) -> Expression:
    """Rows ``indices`` of ``p`` as a minibatch of vectors (one instance per index)."""
    if not isinstance(p, LookupParameters):
        raise TypeError(f"lookup_batch needs LookupParameters, got {type(p).__name__}")
    indices = list(indices)
    if len(indices) == 1:
        return lookup(p, indices[0], update)
    rows = Expression(p._rows(bv.lookup_batch(p._p, indices), len(indices)), len(indices))
    return rows if update else Expression(bv.nobackprop(rows.x), rows.bd)


def parameter(*params):
    """DyNet's ``parameter(p, ...)``: the parameters as expressions (they already are)."""
    return params[0] if len(params) == 1 else list(params)


def const_parameter(*params):
    """The parameters as constants: no gradient reaches them."""
    exprs = [p.const_expr() for p in params]
    return exprs[0] if len(exprs) == 1 else exprs


class ParameterCollection:
    """DyNet's ``ParameterCollection`` (also ``Model``): parameters, lookup tables and
    sub-collections (``add_subcollection``), all trained together by a trainer."""

    def __init__(self, parent=None, name: str = "/"):
        _graph.current()  # the settings (seed, device) and the first graph, as at DyNet's import
        self._parent = parent
        self._model = parent._model if parent is not None else BatchvizModel()
        self._name = name
        # its parameters and lookup tables and its sub-collections', in the order they were
        # made (DyNet's parameters_list() order)
        self._made: list = []
        self._counts: dict = {}      # names given so far -> how many times

    def _local_name(self, name) -> str:
        base = "" if name is None else _check_name(str(name))
        k = self._counts.get(base, 0)
        self._counts[base] = k + 1
        return base if base and k == 0 else f"{base}_{k}"

    def _add(self, cls, values: np.ndarray, name, offset=None):
        full = self._name + self._local_name(name)
        if cls is LookupParameters:  # (rows of tensors are held flat, see LookupParameters)
            flat = values.reshape(values.shape[0], -1)
            p = self._model.add_lookup_parameters(flat.shape, init=flat, name=full)
            stored = LookupParameters(p, full, row_dims=values.shape[1:])
        else:
            p = self._model.add_parameters(values.shape, init=values, name=full)
            stored = cls(p, full) if offset is None else cls(p, full, offset)
        self._record(stored)
        return stored

    def add_parameters(self, dim, init=None, name="", device="", scale=1.0, mean=0.0,
                       std=1.0) -> Parameters:
        """A parameter of ``dim`` (an int or a tuple); ``init``: None (Glorot), a number, a
        name, an array or an initializer."""
        if isinstance(init, np.ndarray):
            return self.parameters_from_numpy(init, name=name)
        dims = _dims(dim)
        values = initializer_for(init, scale, mean, std, dims[-1]).values(dims, _graph.rng())
        return self._add(Parameters, values, name or None)

    def add_lookup_parameters(self, dim, init=None, name="", device="", scale=1.0, mean=0.0,
                              std=1.0) -> LookupParameters:
        """A table of ``dim = (rows, d)`` (an int: ``(rows, 1)``)."""
        if isinstance(init, np.ndarray):
            return self.lookup_parameters_from_numpy(init, name=name)
        dims = (int(dim), 1) if isinstance(dim, numbers.Integral) else _dims(dim)
        if len(dims) < 2:
            raise ValueError(f"add_lookup_parameters({dims}): a table needs its rows and what "
                             "a row is, dim = (rows, d) or (rows, d1, d2, ...)")
        if isinstance(init, NumpyInitializer):
            raise ValueError("Do not use NumpyInitializer with add_lookup_parameters, use "
                             "lookup_parameters_from_numpy instead")
        values = initializer_for(init, scale, mean, std, dims[-1]).lookup_values(
            dims[0], dims[1:], _graph.rng())
        return self._add(LookupParameters, values, name or None)

    def parameters_from_numpy(self, array, name="", device="") -> Parameters:
        return self._add(Parameters, np.array(array, dtype=np.float64), name or None)

    def lookup_parameters_from_numpy(self, array, name="", device="") -> LookupParameters:
        array = np.array(array, dtype=np.float64)
        if array.ndim < 2:
            raise ValueError("lookup_parameters_from_numpy: a (rows, d) or (rows, d1, d2, ...) "
                             f"array, got shape {array.shape}")
        return self._add(LookupParameters, array, name or None)

    def adopt(self, p, offset=None) -> Parameters:
        """A batchviz parameter made by a batchviz builder (on this collection's model) as a
        parameter of this collection, named as DyNet names it; ``offset``: what its stored
        values hold beyond DyNet's (see the module's docstring)."""
        full = self._name + self._local_name(None)
        stored = Parameters(p, full) if offset is None else OffsetParameters(p, full, offset)
        self._record(stored)
        return stored

    def add_subcollection(self, name=None) -> "ParameterCollection":
        child = ParameterCollection(self, self._name + self._local_name(name) + "/")
        return child

    # --- what the collection holds ----------------------------------------------------------
    def _record(self, stored) -> None:
        """``stored`` is made: it belongs to this collection and to every one above it."""
        collection = self
        while collection is not None:
            collection._made.append(stored)
            collection = collection._parent

    def _all(self) -> list:
        return list(self._made)

    def parameters_list(self) -> list:
        return [p for p in self._all() if isinstance(p, Parameters)]

    def lookup_parameters_list(self) -> list:
        return [p for p in self._all() if isinstance(p, LookupParameters)]

    def parameter_count(self) -> int:
        return int(sum(np.prod(p.shape()) for p in self._all()))

    def name(self) -> str:
        return self._name

    # --- files (.npz, keyed by names; see batchviz.dynet.files) -------------------------------
    def save(self, fname, name: str = "", append: bool = False) -> None:
        """Write every value of the collection to ``fname``, keyed by the parameters' names
        (with ``name`` in place of the collection's own name, when given)."""
        prefix = name or self._name
        files.write(fname, {prefix + p._name[len(self._name):]: p.as_array()
                            for p in self._all()}, append)

    def populate(self, fname, key: str = "") -> None:
        """Read every value of the collection from ``fname``, saved by a collection made
        the same way (under the name ``key``, by default this collection's name). Nothing
        is changed unless every parameter is found with its shape."""
        prefix = key or self._name
        params = self._all()
        values = files.read_all(fname, [prefix + p._name[len(self._name):] for p in params],
                                [p.shape() for p in params])
        for p, v in zip(params, values):
            p.set_value(v)

    write_to_textfile = save
    populate_from_textfile = populate

    def load_param(self, fname, key: str) -> Parameters:
        """A new parameter of this collection holding the values saved under ``key``."""
        return self.parameters_from_numpy(files.read_one(fname, key))

    def load_lookup_param(self, fname, key: str) -> LookupParameters:
        return self.lookup_parameters_from_numpy(files.read_one(fname, key))

    def get_weight_decay(self) -> float:
        return 0.0

    def set_weight_decay(self, lam: float) -> None:
        if lam:
            raise NotImplementedError("set_weight_decay: batchviz.dynet has no global weight "
                                      "decay; add lambda * dy.squared_norm(p) to the loss")

    set_weight_decay_lambda = set_weight_decay

    def __repr__(self) -> str:
        return f"<dynet ParameterCollection {self._name}: {len(self._all())} parameters>"


Model = ParameterCollection


def _dims(dim) -> tuple:
    if isinstance(dim, numbers.Integral):
        return (int(dim),)
    if not isinstance(dim, (tuple, list)) or not dim:
        raise TypeError(f"a parameter's dimension is an int or a tuple of ints, got {dim!r}")
    if any(isinstance(d, float) and not d.is_integer() for d in dim):
        raise ValueError(f"dimensions must be whole numbers, got {dim}")
    dims = tuple(int(d) for d in dim)
    if any(d <= 0 for d in dims):
        raise ValueError(f"dimensions must be positive, got {dims}")
    return dims


__all__ = ["ParameterCollection", "Model", "Parameters", "LookupParameters", "lookup",
           "lookup_batch", "parameter", "const_parameter", "PyInitializer", "GlorotInitializer"]
