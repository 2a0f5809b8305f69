"""Grading tests of exercise 1: lazy graphs and incremental forward."""

import networkx as nx
import numpy as np
import pytest

import batchviz as bv
from batchviz.examples import figure1, graph_scope

from _grading import describe, fail

EXERCISE = "ex01_lazy"
pytestmark = pytest.mark.ex1


def computed_by_last_run(graph, before: int) -> list:
    """Node ids computed by the batches executed after the first ``before`` batches."""
    return sorted(n for batch in graph.layout.batches[before:] for n in batch.nodes)


def check_prediction(graph, predicted, actual, when: str):
    if predicted is None:
        fail(f"{when}: pending_nodes returned None; return a list of node ids")
    predicted = [int(n) for n in predicted]
    if sorted(predicted) == actual:
        if predicted != sorted(predicted):
            fail(f"{when}: the right nodes, but return them in creation order (increasing ids)")
        return
    extra = sorted(set(predicted) - set(actual))
    missing = sorted(set(actual) - set(predicted))
    for n in extra:
        if n in graph.param_of_node:
            fail(f"{when}: you predicted {describe(graph, n)} would run, but parameters never run: "
                 "their values live in the model and are available from the start")
        if n < graph.n_evaluated and n not in actual:
            fail(f"{when}: you predicted {describe(graph, n)} would run, but an earlier value() "
                 "already computed it; a later value() evaluates only the delta (§3.1)")
    if missing:
        fail(f"{when}: value() also computed {', '.join(describe(graph, n) for n in missing[:4])}"
             f"{' ...' if len(missing) > 4 else ''}, which you did not predict. value() runs "
             "every pending node of the graph, not only the ancestors of the expression whose "
             "value you ask for: the more nodes one run sees, the more it can batch")
    fail(f"{when}: you predicted {sorted(predicted)[:10]}..., the run computed {actual[:10]}...")


@pytest.mark.points(2)
def test_tanh_layer_builds_lazily(student):
    model = bv.Model(seed=1)
    W = model.add_parameters((3, 4), name="W")
    b = model.add_parameters((3,), name="b")
    x = np.random.default_rng(0).normal(size=4)
    graph = bv.new_graph()
    y = student.tanh_layer(W, b, x)
    if not isinstance(y, bv.Expression):
        fail(f"tanh_layer must return an Expression, got {type(y).__name__}")
    if graph.n_evaluated:
        fail("tanh_layer computed nodes while building (graph.n_evaluated = "
             f"{graph.n_evaluated}): build the expression and leave value() to the caller")
    if y.op != "tanh":
        fail(f"the last node of tanh_layer should be tanh, got {y.op}")
    expected = np.tanh(W.value() @ x + b.value())
    np.testing.assert_allclose(y.value(), expected, rtol=1e-5, atol=1e-6)
    assert graph.n_evaluated == len(graph), "value() runs every pending node"


@pytest.mark.points(3)
def test_pending_nodes_predicts_what_value_computes(student):
    graph, loss, _ = figure1("agenda")
    predicted = student.pending_nodes(graph)
    loss.value()
    check_prediction(graph, predicted, computed_by_last_run(graph, 0), "a fresh Figure 1 graph")

    # after a run: nothing is pending
    check_prediction(graph, student.pending_nodes(graph), [], "right after value()")

    # extend the graph: a node using the old loss, and an unrelated chain
    with graph_scope(graph):
        doubled = loss * 2.0
        unrelated = bv.tanh(bv.input(np.ones(3)) + bv.input(np.arange(3.0)))
    predicted = student.pending_nodes(graph)
    before = len(graph.layout.batches)
    unrelated.value()  # we ask for the unrelated chain only ...
    actual = computed_by_last_run(graph, before)
    assert doubled.node in actual  # ... and the runtime computes every pending node
    check_prediction(graph, predicted, actual, "after extending an evaluated graph")
    graph.finish()


@pytest.mark.points(2)
def test_ancestors_match_networkx(student):
    graph, loss, _ = figure1("agenda")
    dag = nx.DiGraph()
    dag.add_nodes_from(range(len(graph)))
    dag.add_edges_from((a, i) for i in range(len(graph)) for a in graph.args[i])
    for node in (loss.node, graph.args[loss.node][0], 9):
        got = student.ancestors(graph, node)
        want = nx.ancestors(dag, node)
        if got is None or set(got) != want:
            got = set(got or ())
            missing, extra = sorted(want - got), sorted(got - want)
            fail(f"ancestors of {describe(graph, node)}: missing {missing[:6]}, not ancestors "
                 f"{extra[:6]} (an ancestor is an argument, or an argument of an ancestor)")
    graph.finish()

    with bv.Graph() as chain:
        x = bv.input(np.zeros(2))
        for _ in range(3000):
            x = bv.tanh(x)
        try:
            got = student.ancestors(chain, x.node)
        except RecursionError:
            fail("ancestors hit Python's recursion limit on a 3000-step chain: walk the graph "
                 "with an explicit stack (a list you append to and pop from)")
        assert set(got) == set(range(x.node)), "every earlier node of the chain is an ancestor"


@pytest.mark.points(3)
def test_running_sums_evaluate_only_the_delta(student):
    rng = np.random.default_rng(3)
    xs = [rng.normal(size=4) for _ in range(6)]
    result = student.running_sums(xs)
    if not (isinstance(result, tuple) and len(result) == 2):
        fail("running_sums must return a pair (graph, values)")
    graph, values = result
    if not isinstance(graph, bv.Graph):
        fail(f"the first item must be the graph (bv.new_graph() returns it), got {type(graph).__name__}")
    expected = np.cumsum([float(np.dot(x, x)) for x in xs])
    np.testing.assert_allclose(np.asarray(values, dtype=float), expected, rtol=1e-5,
                               err_msg="values[k] is the sum of the first k + 1 squared norms")
    if not graph.plans:
        fail("the returned graph never ran: return the graph you built the sums in, "
             "before it is finished")
    per_run = [sum(len(batch.nodes) for batch in run.batches) for run in graph.plans]
    if len(per_run) != len(xs):
        fail(f"the graph ran {len(per_run)} times for {len(xs)} values: call total.value() once "
             "after adding each term, all in one graph")
    if max(per_run[1:]) > per_run[1]:
        fail(f"nodes computed per run: {per_run}. Each run should compute only the new term and "
             "one addition; if the count grows, you rebuild the old terms every time instead of "
             "adding one term to the total you already have")
    assert graph.n_evaluated == len(graph)
