"""DyNet's ParameterCollection (``Model``): parameters, lookup tables and sub-collections,
named as DyNet names them, saved and loaded by those names.

A collection (and all its sub-collections) keeps its values in one batchviz
:class:`~batchviz.Model`; its parameters are :mod:`.parameters`' kinds. Names follow
DyNet's scheme (``/_0``, ``/W``, ``/W_1``, ``/sub/_0``), and are the names in saved files
(DyNet's text format, :mod:`.files`). The batchviz parameter behind each has the name the
user knows (``W``, or the variable it was assigned to), which pictures and messages show
(:mod:`.names`).
"""
from __future__ import annotations

import numbers

import numpy as np

from ..model import Model as BatchvizModel
from . import config, files
from .textformat import LOOKUP, PARAMETER
from . import graph as _graph
from .names import readable_name
from .initializers import GlorotInitializer, NumpyInitializer, PyInitializer, initializer_for
from .parameters import LookupParameters, OffsetParameters, Parameters


def _check_name(name: str) -> str:
    if not isinstance(name, str) or "/" in name or "_" in name:
        raise ValueError(f"parameter and collection names may not contain '/' or '_' (DyNet's "
                         f"separators), got {name!r}")
    return name


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
        self._collection_counts: dict = {}   # the same for sub-collections (DyNet counts
                                             # them apart: "/_0" and "/_0/" may both be)

    def _local_name(self, name, counts=None) -> str:
        base = "" if name is None else _check_name(str(name))
        counts = self._counts if counts is None else counts
        k = counts.get(base, 0)
        counts[base] = k + 1
        return base if base and k == 0 else f"{base}_{k}"

    def _add(self, cls, values: np.ndarray, name, offset=None):
        full = self._name + self._local_name(name)
        shown = readable_name(full, name, self._model._names)  # (what pictures name)
        if cls is LookupParameters:  # (rows of tensors are held flat, see LookupParameters)
            flat = values.reshape(values.shape[0], -1)
            p = self._model.add_lookup_parameters(flat.shape, init=flat, name=shown)
            stored = LookupParameters(p, full, row_dims=values.shape[1:])
        else:
            p = self._model.add_parameters(values.shape, init=values, name=shown)
            stored = cls(p, full) if offset is None else cls(p, full, offset)
        self._record(stored)
        return stored

    def add_parameters(self, dim, init=None, name="", device="", scale=1.0, mean=0.0,
                       std=1.0) -> Parameters:
        """A parameter of ``dim`` (an int or a tuple); ``init``: None (Glorot), a number, a
        name, an array or an initializer."""
        config.check_device(device, "add_parameters")
        if isinstance(init, np.ndarray):
            return self.parameters_from_numpy(init, name=name)
        dims = _dims(dim)
        values = initializer_for(init, scale, mean, std, dims[-1]).values(dims, _graph.rng())
        return self._add(Parameters, values, name or None)

    def add_lookup_parameters(self, dim, init=None, name="", device="", scale=1.0, mean=0.0,
                              std=1.0) -> LookupParameters:
        """A table of ``dim = (rows, d)`` (an int: ``(rows, 1)``)."""
        config.check_device(device, "add_lookup_parameters")
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
        config.check_device(device, "parameters_from_numpy")
        return self._add(Parameters, np.array(array, dtype=np.float64), name or None)

    def lookup_parameters_from_numpy(self, array, name="", device="") -> LookupParameters:
        config.check_device(device, "lookup_parameters_from_numpy")
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
        child = ParameterCollection(
            self, self._name + self._local_name(name, self._collection_counts) + "/")
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

    # --- files: DyNet's text format (see batchviz.dynet.files and .textformat) ------------------
    def save(self, fname, name: str = "", append: bool = False) -> None:
        """Write the collection to ``fname`` in DyNet's text format, as DyNet does: its
        parameters, then its tables, by their full names (with ``name``, which starts with
        '/', in place of the collection's own name, when given)."""
        files.save_collection(fname, self.parameters_list(), self.lookup_parameters_list(),
                              self._name, name, append)

    def populate(self, fname, key: str = "") -> None:
        """Read every value of the collection from ``fname``, saved by a collection made the
        same way: as DyNet, the file's parameters and tables (those whose names start with
        ``key``, when given) in order, each of its dimensions. Nothing is changed unless
        all of them fit (a RuntimeError names the record and what was expected)."""
        self._populate_from(files.ModelFile(fname), key)

    def _populate_from(self, source, key: str = "") -> None:
        """:meth:`populate` from a file already read (``dy.load`` reads its file once)."""
        params, lookups = self.parameters_list(), self.lookup_parameters_list()
        values = source.for_collection(params, lookups, self._name, key)
        for p, v in zip(params + lookups, values):
            p.set_value(v)

    write_to_textfile = save
    populate_from_textfile = populate

    def load_param(self, fname, key: str) -> Parameters:
        """A new parameter of this collection holding the values saved under ``key`` (and,
        as DyNet names it, called ``key``)."""
        _require_key(key, "load_param")
        return self._load_from(files.ModelFile(fname), PARAMETER, key)

    def load_lookup_param(self, fname, key: str) -> LookupParameters:
        """A new table of this collection holding the table saved under ``key``."""
        _require_key(key, "load_lookup_param")
        return self._load_from(files.ModelFile(fname), LOOKUP, key)

    def _load_from(self, source, kind: str, key: str):
        """A new parameter or table from the record ``key`` of a file already read."""
        values = source.named(kind, key)
        made = self.lookup_parameters_from_numpy(values) if kind == LOOKUP \
            else self.parameters_from_numpy(values)
        made._name = key
        return made

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


def _require_key(key: str, what: str) -> None:
    """DyNet's loader finds one parameter only by its full name."""
    if not key:
        raise ValueError(f"TextFileLoader.{what}() requires non-empty key")


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




__all__ = ["ParameterCollection", "Model", "PyInitializer", "GlorotInitializer"]
