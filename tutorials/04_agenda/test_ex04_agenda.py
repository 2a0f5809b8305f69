"""Grading tests of exercise 4: agenda-based batching, reproduced exactly."""
import numpy as np
import pytest

import batchviz as bv
from batchviz.examples import graph_scope
from batchviz.schedule import AgendaBatching, DepthBatching, PendingView
from batchviz.schedule.agenda import average_depths

import _graphs
from _grading import assert_same_schedule, assert_valid_schedule, fail

EXERCISE = "ex04_agenda"
pytestmark = pytest.mark.ex4

def tie_graph():
    """Three signatures at depth 1, each alone: a heavy ``W @ x``, then two cheap ops (the
    heavy one interned first). Returns ``(graph, (matmul, scale, tanh))``: the signatures."""
    model = bv.Model(seed=0)
    W = model.add_parameters((3, 3), name="W")
    graph = bv.Graph()
    with graph_scope(graph):
        x = bv.input(np.ones(3))
        y = bv.input(np.arange(3.0))
        W @ x, x * 2.0, bv.tanh(y)
    view = PendingView(graph)
    return graph, tuple(view.signature[n] for n in view.nodes[-3:])


GRAPHS = {
    "Figure 1": lambda: _graphs.figure1(),
    "three signatures tied at average depth 1": tie_graph,
    "Figure 1 extended after a value()": lambda: _graphs.figure1_extended(),
    "Tree-LSTM (16 trees)": lambda: _graphs.tree_lstm(n_trees=16),
    "parser (4 sentences)": lambda: _graphs.parser(n_sentences=4),
    "many ops": lambda: _graphs.mixed_ops(),
    **{f"random graph {seed}": (lambda seed=seed: _graphs.random_dag(seed=seed, n_ops=60))
       for seed in range(4)},
}


def student_schedule(student, view, what):
    return assert_valid_schedule(view, student.AgendaStrategy().schedule(view),
                                 f"your AgendaStrategy on {what}")


@pytest.mark.points(2)
def test_average_depths(student):
    for what in ("Figure 1", "Figure 1 extended after a value()", "Tree-LSTM (16 trees)"):
        graph = GRAPHS[what]()[0]
        view = PendingView(graph)
        mine, want = student.average_depths(view), average_depths(view)
        if not isinstance(mine, dict):
            fail(f"average_depths must return a dict signature -> average depth, got {type(mine).__name__}")
        for s, d in want.items():
            if s not in mine:
                fail(f"{what}: signature {s} ({view.signature_name(s)}) is missing from your averages")
            if mine[s] != pytest.approx(d):
                nodes = [i for i in view.nodes if view.signature[i] == s]
                fail(f"{what}: {view.signature_name(s)} has {len(nodes)} pending nodes of depths "
                     f"{[view.depth[i] for i in nodes][:12]}: average {d:.4f}, yours {mine[s]}")
        extra = set(mine) - set(want)
        if extra:
            fail(f"{what}: your averages have signatures with no pending node: {sorted(extra)} "
                 "(parameters and nodes already computed are not pending)")
        graph.finish()


@pytest.mark.points(2)
def test_priority_breaks_ties_cheap_before_heavy(student):
    """priority() alone: your schedule on this graph is graded with the others, in
    test_same_schedule_as_the_runtime, so that a bug in schedule() costs its points once."""
    graph, (matmul, scale, tanh) = tie_graph()
    view = PendingView(graph)
    assert matmul < scale, "the heavy signature was interned first"
    p = student.priority
    if not p(view, scale, 1.0) < p(view, matmul, 1.0):
        fail("with equal average depths, cheap ops come before heavy ones (the paper's footnote), "
             f"whatever their signature ids: priority(view, {scale}, 1.0) for {view.signature_name(scale)} "
             f"must be lower than priority(view, {matmul}, 1.0) for {view.signature_name(matmul)}")
    if not p(view, matmul, 1.0) < p(view, tanh, 1.5):
        fail("the average depth decides first: priority(view, matmul, 1.0) < priority(view, tanh, 1.5)")
    if not p(view, tanh, 1.0) < p(view, scale, 1.0):
        fail(f"two cheap signatures with equal average depths: the smaller signature id first "
             f"({view.signature_name(tanh)} is {tanh}, {view.signature_name(scale)} is {scale})")


@pytest.mark.points(2)
def test_figure1_counts(student):
    graph, _, _ = _graphs.figure1()
    view = PendingView(graph)
    mine = student_schedule(student, view, "Figure 1")
    agenda, depth = AgendaBatching().schedule(view), DepthBatching().schedule(view)
    losses = [b for b in mine if graph.ops[b[0]].name == "squared_distance"]
    if len(losses) != 1:
        fail(f"the three losses of Figure 1 should run as one batch (the paper's point: they sit at "
             f"different depths, and only the agenda's average-depth priority waits for all "
             f"three); yours runs them in {len(losses)} batches")
    if len(mine) != len(agenda):
        fail(f"Figure 1 takes {len(agenda)} batches with agenda batching ({len(depth)} by depth); "
             f"yours takes {len(mine)}")


@pytest.mark.points(3)
def test_same_schedule_as_the_runtime(student):
    for what, build in GRAPHS.items():
        graph = build()[0]
        view = PendingView(graph)
        mine = student_schedule(student, view, what)
        assert_same_schedule(view, AgendaBatching().schedule(view), mine, what)
        graph.finish()


@pytest.mark.points(1)
def test_runs_in_the_runtime_like_no_batching(student, float64):
    results = {}
    for name, strategy in (("none", "none"), ("yours", student.AgendaStrategy())):
        graph, loss, model = _graphs.figure1_extended(strategy)   # two runs: incremental
        value = loss.value()
        loss.backward()
        results[name] = (value, {p.name: p.grad for p in model.parameters()})
        graph.finish()
    assert results["yours"][0] == pytest.approx(results["none"][0], rel=1e-9)
    for name, g in results["yours"][1].items():
        assert g == pytest.approx(results["none"][1][name], rel=1e-9, abs=1e-12), f"gradient of {name}"
