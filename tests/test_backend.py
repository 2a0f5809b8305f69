"""Backends: the same kernels on NumPy and CuPy, and no hidden device-to-host transfers.

The GPU tests run only where CuPy and a CUDA device are present (``pytest -m gpu``); the
whole suite also runs on the GPU with ``BATCHVIZ_BACKEND=cupy``."""
import math
import os
from fractions import Fraction

import numpy as np
import pytest

import batchviz as bv
from batchviz import backend

from op_cases import CASES


def _gpu_available():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


needs_gpu = pytest.mark.skipif(not _gpu_available(), reason="needs CuPy and a CUDA device")


def small_rnn_step(model_seed=0):
    model = bv.Model(seed=model_seed)
    W = model.add_parameters((8, 12))
    b = model.add_parameters(8)
    E = model.add_lookup_parameters((20, 4))
    rng = np.random.default_rng(0)
    bv.new_graph(strategy="agenda")
    losses = []
    for n in (3, 5, 4):
        h = bv.zeros(8)
        for w in rng.integers(0, 20, size=n):
            h = bv.tanh(W @ bv.concatenate([h, E[int(w)]]) + b)
        losses.append(bv.pickneglogsoftmax(h, 2))
    return model, bv.esum(losses)


def test_forward_and_backward_never_read_values_back(monkeypatch):
    """Nothing inside a pass calls to_numpy (on a GPU each call would be a device-to-host copy)."""
    calls = []
    real = backend.to_numpy
    monkeypatch.setattr(backend, "to_numpy", lambda a: calls.append(1) or real(a))
    model, loss = small_rnn_step()
    g = loss.graph
    g.forward()
    g.backward(loss.node)
    assert calls == []
    assert g.last_stats.forward.device_to_host == 0
    assert g.last_stats.backward.device_to_host == 0
    loss.value()
    assert len(calls) == 1  # reading the value is the one transfer, and it is explicit


@needs_gpu
@pytest.mark.gpu
def test_training_step_on_gpu_makes_no_device_to_host_transfer():
    bv.set_backend("cupy")
    model, loss = small_rnn_step()
    g = loss.graph
    g.forward()
    g.backward(loss.node)
    assert g.last_stats.forward.device_to_host == 0
    assert g.last_stats.backward.device_to_host == 0
    assert g.last_stats.forward.host_to_device > 0  # inputs and gather indices go up


@needs_gpu
@pytest.mark.gpu
@pytest.mark.parametrize("op", sorted(k for k, v in CASES.items() if v[1] is not None))
def test_cupy_matches_numpy_float64(op):
    shapes, build = CASES[op]
    results = {}
    for name, dtype in (("numpy", np.float64), ("cupy", np.float32)):
        bv.set_backend(name)
        bv.set_dtype(dtype)
        model = bv.Model(seed=1)
        params = [model.add_parameters(s, init="normal") for s in shapes]
        with bv.Graph(strategy="agenda"):
            loss = bv.esum([bv.sum_elems(build(params, k)) if build(params, k).shape else build(params, k)
                            for k in range(4)])
            value = loss.value()
            loss.backward()
        results[name] = (value, [p.grad for p in params])
    assert results["cupy"][0] == pytest.approx(results["numpy"][0], rel=1e-4, abs=1e-5)
    for g32, g64 in zip(results["cupy"][1], results["numpy"][1]):
        np.testing.assert_allclose(g32, g64, rtol=1e-3, atol=1e-4)


def test_backend_names():
    assert bv.get_backend() == (os.environ.get("BATCHVIZ_BACKEND") or "numpy")
    with pytest.raises(ValueError, match="valid backends are numpy, cupy"):
        bv.set_backend("tpu")
    bv.set_dtype(np.float64)
    assert bv.get_dtype() == np.float64


def test_scatter_add_of_repeated_rows_matches_add_at():
    """The sorted row scatter (lookup-table gradients) equals NumPy's element-wise add.at."""
    from batchviz.backend import scatter_add

    bv.set_backend("numpy")  # NumPy's own path (the suite may run on CuPy)
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 7, size=40)
    values = rng.normal(size=(40, 5))
    target = rng.normal(size=(7, 5))
    want = target.copy()
    np.add.at(want, rows, values)
    scatter_add(target, rows, values)
    np.testing.assert_allclose(target, want, rtol=1e-12)


EULER_GAMMA = 0.5772156649015329


