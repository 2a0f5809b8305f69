"""Shared machinery of the graded exercises.

* Markers: ``exN`` (one per exercise: ``pytest tutorials -m ex3``), ``points(n)`` (what a test
  is worth) and ``leaderboard(graph)`` (the challenge's table), registered here so that
  ``pytest tutorials`` works from the repository root as well as from this folder.
* Points: :class:`batchviz.grade.PointsReport` prints the points per exercise at the end.
* The code under test: each test module names its exercise (``EXERCISE = "ex03_depth"``) and
  receives the module through the ``student`` fixture - the student's file next to the
  tests, or, when ``BATCHVIZ_SOLUTIONS=1``, the reference solution from ``_solutions/``. The
  solutions are loaded from their file path only here: nothing imports them by accident.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest


def _outside_the_venv(error: ModuleNotFoundError) -> str:
    """What to do instead. A pytest from outside the repository's venv (a system one,
    another environment's) cannot import batchviz or NumPy, and the bare
    ModuleNotFoundError it would show does not say that the fix is another pytest."""
    return (f"the tutorials cannot import {error.name!r} with the Python that runs this pytest "
            f"({sys.executable}): run them with the repository's virtual environment, from "
            "the repository root, for example `.venv/bin/python -m pytest tutorials/03_depth` (or "
            "`.venv/bin/python -m batchviz.grade tutorials`); `make demo` or `make test` "
            "creates .venv")


#: the import that failed, if one did: pytest_configure stops the run, saying why
MISSING = None
try:
    import numpy as np

    import batchviz as bv
    from batchviz import graph as graph_module
    from batchviz.grade import PointsReport
except ModuleNotFoundError as missing:
    MISSING = missing

TUTORIALS = Path(__file__).resolve().parent
SOLUTIONS = TUTORIALS / "_solutions"
if str(TUTORIALS) not in sys.path:  # the tests import _graphs and _grading
    sys.path.insert(0, str(TUTORIALS))

collect_ignore = ["_solutions"]
N_EXERCISES = 6


def use_solutions() -> bool:
    return os.environ.get("BATCHVIZ_SOLUTIONS", "") == "1"


def pytest_configure(config):
    if MISSING is not None:  # before anything needs batchviz: one clear line, no traceback
        pytest.exit(_outside_the_venv(MISSING), returncode=4)
    for n in range(1, N_EXERCISES + 1):
        config.addinivalue_line("markers", f"ex{n}: a grading test of exercise {n}")
    config.addinivalue_line("markers", "points(n): what a grading test is worth")
    config.addinivalue_line("markers", "leaderboard(graph): a challenge test scored on `graph`")
    if not config.pluginmanager.has_plugin("batchviz-points"):
        config.pluginmanager.register(PointsReport(), "batchviz-points")


def pytest_report_header(config):
    which = "the reference solutions (BATCHVIZ_SOLUTIONS=1)" if use_solutions() else "your code"
    return f"batchviz tutorials: grading {which}"


def load_exercise(name: str, folder: Path):
    """The module ``name`` (e.g. ``ex03_depth``): the student's copy in ``folder``, or the
    reference solution when ``BATCHVIZ_SOLUTIONS=1``."""
    path = SOLUTIONS / f"{name}.py" if use_solutions() else folder / f"{name}.py"
    if not path.exists():
        raise FileNotFoundError(f"cannot find {path}: the exercise's module must keep its name")
    module_name = f"_batchviz_tutorial_{'solution' if use_solutions() else 'student'}_{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def student(request):
    """The code being graded by this test module (see the module docstring)."""
    name = getattr(request.module, "EXERCISE", None)
    if name is None:
        raise RuntimeError(f"{request.module.__name__} must set EXERCISE = 'exNN_name'")
    return load_exercise(name, Path(request.module.__file__).parent)


@pytest.fixture(autouse=True)
def _fresh_state():
    """Every test starts on NumPy, in float32, with no current graph."""
    bv.set_backend("numpy")
    bv.set_dtype(np.float32)
    graph_module.open_graph(None)
    yield
    graph_module.open_graph(None)
    bv.set_dtype(np.float32)


@pytest.fixture
def float64():
    """Compare values and gradients in float64, where batching changes nothing but rounding."""
    bv.set_dtype(np.float64)
    yield
    bv.set_dtype(np.float32)


@pytest.fixture
def leaderboard(request):
    """``leaderboard(row)`` puts a :class:`~batchviz.grade.LeaderboardRow` in the final table."""
    plugin = request.config.pluginmanager.get_plugin("batchviz-points")
    return plugin.record_leaderboard

