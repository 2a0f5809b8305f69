"""The array backend: which array library (``xp``) the kernels run on, and the float dtype.

All kernels are written once against the NumPy API and receive the namespace ``xp`` as an
argument, so that the same code runs on NumPy (CPU) and CuPy (GPU). This module is the only
place that decides which one it is.

Select CuPy with ``bv.set_backend("cupy")`` or the environment variable
``BATCHVIZ_BACKEND=cupy``. float32 is the default dtype; ``bv.set_dtype(np.float64)`` is what
the gradient checks use.
"""
from __future__ import annotations

import math
import os
import weakref

import numpy as np

from .errors import BackendError

_VALID_BACKENDS = ("numpy", "cupy")


class _State:
    xp = np
    name = "numpy"
    dtype = np.dtype(np.float32)
    # Models register here so that set_dtype/set_backend can convert existing parameters.
    models: "weakref.WeakSet" = weakref.WeakSet()
    # Counts of host<->device transfers made by batchviz itself (always 0 on NumPy).
    host_to_device = 0
    device_to_host = 0


state = _State()


def _load_cupy():
    try:
        import cupy  # noqa: F401
    except Exception as exc:  # ImportError, or CUDA libraries missing
        raise BackendError(
            "backend 'cupy' was requested but CuPy could not be imported "
            f"({type(exc).__name__}: {exc}). Install it with `pip install batchviz[gpu]` "
            "(cupy-cuda12x) on a machine with an NVIDIA GPU, or use the default 'numpy' backend."
        ) from exc
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        raise BackendError(f"backend 'cupy' was requested but no CUDA device is usable: {exc}") from exc
    if n < 1:
        raise BackendError("backend 'cupy' was requested but no CUDA device was found")
    return cupy


def set_backend(name: str) -> None:
    """Run all following graphs on ``"numpy"`` (default) or ``"cupy"``.

    Existing models' parameters are moved to the new backend."""
    if name not in _VALID_BACKENDS:
        raise ValueError(f"unknown backend {name!r}; valid backends are {', '.join(_VALID_BACKENDS)}")
    xp = np if name == "numpy" else _load_cupy()
    old = state.xp
    state.xp, state.name = xp, name
    if old is not xp:
        for model in list(state.models):
            model._convert(xp, state.dtype)


def get_backend() -> str:
    """The name of the current backend: ``"numpy"`` or ``"cupy"``."""
    return state.name


def set_dtype(dtype) -> None:
    """Use ``dtype`` (float32 or float64) for parameters, inputs and all computation.

    Existing models' parameters are converted, so the whole program stays in one dtype."""
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    state.dtype = dt
    for model in list(state.models):
        model._convert(state.xp, dt)


def get_dtype() -> np.dtype:
    """The current float dtype."""
    return state.dtype


def synchronize() -> None:
    """Wait until the device has finished every kernel launched so far (nothing on NumPy).

    CuPy launches kernels asynchronously: a Python call returns as soon as its kernel is
    queued. Timing a pass on the GPU therefore needs this wait at its end; batchviz itself
    never calls it inside forward or backward, so that launching and computing overlap."""
    if state.xp is not np:
        state.xp.cuda.get_current_stream().synchronize()


def device_name() -> str:
    """What the current backend computes on: ``"cpu"``, or the GPU's name on CuPy."""
    if state.xp is np:
        return "cpu"
    name = state.xp.cuda.runtime.getDeviceProperties(state.xp.cuda.Device().id)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def to_device(array):
    """A host (NumPy) array as an array of the current backend, in the current dtype."""
    if state.xp is np:
        return np.asarray(array, dtype=state.dtype)
    state.host_to_device += 1
    return state.xp.asarray(np.asarray(array, dtype=state.dtype))


def to_device_index(array):
    """An integer index array on the current backend (gathers and scatters need them there)."""
    if state.xp is np:
        return array
    state.host_to_device += 1
    return state.xp.asarray(array)


def to_numpy(array) -> np.ndarray:
    """A backend array as a NumPy array (a device-to-host copy on CuPy, counted)."""
    if isinstance(array, np.ndarray):
        return array
    state.device_to_host += 1
    return array.get()


#: the arrays of :func:`constant`, by backend, dtype and value
_CONSTANTS: dict = {}


def constant(xp, value: float, like):
    """``value`` as a 0-d array of ``like``'s dtype on ``xp``, made once. Given a Python
    number, a ufunc works out the number's type on every call (NumPy: several times the
    cost of the operation on a batch's few hundred values); given an array of the
    operand's own dtype it has nothing to work out, and computes the same values."""
    key = (xp, like.dtype, value)
    array = _CONSTANTS.get(key)
    if array is None:
        array = _CONSTANTS[key] = xp.asarray(value, dtype=like.dtype)
    return array


def scatter_add(target, index, values) -> None:
    """``target[index] += values`` where ``index`` may repeat, as one fused kernel.

    NumPy's and CuPy's ``add.at`` (one atomic-add kernel on the GPU) are the "dense-to-sparse"
    copy of the paper's App. B: gradients of gathered arguments go back where they came from."""
    if state.xp is np:
        if values.ndim >= 2 and len(index) > 1:
            _add_rows(target, index, values)
        else:
            np.add.at(target, index, values)
    elif hasattr(state.xp.add, "at"):  # CuPy 13 and later
        state.xp.add.at(target, index, values)
    else:
        import cupyx

        cupyx.scatter_add(target, index, values)


