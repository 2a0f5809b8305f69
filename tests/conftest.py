"""Shared fixtures: every test starts on NumPy in float32 with no current graph, unless it
asks for float64 (gradient checks and strategy equivalence run in float64)."""
import os

import numpy as np
import pytest

import batchviz as bv
from batchviz import graph as graph_module

STRATEGIES = ("none", "depth", "agenda", "lookahead")


@pytest.fixture(autouse=True)
def _fresh_state():
    backend = os.environ.get("BATCHVIZ_BACKEND", "numpy") or "numpy"
    bv.set_backend(backend)
    bv.set_dtype(np.float32)
    graph_module.open_graph(None)
    yield
    graph_module.open_graph(None)
    bv.set_dtype(np.float32)


@pytest.fixture
def float64():
    bv.set_dtype(np.float64)
    yield
    bv.set_dtype(np.float32)


def assert_central_differences(param, loss_value, analytic, entries, eps=1e-6, rel=1e-5,
                               abs=1e-8, what="entry"):
    """``analytic[entry]`` (a gradient of ``param``) equals the central difference of
    ``loss_value()`` (a loss computed unbatched) at every ``entry`` of ``param``; ``param``
    is left as it was."""
    base = param.value()
    for entry in entries:
        plus, minus = base.copy(), base.copy()
        plus[entry] += eps
        minus[entry] -= eps
        param.set_value(plus)
        fp = loss_value()
        param.set_value(minus)
        fm = loss_value()
        param.set_value(base)
        assert analytic[entry] == pytest.approx((fp - fm) / (2 * eps), rel=rel, abs=abs), (
            f"{what} {entry} of {param.name}")
