"""DyNet's parameter initializers, drawing from the generator seeded by ``--dynet-seed``.

Each gives the initial values of a parameter of a given shape: the same distributions as
DyNet's (the numbers themselves differ: another generator). A lookup table of ``rows``
vectors of ``d`` is initialized as DyNet stores it, one ``d x rows`` tensor (so Glorot's
scale of an embedding table is ``sqrt(6 / (d + rows))``; ``GlorotInitializer(is_lookup=True)``
leaves the rows out, ``sqrt(3 / d)``).
"""
from __future__ import annotations

import math

import numpy as np


class PyInitializer:
    """Base class: ``values(shape, rng)`` returns the initial values, float64."""

    def values(self, shape: tuple, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def lookup_values(self, rows: int, dims: tuple, rng: np.random.Generator) -> np.ndarray:
        """The values of a lookup table of ``rows`` rows of ``dims`` (``(rows,) + dims``)."""
        return self.values((rows,) + tuple(dims), rng)


class NormalInitializer(PyInitializer):
    """Normal values of mean ``mean`` and *variance* ``var`` (DyNet's arguments)."""

    def __init__(self, mean: float = 0.0, var: float = 1.0):
        if var < 0:
            raise ValueError(f"NormalInitializer: the variance must be >= 0, got {var}")
        self.mean, self.var = float(mean), float(var)

    def values(self, shape, rng):
        return rng.normal(self.mean, math.sqrt(self.var), size=shape)


class UniformInitializer(PyInitializer):
    """Uniform values in ``[-scale, scale]``."""

    def __init__(self, scale: float):
        self.scale = float(scale)

    def values(self, shape, rng):
        return rng.uniform(-self.scale, self.scale, size=shape)


class ConstInitializer(PyInitializer):
    def __init__(self, c: float):
        self.c = float(c)

    def values(self, shape, rng):
        return np.full(shape, self.c)


class IdentityInitializer(PyInitializer):
    """The identity matrix (square matrices only)."""

    def values(self, shape, rng):
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"IdentityInitializer needs a square matrix, got shape {shape}")
        return np.eye(shape[0])


class GlorotInitializer(PyInitializer):
    """Uniform in ``[-s, s]`` with ``s = gain * sqrt(3 k / (d_1 + ... + d_k))`` over the
    ``k`` dimensions (``sqrt(6 / (m + n))`` for an ``m x n`` matrix; for a 4-d convolution
    filter, fans in and out times the receptive field). ``is_lookup``: the last dimension
    counts the rows of a table and is left out."""

    def __init__(self, is_lookup: bool = False, gain: float = 1.0):
        self.is_lookup, self.gain = bool(is_lookup), float(gain)

    def values(self, shape, rng):
        dims = shape[:-1] if self.is_lookup and len(shape) > 1 else shape
        return rng.uniform(-1.0, 1.0, size=shape) * self.scale(dims)

    def lookup_values(self, rows, dims, rng):
        """DyNet's tensor of a table is ``dims + (rows,)``; ``is_lookup`` leaves the rows out."""
        fans = tuple(dims) if self.is_lookup else tuple(dims) + (rows,)
        return rng.uniform(-1.0, 1.0, size=(rows,) + tuple(dims)) * self.scale(fans)

    def scale(self, dims) -> float:
        """The bound ``s`` for a tensor of dimensions ``dims``."""
        if len(dims) == 4:
            field = dims[0] * dims[1]
            return self.gain * math.sqrt(6.0 / (dims[2] * field + dims[3] * field))
        return self.gain * math.sqrt(3.0 * len(dims) / sum(dims))


class SaxeInitializer(PyInitializer):
    """A random orthonormal matrix (Saxe et al., 2014) times ``scale``."""

    def __init__(self, scale: float = 1.0):
        self.scale = float(scale)

    def values(self, shape, rng):
        if len(shape) != 2:
            raise ValueError(f"SaxeInitializer needs a matrix, got shape {shape}")
        rows, cols = shape
        q, r = np.linalg.qr(rng.normal(size=(max(rows, cols), min(rows, cols))))
        q *= np.sign(np.diag(r))  # a uniformly random orthonormal basis
        return self.scale * (q if rows >= cols else q.T)


class NumpyInitializer(PyInitializer):
    """The values of an array (of the parameter's shape)."""

    def __init__(self, array):
        self.array = np.asarray(array, dtype=np.float64)

    def values(self, shape, rng):
        if self.array.shape != tuple(shape):
            raise ValueError(f"NumpyInitializer: the array has shape {self.array.shape}, the "
                             f"parameter {tuple(shape)}")
        return self.array.copy()


class FromFileInitializer(PyInitializer):
    def __init__(self, fname):
        raise NotImplementedError("FromFileInitializer: batchviz.dynet does not read DyNet's "
                                  "text files; load the values with NumPy and use "
                                  "NumpyInitializer(array) or parameters_from_numpy(array)")


def initializer_for(init, scale: float = 1.0, mean: float = 0.0, std: float = 1.0,
                    last_dim: int = 1) -> PyInitializer:
    """The initializer of ``add_parameters(init=...)``: None (Glorot), a number (a
    constant), a name ("glorot", "uniform", "normal", "identity", "saxe", "he") or an
    initializer. ``last_dim`` is the size that "he" scales by, as DyNet's."""
    if init is None:
        return GlorotInitializer()
    if isinstance(init, PyInitializer):
        return init
    if isinstance(init, (int, float)) and not isinstance(init, bool):
        return ConstInitializer(init)
    named = {
        "glorot": GlorotInitializer,
        "uniform": lambda: UniformInitializer(scale),
        "normal": lambda: NormalInitializer(mean, std * std),
        "identity": IdentityInitializer,
        "saxe": SaxeInitializer,
        "he": lambda: NormalInitializer(0.0, 1.0 / (2 * last_dim)),
    }
    if isinstance(init, str) and init in named:
        return named[init]()
    raise ValueError(f"unrecognized initializer {init!r}: use None, a number, an array, one of "
                     f"{sorted(named)} or a dy.PyInitializer")