def erf(xp, x):
    """The Gaussian error function of ``x``, element by element, in ``x``'s dtype. ``xp`` is
    the module of ``x``, as every op's kernel is given it.

    NumPy has no ``erf`` (SciPy, which has, is not a dependency), so on NumPy it is Python's
    ``math.erf`` called per element: accurate to double precision, at about 0.1 µs an
    element, which is enough for an op that programs use rarely. CuPy has it as one kernel
    (``cupyx.scipy.special.erf``)."""
    if xp is np:
        return np.vectorize(math.erf, otypes=[x.dtype])(x)
    import cupyx.scipy.special

    return cupyx.scipy.special.erf(x)


def lgamma(xp, x):
    """``log |Gamma(x)|``, element by element, in ``x``'s dtype: ``inf`` at the poles ``0, -1,
    -2, ...``. As :func:`erf`: on NumPy Python's ``math.lgamma`` per element (NumPy has none),
    on CuPy one kernel (``cupyx.scipy.special.gammaln``)."""
    if xp is np:
        return np.vectorize(_lgamma_of_number, otypes=[x.dtype])(x)
    import cupyx.scipy.special

    return cupyx.scipy.special.gammaln(x)


def _lgamma_of_number(v: float) -> float:
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):  # a pole (Gamma is infinite), or beyond 2.5e305
        return math.inf


#: :func:`digamma` moves its argument up to at least this before the asymptotic series: its
#: first term left out, ``691 / (32760 x^12)``, is below 2e-14 from here on
DIGAMMA_SERIES_FROM = 10


def digamma(xp, x):
    """``psi(x) = d/dx log Gamma(x)``, element by element, for any real ``x``: the slope of
    :func:`lgamma`. Neither NumPy nor CuPy (without SciPy's) has it, so it is written with
    their common functions, accurate to about 1e-14 in float64:

    * ``x > 0``: the recurrence ``psi(x) = psi(x + 1) - 1/x`` until ``x >= 10``, then the
      asymptotic series ``ln x - 1/(2x) - 1/(12x^2) + 1/(120x^4) - 1/(252x^6) + 1/(240x^8)
      - 5/(660x^10)``;
    * ``x <= 0``: the reflection ``psi(x) = psi(1 - x) - pi / tan(pi x)``; at the poles
      ``0, -1, -2, ...`` ``+inf``, as DyNet's (Eigen's) digamma."""
    reflected = x <= 0
    pole = reflected & (x == xp.floor(x))
    y = xp.where(reflected, 1.0 - x, x)
    shift = xp.zeros_like(y)
    for _ in range(DIGAMMA_SERIES_FROM):
        small = y < DIGAMMA_SERIES_FROM
        shift -= xp.where(small, 1.0 / y, 0.0)
        y = xp.where(small, y + 1.0, y)
    z = 1.0 / (y * y)
    series = z * (1 / 12 - z * (1 / 120 - z * (1 / 252 - z * (1 / 240 - z * (5 / 660)))))
    psi = xp.log(y) - 0.5 / y - series + shift
    cotangent_term = math.pi / xp.tan(math.pi * xp.where(reflected & ~pole, x, 0.5))
    return xp.where(pole, xp.inf, xp.where(reflected, psi - cotangent_term, psi))


def segment_sums(xp, rows, counts):
    """``(len(counts), ...)``: the sums of consecutive runs of ``rows``, run ``i`` being the
    next ``counts[i]`` rows (each at least one). A batch of sums of different numbers of
    arguments adds each node's arguments this way. NumPy: one ``add.reduceat``; another
    backend: the rows scattered onto their run's sum (:func:`_segment_sums_by_scatter`).
    ``xp`` is the module of ``rows``, as every op's kernel is given it."""
    if xp is np:
        starts = np.zeros(len(counts), dtype=np.intp)
        np.cumsum(counts[:-1], out=starts[1:])
        return np.add.reduceat(rows, starts, axis=0)
    return _segment_sums_by_scatter(xp, rows, counts)


def _segment_sums_by_scatter(xp, rows, counts):
    """:func:`segment_sums` with one ``add.at`` kernel: each row added onto the sum of its
    run (the run numbers go to the device once)."""
    runs = np.repeat(np.arange(len(counts), dtype=np.intp), counts)
    if xp is not np:
        runs = to_device_index(runs)
    sums = xp.zeros((len(counts),) + rows.shape[1:], dtype=rows.dtype)
    if xp is np:
        np.add.at(sums, runs, rows)
    else:
        scatter_add(sums, runs, rows)
    return sums


def _add_rows(target, rows, values) -> None:
    """``target[rows] += values`` for whole rows (a lookup table's gradient): sort the rows,
    sum the values of each distinct row with one ``add.reduceat``, add once per row. NumPy's
    ``add.at`` handles repeats element by element and is about twice as slow here."""
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    first = np.empty(len(sorted_rows), dtype=bool)  # first of its row (not np.r_: 10 µs a call)
    first[0] = True
    np.not_equal(sorted_rows[1:], sorted_rows[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    target[sorted_rows[starts]] += np.add.reduceat(values[order], starts, axis=0)


def _init_from_environment() -> None:
    name = os.environ.get("BATCHVIZ_BACKEND", "").strip().lower()
    if name:
        set_backend(name)


_init_from_environment()
