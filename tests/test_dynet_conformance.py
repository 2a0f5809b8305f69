"""batchviz.dynet against the real DyNet (the ``dyNET38`` wheel, module ``dynet``): the same
programs with the same parameter values give the same values, dimensions and gradients at
float32 tolerance, for every op of tests/dynet_cases.py, under no autobatching and under
batchviz's agenda."""
import numpy as np
import pytest

import batchviz.dynet as bvdy

from dynet_cases import (BUILDER_CASES, OP_CASES, TRAINER_CASES, run_builder, run_case,
                         run_trainer)

real = pytest.importorskip("dynet", reason="the real DyNet (pip install dyNET38, the "
                           "'dynet' test extra) is not importable: no conformance check")

RTOL, ATOL = 2e-4, 2e-5


def assert_same(mine: dict, theirs: dict, what: str) -> None:
    assert mine["dim"] == theirs["dim"], f"{what}: dimension"
    np.testing.assert_allclose(mine["value"], theirs["value"], rtol=RTOL, atol=ATOL,
                               err_msg=f"{what}: value")
    assert mine["loss"] == pytest.approx(theirs["loss"], rel=RTOL, abs=ATOL)
    for k, (g, h) in enumerate(zip(mine["grads"], theirs["grads"])):
        np.testing.assert_allclose(g, h, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{what}: gradient of parameter {k}")


@pytest.mark.parametrize("strategy", ["none", "agenda"])
@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_op_matches_dynet(name, strategy):
    specs, build = OP_CASES[name]
    theirs = run_case(real, specs, build)
    mine = run_case(bvdy, specs, build, lambda: bvdy.renew_cg(autobatching=strategy))
    assert_same(mine, theirs, name)


@pytest.mark.parametrize("strategy", ["none", "agenda"])
@pytest.mark.parametrize("name", sorted(BUILDER_CASES))
def test_builder_matches_dynet(name, strategy):
    make, build = BUILDER_CASES[name]
    theirs = run_builder(real, make, build)
    mine = run_builder(bvdy, make, build, lambda: bvdy.renew_cg(autobatching=strategy))
    assert mine["dims"] == theirs["dims"]
    for k, (a, b) in enumerate(zip(mine["values"], theirs["values"])):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"{name}: output {k}")
    assert mine["loss"] == pytest.approx(theirs["loss"], rel=RTOL, abs=ATOL)
    for k, (g, h) in enumerate(zip(mine["grads"], theirs["grads"])):
        np.testing.assert_allclose(g, h, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{name}: gradient of parameter {k} (0: the table)")


@pytest.mark.parametrize("name", sorted(TRAINER_CASES))
def test_trainer_matches_dynet(name):
    theirs = run_trainer(real, name)
    mine = run_trainer(bvdy, name, lambda: bvdy.renew_cg(autobatching="agenda"))
    for step, (a, b) in enumerate(zip(mine, theirs)):
        for which, x, y in zip(("E", "W", "b"), a, b):
            np.testing.assert_allclose(x, y, rtol=RTOL, atol=ATOL,
                                       err_msg=f"{name}: {which} after update {step + 1}")
