"""Grading tests of exercise 3: depth-based batching."""
import pytest

from batchviz.schedule import DepthBatching, PendingView

import _graphs
from _grading import assert_same_batches, assert_valid_schedule, describe, fail

EXERCISE = "ex03_depth"
pytestmark = pytest.mark.ex3

GRAPHS = {
    "Figure 1": lambda: _graphs.figure1("depth"),
    "Figure 1 extended after a value()": lambda: _graphs.figure1_extended("depth"),
    "Tree-LSTM (8 trees)": lambda: _graphs.tree_lstm("depth", n_trees=8),
    "parser (4 sentences)": lambda: _graphs.parser("depth", n_sentences=4),
    "random graph": lambda: _graphs.random_dag("depth", seed=1),
    "many ops": lambda: _graphs.mixed_ops("depth"),
}


def student_schedule(student, view, what):
    strategy = student.DepthStrategy()
    return assert_valid_schedule(view, strategy.schedule(view), f"your DepthStrategy on {what}")


@pytest.mark.points(2)
def test_node_depths(student):
    for what in ("Figure 1", "Tree-LSTM (8 trees)", "many ops"):
        graph = GRAPHS[what]()[0]
        mine = student.node_depths(graph)
        if mine is None or len(mine) != len(graph):
            fail(f"{what}: node_depths must return one depth per node ({len(graph)}), got "
                 f"{None if mine is None else len(mine)}")
        for node, (got, want) in enumerate(zip(mine, graph.depths)):
            if got != want:
                args = ", ".join(f"{describe(graph, a)} at depth {graph.depths[a]}" for a in graph.args[node])
                fail(f"{what}: {describe(graph, node)} has depth {want}, yours says {got}. "
                     + (f"Its arguments are {args}: depth is 1 + the deepest argument"
                        if args else "It has no arguments, so its depth is 0"))
        graph.finish()


@pytest.mark.points(2)
def test_schedule_is_valid(student):
    for what in ("Figure 1", "random graph", "Figure 1 extended after a value()"):
        graph = GRAPHS[what]()[0]
        student_schedule(student, PendingView(graph), what)
        graph.finish()


@pytest.mark.points(3)
def test_same_batches_as_the_runtime(student):
    for what, build in GRAPHS.items():
        graph = build()[0]
        view = PendingView(graph)
        mine = student_schedule(student, view, what)
        assert_same_batches(view, DepthBatching().schedule(view), mine, what)
        graph.finish()


@pytest.mark.points(2)
def test_runs_in_the_runtime_like_no_batching(student, float64):
    results = {}
    for strategy in ("none", student.DepthStrategy()):
        graph, loss, model = _graphs.figure1(strategy)
        value = loss.value()
        loss.backward()
        results[getattr(strategy, "name", strategy)] = (
            value, {p.name: p.grad for p in model.parameters()}, graph.last_stats.forward.batches,
            [b.nodes for b in graph.layout.batches if b.op.name == "squared_distance"])
        graph.finish()
    value, grads, batches, loss_batches = results["student-depth"]
    ref_value, ref_grads, _, _ = results["none"]
    assert value == pytest.approx(ref_value, rel=1e-9)
    for name, g in grads.items():
        assert g == pytest.approx(ref_grads[name], rel=1e-9, abs=1e-12), f"gradient of {name}"
    graph, _, _ = _graphs.figure1()
    expected = len(DepthBatching().schedule(PendingView(graph)))
    graph.finish()
    if batches != expected:
        fail(f"Figure 1 ran in {batches} batches with your strategy; depth batching needs {expected}")
    if len(loss_batches) != 3:
        fail("with depth batching, the three losses of Figure 1 sit at three depths and need "
             f"three batches; your run had {len(loss_batches)}")
