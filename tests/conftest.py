"""Shared fixtures: every test starts on NumPy in float32 with no current graph, unless it
asks for float64 (gradient checks and strategy equivalence run in float64); and the suite
leaves no ``batchviz-*`` folder in the machine's temp directory (tests use ``tmp_path``).

Fixtures only: what test modules share otherwise is in ``helpers.py``."""
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

import batchviz as bv
from batchviz import graph as graph_module


@pytest.fixture(scope="session", autouse=True)
def _no_temp_files_left_behind(tmp_path_factory):
    """Fails the run (an error at its last test's teardown) when tests left ``batchviz-*``
    files or folders in the temp directory, as notebooks and tools name theirs; a test
    writes into its own ``tmp_path``, which pytest cleans up. The session's temp directory
    is one of its own (``TMPDIR``, which subprocesses and notebook kernels inherit), so
    that other programs running on the machine are not counted."""
    own = tmp_path_factory.mktemp("tempdir")
    saved = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = str(own)
    tempfile.tempdir = str(own)
    try:
        yield
    finally:
        if saved[0] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved[0]
        tempfile.tempdir = saved[1]
    left = sorted(p.name for p in Path(own).glob("batchviz-*"))
    assert not left, (f"the tests left {left} in the temp directory: write into pytest's "
                      "tmp_path (or remove what you make)")


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
