"""What several test modules share: the strategy names and the central-difference check.

A module of its own, imported as ``from helpers import ...``: ``conftest.py`` is pytest's
plugin file, and a second ``conftest`` (the tutorials' one) takes its place in
``sys.modules`` when ``pytest tests tutorials`` collects both folders, so names imported
from ``conftest`` would come from the wrong file."""
import pytest

STRATEGIES = ("none", "depth", "agenda", "lookahead")


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