def _digamma_exact(x: float) -> float:
    """``psi`` where it has a closed form: at ``n`` (harmonic numbers), at ``n + 1/2``, and
    at ``1/4``, ``3/4`` and ``1/3`` (Gauss's digamma theorem)."""
    if x == int(x):
        return -EULER_GAMMA + float(sum(Fraction(1, k) for k in range(1, int(x))))
    if x - 0.5 == int(x - 0.5):
        return -EULER_GAMMA - 2 * math.log(2) + float(sum(Fraction(2, 2 * k - 1)
                                                         for k in range(1, int(x - 0.5) + 1)))
    return {0.25: -EULER_GAMMA - math.pi / 2 - 3 * math.log(2),
            0.75: -EULER_GAMMA + math.pi / 2 - 3 * math.log(2),
            1 / 3: -EULER_GAMMA - math.pi / (2 * math.sqrt(3)) - 1.5 * math.log(3)}[x]


def _lgamma_slope(x: float, h: float = 1e-3) -> float:
    """The slope of ``math.lgamma`` at ``x``: central differences, Richardson-extrapolated
    twice (their error is ``O(h^6)``)."""
    def central(step):
        return (math.lgamma(x + step) - math.lgamma(x - step)) / (2 * step)

    d1, d2, d3 = central(h), central(h / 2), central(h / 4)
    e1, e2 = (4 * d2 - d1) / 3, (4 * d3 - d2) / 3
    return (16 * e2 - e1) / 15


def test_digamma_is_the_slope_of_lgamma_to_double_precision():
    """:func:`backend.digamma` (lgamma's gradient, written with NumPy's and CuPy's common
    functions): its closed forms to 1e-13, including through the series (x >= 10), and
    finite differences of ``math.lgamma`` on both sides of 0 (the reflection) to 1e-9,
    their own accuracy; ``+inf`` at the poles, as DyNet's."""
    exact = [0.25, 1 / 3, 0.5, 0.75, 1.0, 1.5, 2.0, 5.0, 9.5, 10.0, 11.0, 50.5, 1000.0]
    got = backend.digamma(np, np.array(exact))
    want = np.array([_digamma_exact(x) for x in exact])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    x = np.concatenate([np.geomspace(0.05, 200.0, 80), -np.geomspace(0.05, 9.9, 60)])
    x = x[np.abs(x - np.round(x)) > 0.05]          # away from the poles
    np.testing.assert_allclose(backend.digamma(np, x), [_lgamma_slope(v) for v in x],
                               rtol=1e-9, atol=1e-9)
    assert np.all(backend.digamma(np, np.array([0.0, -1.0, -4.0])) == np.inf)
    assert backend.digamma(np, np.array([1e-8]))[0] == pytest.approx(-1e8 - EULER_GAMMA)
    np.testing.assert_allclose(backend.lgamma(np, np.array([0.0, -2.0, 1.0, 3.0])),
                               [np.inf, np.inf, 0.0, math.log(2.0)], rtol=1e-15)


class _PythonElementwiseKernel:
    """Stands in for ``cupy.ElementwiseKernel`` on a machine without a GPU: the LSTM
    kernels' CUDA bodies are index arithmetic (``ptrdiff_t`` lines, where C's ``/`` of
    non-negative integers is Python's ``//``) and plain arithmetic with ``exp`` and
    ``tanh`` on ``raw`` arrays, so with the type names and semicolons removed each line is
    Python, run here over NumPy arrays for every element ``i`` at once. A raw array is
    read and written at its logical (C-order) index, as CuPy does, whatever its strides
    (:class:`_LogicalIndex`)."""

    def __init__(self, in_params, out_params, operation, name):
        self.params = [p.split() for p in f"{in_params}, {out_params}".split(", ")]
        assert all(p[0] == "raw" or p[0] == "int64" for p in self.params)
        self.lines = []
        for line in operation.splitlines():
            line = line.strip().rstrip(";")
            if line.startswith("ptrdiff_t "):
                line = line.removeprefix("ptrdiff_t ").replace(" / ", " // ")
            self.lines.append(line.removeprefix("T "))
        self.writes = {p[-1] for p in self.params[len(in_params.split(", ")):]}

    def __call__(self, *args, size):
        assert len(args) == len(self.params)
        names = {"exp": np.exp, "tanh": np.tanh, "i": np.arange(size)}
        for param, value in zip(self.params, args):
            if param[0] == "raw":
                value = _LogicalIndex(value) if param[-1] in self.writes else np.ravel(value)
            names[param[-1]] = value
        for line in self.lines:
            exec(line, names)


class _LogicalIndex:
    """An array indexed by flat logical (C-order) positions, read and written where its
    elements lie: a strided view (a batch's blocks laid out plane by plane) included."""

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return self.array[np.unravel_index(index, self.array.shape)]

    def __setitem__(self, index, value):
        self.array[np.unravel_index(index, self.array.shape)] = value


FUSED_CASES = [(K, columns, bias) for K in (0, 1, 2) for columns in ((), (3,))
               for bias in ("shared", "per node", "per node and column") if columns or bias != "per node and column"]


