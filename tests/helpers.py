"""What several test modules share: the strategy names, the central-difference check and
the project's metadata (pyproject.toml).

A module of its own, imported as ``from helpers import ...``: ``conftest.py`` is pytest's
plugin file, and a second ``conftest`` (the tutorials' one) takes its place in
``sys.modules`` when ``pytest tests tutorials`` collects both folders, so names imported
from ``conftest`` would come from the wrong file."""
import contextlib
import re
from pathlib import Path

import pytest

import batchviz as bv

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

REPO = Path(__file__).resolve().parent.parent
STRATEGIES = ("none", "depth", "agenda", "lookahead", "layout")


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


def pyproject() -> dict:
    """This checkout's ``pyproject.toml`` (not the installed metadata, which may be older)."""
    if tomllib is None:
        pytest.skip("reading pyproject.toml needs Python 3.11's tomllib")
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def requirement_name(requirement: str) -> str:
    """The distribution a requirement names, normalised: ``"Jupyter_Lab>=4"`` -> ``jupyter-lab``."""
    name = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)
    return re.sub(r"[-_.]+", "-", name).lower()


def warns_on_numpy(*args, **kwargs):
    """``pytest.warns(...)`` on NumPy; nothing on CuPy, whose kernels report no
    floating-point errors (NaN and infinity made there are found by ``bv.check_numerics``)."""
    if bv.get_backend() == "numpy":
        return pytest.warns(*args, **kwargs)
    return contextlib.nullcontext()


class FewestOnTheAgenda(bv.Rule):
    """A user's rule: the signature group with the fewest nodes on the agenda runs first."""

    key_names = ("nodes on the agenda",)

    def key(self, signature, agenda):
        return (len(agenda.ready[signature]),)


class FewestFirst(bv.AgendaStrategy):
    """A user's strategy written as a rule over the agenda (:class:`FewestOnTheAgenda`)."""

    name = "fewest-first"

    def rule(self, view):
        return FewestOnTheAgenda()


def plain(x):
    """A plan (its records, tuples, arrays; ops by name) as nested lists that ``==`` and JSON
    compare exactly: every value with its type, arrays with their dtype (the drivers that
    compare a compiled run with a run from source print this)."""
    import dataclasses

    import numpy as np

    from batchviz.ops.base import Op

    if isinstance(x, np.ndarray):
        return ["array", x.dtype.str, x.tolist()]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):  # a batch's plan
        return [type(x).__name__] + [plain(getattr(x, f.name)) for f in dataclasses.fields(x)]
    if isinstance(x, (tuple, list)):
        return [type(x).__name__] + [plain(e) for e in x]
    if isinstance(x, Op):
        return ["op", x.name]
    return [type(x).__name__,
            x if x is None or isinstance(x, (bool, int, float, str)) else repr(x)]
