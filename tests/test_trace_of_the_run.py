"""The window reads the run: ``bv.trace`` (and so the widgets and pictures) and
``bv.explain`` show, for a graph that ran, the batches, agenda and reads of its runs, and
label everything else a dry run."""
from __future__ import annotations

import numpy as np
import pytest

import batchviz as bv
from batchviz.schedule import AgendaBatching, PendingView
from batchviz.trace import Trace


def two_part_graph(strategy="agenda", record=False):
    """An RNN regression whose first sequence's loss is asked for before the rest is built:
    the graph runs in two parts."""
    graph = bv.Graph(strategy, record=record)
    model = bv.Model(seed=0)
    rng = np.random.default_rng(1)
    with graph:
        W = model.add_parameters((3, 5))
        b = model.add_parameters(3)
        U = model.add_parameters((1, 3))

        def sequence_loss(length):
            h = bv.zeros(3)
            for _ in range(length):
                h = bv.tanh(W @ bv.concatenate([h, bv.input(rng.standard_normal(2))]) + b)
            return bv.squared_distance(U @ h, bv.input(rng.standard_normal(1)))

        first = sequence_loss(2)
        first.value()                                   # run 0
        loss = bv.esum([first] + [sequence_loss(n) for n in (3, 4)])
        loss.value()                                    # run 1: the nodes built since
    return graph, loss


def test_a_trace_after_a_run_in_two_parts_shows_both_runs_as_they_ran():
    graph, loss = two_part_graph()
    assert len(graph.plans) == 2
    t = bv.trace(loss)
    assert not t.dry_run and t.runs == 2 and "its 2 runs" in t.provenance
    ran = [(k, b) for k, run in enumerate(graph.plans) for b in run.batches]
    assert [s.batch for s in t.steps] == [list(b.nodes) for _, b in ran]
    assert [s.run for s in t.steps] == [k for k, _ in ran]
    assert [[a.read for a in s.arguments] for s in t.steps] == \
        [[type(r).__name__ for r in b.reads] for _, b in ran]
    # from scratch, the agenda batches the three sequences together: fewer batches
    scratch = AgendaBatching().schedule(PendingView(graph, start=0))
    assert len(scratch) < len(t.steps)
    # every step's agenda holds its batch, and the batch is all of its signature's group
    for s in t.steps:
        group = next(g for g in s.agenda if g.signature == s.signature)
        assert group.size >= len(s.batch)


def test_the_graphs_own_record_of_its_decisions_equals_the_agenda_rebuilt_from_its_runs():
    recorded, loss_r = two_part_graph(record=True)
    rebuilt, loss_b = two_part_graph(record=False)
    assert all(log is not None for log in recorded.decision_logs)
    assert rebuilt.decision_logs == [None, None]
    a, b = bv.trace(loss_r), bv.trace(loss_b)
    assert [s.to_dict() for s in a.steps] == [s.to_dict() for s in b.steps]


def test_dry_runs_are_labelled():
    graph, loss = two_part_graph()
    depth = bv.trace(loss, "depth")  # another strategy than the graph ran with
    assert depth.dry_run and depth.runs == 0 and depth.label == "dry run"
    assert all(s.run is None for s in depth.steps)
    with bv.Graph() as fresh:          # a graph that has not run
        y = bv.sum_elems(bv.tanh(bv.input([1.0, 2.0])))
        t = bv.trace(y)
        assert t.dry_run and "dry run" in repr(t)
        y.value()
        more = bv.sum_elems(bv.logistic(bv.input([3.0])))  # built after the run
        after = bv.trace(more)
    assert [s.run for s in after.steps[:len(fresh.plans[0].batches)]] == \
        [0] * len(fresh.plans[0].batches)
    assert after.steps[-1].run is None and not after.dry_run
    assert "not run yet (dry run)" in after.provenance


def test_a_trace_of_the_run_survives_json():
    graph, loss = two_part_graph()
    t = bv.trace(loss)
    again = Trace.from_json(t.to_json())
    assert [s.run for s in again.steps] == [s.run for s in t.steps] and not again.dry_run


def test_explain_shows_the_run_of_the_graphs_strategy():
    graph, loss = two_part_graph()
    e = bv.explain(loss, strategies=("depth", "agenda"))
    assert e.strategies["agenda"].ran and not e.strategies["depth"].ran
    assert e.strategies["agenda"].batches == sum(len(p.batches) for p in graph.plans)
    copies = sum(p.copy_counts()[0] for p in graph.plans)
    assert e.strategies["agenda"].copies == copies
    assert "agenda (as it ran)" in str(e)
    with bv.Graph() as g:  # before its run: a dry run
        y = bv.sum_elems(bv.tanh(bv.input([1.0, 2.0])))
        assert not bv.explain(y).strategies["agenda"].ran


def test_a_picture_and_the_stepper_say_which_they_show():
    pytest.importorskip("ipywidgets")
    graph, loss = two_part_graph()
    stepper = bv.Stepper(loss)
    assert "(as it ran)" in stepper.frames.panels.header_html(0)
    other = bv.Stepper(loss, strategy="depth")
    assert "(dry run)" in other.frames.panels.header_html(0)


def test_a_dynet_expression_is_explained_and_traced_as_its_node():
    import batchviz.dynet as dy

    dy.renew_cg()
    pc = dy.ParameterCollection()
    W = pc.add_parameters((2, 3))
    loss = dy.sum_elems(dy.tanh(W * dy.inputVector([1.0, 2.0, 3.0])))
    loss.value()
    e = bv.explain(loss)
    assert e.nodes == bv.explain(loss.x).nodes > 0
    assert not bv.trace(loss).dry_run