def _check_fused_lstm_kernels(xp, K, columns, bias_layout):
    """The one-kernel lstm_step (batchviz.ops.lstm_kernels) on ``xp``'s arrays against the
    NumPy path, forward and backward. A bias per node and the previous cells are strided
    views (every other row of a larger array), as the executor hands them over when it
    reads an earlier batch's nodes where they lie."""
    from batchviz.ops import lstm_kernels
    from batchviz.ops.lstm_steps import _STEP

    rng = np.random.default_rng(K)
    n, H, D = 4, 3, 5
    blocks = K + 3
    every_other = lambda shape: rng.normal(size=(2 * shape[0],) + shape[1:])[::2]
    b = {"shared": lambda: rng.normal(size=blocks * H),
         "per node": lambda: every_other((n, blocks * H)),
         "per node and column": lambda: every_other((n, blocks * H) + columns)}[bias_layout]()
    terms = [b, rng.normal(size=(blocks * H, D)), rng.normal(size=(n, D) + columns)]
    cells = [every_other((n, H) + columns) for _ in range(K)]
    ins = terms + cells
    want = _STEP.forward(np, ins, [(H, K)], n)
    g = rng.normal(size=want.shape)
    needs = [True] * len(ins)
    want_grads = _STEP.backward(np, ins, want, g, [(H, K)], n, needs)

    on = (lambda a: xp.asarray(a)) if xp is not np else (lambda a: a)
    back = (lambda a: a.get()) if xp is not np else (lambda a: a)
    dev_b, dev_cells = on(b), [on(c) for c in cells]
    if xp is not np:  # strided on the device too
        dev_b = dev_b if b.ndim == 1 else on(np.repeat(b, 2, axis=0))[::2]
        dev_cells = [on(np.repeat(c, 2, axis=0))[::2] for c in cells]
    total = on(_STEP.products(np, terms, rows=True))
    # the outputs' blocks further apart than one block, as in a run of batches laid out
    # plane by plane (batchviz.plan.layout): the kernel writes where they lie
    planes = xp.full((want.shape[0], want[0].size + 7), np.nan)
    got = planes[:, :want[0].size].reshape(want.shape)
    assert not got.flags.c_contiguous
    lstm_kernels.step_forward(total, dev_b, dev_cells, got, H)
    np.testing.assert_allclose(back(got), want, rtol=1e-12)
    assert np.isnan(back(planes[:, want[0].size:])).all()   # and nowhere else

    d_rows, d_cells = lstm_kernels.step_backward(xp, on(g), got, dev_cells, H)
    grads = [None] * len(ins)
    grads[len(terms):] = [back(d) for d in d_cells]
    got_grads = _STEP._rows_backward(np, terms, back(d_rows), needs, grads)
    for w, x in zip(want_grads, got_grads):
        if hasattr(w, "value"):   # a shared W's gradient, summed by the executor later
            w, x = w.value(np), x.value(np)
        np.testing.assert_allclose(x, w, rtol=1e-10, atol=1e-14)  # (values of order 1)


@pytest.mark.parametrize("K, columns, bias_layout", FUSED_CASES)
def test_fused_lstm_kernels_compute_what_the_numpy_path_computes(monkeypatch, K, columns, bias_layout):
    """The GPU's fused lstm_step kernels for a leaf, a sequence step and a tree node,
    vectors and columns, every bias layout. CI has no GPU, so the kernels' bodies run as
    Python here (:class:`_PythonElementwiseKernel`); the next test runs them compiled."""
    import types

    from batchviz.ops import lstm_kernels

    monkeypatch.setitem(__import__("sys").modules, "cupy",
                        types.SimpleNamespace(ElementwiseKernel=_PythonElementwiseKernel))
    lstm_kernels.forward_kernel.cache_clear()
    lstm_kernels.backward_kernel.cache_clear()
    try:
        _check_fused_lstm_kernels(np, K, columns, bias_layout)
    finally:
        lstm_kernels.forward_kernel.cache_clear()   # the next test may have the real CuPy
        lstm_kernels.backward_kernel.cache_clear()


@needs_gpu
@pytest.mark.gpu
@pytest.mark.parametrize("K, columns, bias_layout", FUSED_CASES)
def test_compiled_fused_lstm_kernels_compute_what_the_numpy_path_computes(K, columns, bias_layout):
    """The same cases with the compiled kernels, on CuPy arrays in float64, strided views
    on the device included."""
    import cupy

    _check_fused_lstm_kernels(cupy, K, columns, bias_layout)


@needs_gpu
@pytest.mark.gpu
def test_element_indices_made_on_the_device_match_numpys():
    """A copy's element index, made on the GPU from the nodes' starts, is NumPy's."""
    from batchviz.execute.memory import device_element_index, element_index

    starts = np.array([40, 0, 7, 123], dtype=np.int64)
    bv.set_backend("cupy")   # (the suite's fixture sets the backend back)
    got = device_element_index(starts, 5)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.get(), element_index(starts, 5))
