"""Model parameters: dense parameters and lookup tables (embeddings), with gradients.

Parameters live outside any graph. When one is used in an expression, the graph gives it
a node of its own (one per graph); that node id is what a shared-argument signature names
(``matmul-W#3-64x1``), so every ``W @ h_i`` of a minibatch becomes one ``W @ H``. Their
values and gradients are :mod:`batchviz.parameters`'; here they get the operators
(``W @ h``, ``E[i]``) and a collection, :class:`Model`.
"""
from __future__ import annotations

import math
import numbers
import zipfile

import numpy as np

from . import backend
from .backend import state
from .errors import ModelFileError
from .expression import Operators
from .ops.leaves import lookup
from .parameters import DenseStore, LookupBase, ParameterBase


def _initial_values(shape: tuple, init, rng: np.random.Generator) -> np.ndarray:
    """Initial values for ``init``: "glorot" (default), "uniform", "zeros", "normal", a
    number (a constant), or an array of the right shape."""
    if isinstance(init, str):
        if init == "glorot":
            fan = sum(shape) if len(shape) > 1 else shape[0]
            bound = math.sqrt(6.0 / max(fan, 1))
            return rng.uniform(-bound, bound, size=shape)
        if init == "uniform":
            return rng.uniform(-0.1, 0.1, size=shape)
        if init == "normal":
            return rng.normal(0.0, 0.1, size=shape)
        if init == "zeros":
            return np.zeros(shape)
        raise ValueError(
            f"unknown initializer {init!r}; use 'glorot', 'uniform', 'normal', 'zeros', "
            "a number or an array"
        )
    if isinstance(init, numbers.Real):
        values = np.full(shape, float(init))
    else:
        values = np.asarray(init, dtype=np.float64)
        if values.shape != tuple(shape):
            raise ValueError(f"initial values have shape {values.shape}, expected {tuple(shape)}")
    if not np.all(np.isfinite(values)):
        raise ValueError("initial values contain NaN or infinity")
    return values


class Parameters(Operators, ParameterBase):
    """A dense parameter (a weight matrix or a bias vector); usable directly in expressions
    (``W @ h + b``)."""

    __slots__ = ()


class LookupParameters(Operators, LookupBase):
    """A lookup table (embeddings) of shape ``(rows, dim)``; ``E[i]`` is row ``i``."""

    __slots__ = ()

    def __getitem__(self, index):
        return lookup(self, index)


