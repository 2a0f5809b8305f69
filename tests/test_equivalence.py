"""Every strategy computes exactly what unbatched execution computes (float64, rtol 1e-9),
and every schedule is signature-homogeneous and respects dependencies - checked on random
RNNs, random trees and random DAGs of mixed ops (hypothesis shrinks any counterexample)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import batchviz as bv
from batchviz.schedule import PendingView, resolve_strategy, validate_schedule

from helpers import STRATEGIES
from models import Params, random_dag_losses, random_tree, rnn_loss, tree_encode

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def run_all_strategies(build):
    """Value and gradients of ``build(P)`` (which returns a list of scalar losses) under each
    strategy; also validates each strategy's schedule of the full graph."""
    results = {}
    for strategy in STRATEGIES:
        model = bv.Model(seed=7)
        P = Params(model)
        with bv.Graph(strategy=strategy) as g:
            losses = build(P)
            loss = bv.esum(losses)
            view = PendingView(g)
            validate_schedule(view, resolve_strategy(strategy).schedule(view))
            value = loss.value()
            loss.backward()
        results[strategy] = (value, {p.name: p.grad for p in model.parameters()})
    return results


def assert_same(results):
    ref_value, ref_grads = results["none"]
    for strategy, (value, grads) in results.items():
        assert value == pytest.approx(ref_value, rel=1e-9), strategy
        for name, grad in grads.items():
            np.testing.assert_allclose(grad, ref_grads[name], rtol=1e-9, atol=1e-12,
                                       err_msg=f"{strategy}: gradient of {name}")


@SETTINGS
@given(lengths=st.lists(st.integers(1, 6), min_size=1, max_size=5), seed=st.integers(0, 10**6))
def test_rnn_minibatch(lengths, seed, float64):
    def build(P):
        rng = np.random.default_rng(seed)
        return [rnn_loss(P, list(rng.integers(0, 7, size=n)), rng.normal(size=2)) for n in lengths]
    assert_same(run_all_strategies(build))


@SETTINGS
@given(sizes=st.lists(st.integers(1, 7), min_size=1, max_size=4), seed=st.integers(0, 10**6))
def test_tree_minibatch(sizes, seed, float64):
    def build(P):
        rng = np.random.default_rng(seed)
        losses = []
        for n in sizes:
            _, node_losses = tree_encode(P, random_tree(rng, n))
            losses.extend(node_losses)
        return losses
    assert_same(run_all_strategies(build))


@SETTINGS
@given(n_nodes=st.integers(0, 25), instances=st.integers(1, 3), seed=st.integers(0, 10**6))
def test_random_dags(n_nodes, instances, seed, float64):
    def build(P):
        rng = np.random.default_rng(seed)
        losses = []
        for _ in range(instances):
            losses.extend(random_dag_losses(P, rng, n_nodes))
        return losses
    assert_same(run_all_strategies(build))


@SETTINGS
@given(lengths=st.lists(st.integers(1, 5), min_size=2, max_size=4), seed=st.integers(0, 10**6))
def test_incremental_forward_matches_one_shot(lengths, seed, float64):
    """Calling value() after each instance (several runs, several arenas) changes nothing."""
    def build_incremental(P):
        rng = np.random.default_rng(seed)
        losses = []
        for n in lengths:
            losses.append(rnn_loss(P, list(rng.integers(0, 7, size=n)), rng.normal(size=2)))
            losses[-1].value()
        return losses

    def build_once(P):
        rng = np.random.default_rng(seed)
        return [rnn_loss(P, list(rng.integers(0, 7, size=n)), rng.normal(size=2)) for n in lengths]

    a, b = run_all_strategies(build_incremental), run_all_strategies(build_once)
    for strategy in STRATEGIES:
        assert a[strategy][0] == pytest.approx(b[strategy][0], rel=1e-9)
        for name in a[strategy][1]:
            np.testing.assert_allclose(a[strategy][1][name], b[strategy][1][name], rtol=1e-9, atol=1e-12)
