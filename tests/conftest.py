"""Shared fixtures: every test starts on NumPy in float32 with no current graph, unless it
asks for float64 (gradient checks and strategy equivalence run in float64).

Fixtures only: what test modules share otherwise is in ``helpers.py``."""
import os

import numpy as np
import pytest

import batchviz as bv
from batchviz import graph as graph_module


@pytest.fixture(autouse=True)
def _fresh_state():
    backend = os.environ.get("BATCHVIZ_BACKEND", "numpy") or "numpy"
    bv.set_backend(backend)
    bv.set_dtype(np.float32)
    graph_module._current = None
    yield
    graph_module._current = None
    bv.set_dtype(np.float32)


@pytest.fixture
def float64():
    bv.set_dtype(np.float64)
    yield
    bv.set_dtype(np.float32)