class Model:
    """A collection of parameters (DyNet's ``ParameterCollection``)."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)
        self._params: list[ParameterBase] = []
        self._names: set[str] = set()
        self._store = None   # the DenseStore of the dense parameters, once packed
        state.models.add(self)

    def _unique_name(self, name: str | None, prefix: str) -> str:
        """``name``, refused if taken; or, when None, ``prefix`` and a number not taken."""
        if name is None:
            k = len(self._params)
            while f"{prefix}{k}" in self._names:  # a name given by hand may look like ours
                k += 1
            name = f"{prefix}{k}"
        elif name in self._names:
            raise ValueError(f"a parameter named {name!r} already exists in this model")
        self._names.add(name)
        return name

    def unique_prefix(self, base: str) -> str:
        """``base``, or ``base_2``, ``base_3``, ...: the first that starts no parameter name
        of this model. A builder made without a ``name`` names its parameters with it
        (``lstm.l0.Wh``, then ``lstm_2.l0.Wh`` for a second LSTM), in creation order, so a
        model built by the same code again gets the same names and can :meth:`load`."""
        taken = {n.split(".", 1)[0] for n in self._names}
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        return name

    def add_parameters(self, shape, init="glorot", name: str | None = None) -> Parameters:
        """A dense parameter of ``shape`` (an int or a tuple)."""
        shape = _as_shape(shape)
        values = _initial_values(shape, init, self.rng)
        p = Parameters(self, shape, values, self._unique_name(name, "p"))
        self._params.append(p)
        self._store = None   # packed again, with this one, when a trainer next asks
        return p

    def add_lookup_parameters(self, shape, init="glorot", name: str | None = None) -> LookupParameters:
        """A lookup table of ``shape = (rows, dim)``: ``E[i]`` is a ``(dim,)`` vector."""
        shape = _as_shape(shape)
        if len(shape) != 2:
            raise ValueError(f"lookup parameters need a shape (rows, dim), got {shape}")
        if isinstance(init, str) and init == "glorot":  # DyNet initializes embeddings per row
            bound = math.sqrt(3.0 / shape[1])
            values = self.rng.uniform(-bound, bound, size=shape)
        else:
            values = _initial_values(shape, init, self.rng)
        p = LookupParameters(self, shape, values, self._unique_name(name, "E"))
        self._params.append(p)
        return p

    def parameters(self) -> list[ParameterBase]:
        return list(self._params)

    def __iter__(self):
        return iter(self._params)

    def zero_grad(self) -> None:
        for p in self._params:
            p.zero_grad()

    def dense_store(self) -> DenseStore:
        """The dense parameters (not lookup tables) in one :class:`DenseStore`, packed
        on the first call and again after parameters were added or the backend changed;
        trainers ask for it at every update."""
        if self._store is None:
            self._store = DenseStore([p for p in self._params if not isinstance(p, LookupBase)])
        return self._store

    def _convert(self, xp, dtype) -> None:
        for p in self._params:
            p._convert(xp, dtype)
        self._store = None   # the arrays are new, on the new backend or in the new dtype

    # --- saving and loading (.npz, one array per parameter name; never pickle) -----------
    def save(self, path) -> None:
        """Write every parameter's values to the ``.npz`` file ``path``, keyed by name."""
        arrays = {p.name: backend.to_numpy(p._array) for p in self._params}
        with open(path, "wb") as f:  # a file object: np.savez would append ".npz" to a name
            np.savez(f, **arrays)

    def load(self, path) -> None:
        """Read parameter values saved by :meth:`save`. Every parameter of this model must be
        in the file with its exact shape, and the file must hold nothing else; otherwise a
        :class:`~batchviz.ModelFileError` names the problem and *no* parameter is changed."""
        arrays = _read_npz(path)
        names = [p.name for p in self._params]
        missing = [n for n in names if n not in arrays]
        extra = sorted(set(arrays) - set(names))
        if missing or extra:
            raise ModelFileError(f"{path} does not match this model: missing parameters "
                                 f"{missing or 'none'}, unexpected parameters {extra or 'none'}")
        for p in self._params:
            values = arrays[p.name]
            if values.shape != p.shape:
                raise ModelFileError(f"{path}: parameter {p.name!r} has shape {values.shape} "
                                     f"in the file but {p.shape} in the model")
            if values.dtype.kind != "f" or not np.all(np.isfinite(values)):
                raise ModelFileError(f"{path}: parameter {p.name!r} holds {values.dtype} "
                                     "values that are not finite floats")
        for p in self._params:   # (into the arrays they have: they may be a store's views)
            p._array[...] = backend.to_device(arrays[p.name])

    def __repr__(self) -> str:
        n = sum(int(np.prod(p.shape)) for p in self._params)
        return f"<bv.Model {len(self._params)} parameters, {n} values>"


def _read_npz(path) -> dict:
    """The arrays of the ``.npz`` file ``path`` by name; a :class:`ModelFileError` for any
    other file. NumPy's own errors would talk about pickles (its advice for files that are
    not ``.npz``); a model file never holds one, and batchviz never unpickles."""
    not_a_model = f"{path} is not a batchviz .npz model file (one that Model.save writes)"
    with open(path, "rb") as f:  # a missing file is Python's FileNotFoundError
        if not zipfile.is_zipfile(f):
            raise ModelFileError(f"{not_a_model}: it is not an .npz archive")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except ValueError as exc:
        if "allow_pickle" not in str(exc):
            raise ModelFileError(f"{not_a_model}: {exc}") from exc
        raise ModelFileError(f"{not_a_model}: it holds Python objects, not arrays of "
                             "numbers") from None
    except Exception as exc:  # a damaged archive: zipfile's and NumPy's own errors
        raise ModelFileError(f"{not_a_model}: {exc}") from exc
    odd = sorted(name for name, value in arrays.items() if not isinstance(value, np.ndarray))
    if odd:
        raise ModelFileError(f"{not_a_model}: it holds files that are not NumPy arrays: {odd}")
    return arrays


def _as_shape(shape) -> tuple:
    if isinstance(shape, numbers.Integral):
        shape = (int(shape),)
    shape = tuple(int(d) for d in shape)
    if not shape or any(d <= 0 for d in shape):
        raise ValueError(f"parameter shape must be positive dimensions, got {shape}")
    return shape
