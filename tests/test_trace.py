"""bv.trace: the schedule, the agenda at every step, the reasons, the copies - checked against
the strategies themselves, the executor's own records, and networkx's graph algorithms."""
import json
import sys

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import batchviz as bv
from batchviz.errors import ScheduleError
from batchviz.examples import figure1
from batchviz.graph import graph_scope
from batchviz.schedule import DepthBatching, PendingView, average_depths, resolve_strategy
from batchviz.trace import Step, Trace
from batchviz.trace.record import snapshot_plan

from helpers import STRATEGIES, FewestFirst
from models import Params, lstm_models_loss, random_dag_losses, random_tree, rnn_loss, tree_encode

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def build_mixed(seed, strategy="agenda", record_source=False):
    """A graph mixing RNNs, a tree and a random DAG (all op kinds, shared and stacked
    arguments); returns (graph, loss)."""
    rng = np.random.default_rng(seed)
    P = Params(bv.Model(seed=seed))
    g = bv.Graph(strategy, record_source=record_source)
    with graph_scope(g):
        losses = [rnn_loss(P, list(rng.integers(0, 7, size=int(n))), rng.normal(size=2))
                  for n in rng.integers(1, 5, size=3)]
        _, tree_losses = tree_encode(P, random_tree(rng, int(rng.integers(1, 5))))
        losses += tree_losses + random_dag_losses(P, rng, int(rng.integers(3, 15)))
        loss = bv.esum(losses)
    return g, loss


class ReverseDepth(bv.Strategy):
    """A user-written strategy: depth batching, but signatures of one depth in reverse order."""

    name = "reverse-depth"

    def schedule(self, view):
        batches = DepthBatching().schedule(view)
        out, k = [], 0
        while k < len(batches):
            same = [b for b in batches[k:] if view.depth[b[0]] == view.depth[batches[k][0]]]
            out += same[::-1]
            k += len(same)
        return out


# --- the schedule and the agenda --------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_batches_are_the_strategys_schedule(strategy):
    g, loss, _ = figure1(strategy)
    t = bv.trace(loss, strategy)
    expected = resolve_strategy(strategy).schedule(PendingView(g, start=0))
    assert t.batches == [list(b) for b in expected]
    assert t.strategy == strategy
    assert len(t) == {"none": 61, "depth": 29, "agenda": 23, "lookahead": 23, "layout": 23}[strategy]


def test_agenda_states_replay_the_paper_rule():
    g, loss, _ = figure1("agenda")
    t = bv.trace(loss, "agenda")
    view = PendingView(g, start=0)
    avg = average_depths(view)
    done = set(g.param_of_node)
    for step in t.steps:
        # the agenda: nodes whose arguments are all done, grouped by signature
        ready = [i for i in view.nodes if i not in done and all(a in done for a in g.args[i])]
        sizes = {}
        for i in ready:
            sizes[g.sigs[i]] = sizes.get(g.sigs[i], 0) + 1
        assert {grp.signature: grp.size for grp in step.agenda} == sizes
        assert t.key_names == ("average depth", "cost")
        assert all(grp.key == (avg[grp.signature],
                               "cheap" if g.sigtab[grp.signature].cheap else "heavy")
                   for grp in step.agenda)
        assert [grp.key[0] for grp in step.agenda] == sorted(grp.key[0] for grp in step.agenda)
        # the agenda strategy runs *all* agenda nodes of the chosen signature
        assert sorted(step.batch) == sorted(i for i in ready if g.sigs[i] == step.signature)
        chosen = min(step.agenda, key=lambda grp: (grp.key[0], not g.sigtab[grp.signature].cheap,
                                                   grp.signature))
        assert chosen.signature == step.signature
        assert step.signature_name == g.signature_name(step.signature)
        assert step.done == len(done - set(g.param_of_node))
        assert step.on_agenda == len(ready)
        assert step.done + step.on_agenda + step.waiting == len(view.nodes)
        done.update(step.batch)


def test_agenda_reasons():
    g, loss, _ = figure1("agenda")
    reasons = [s.reason for s in bv.trace(loss).steps]
    # step 0: zeros, input-3x1 and input-2x1 all have average depth 0 and are all cheap
    assert reasons[0] == "tie on average depth and cost broken by the lower signature id"
    assert reasons[2] == "lowest average depth"
    assert reasons[3] == "the only signature on the agenda"  # nothing to compare with
    assert all(r.startswith(("lowest average depth", "tie on average depth",
                             "the only signature")) for r in reasons)
    t = bv.trace(loss, "depth")  # depth batching goes by depth alone: no agenda priorities
    assert t.key_names == ("depth",)
    assert all(len(g.key) == 1 and isinstance(g.key[0], int) for s in t.steps for g in s.agenda)
    assert not any("average depth" in g.note for s in t.steps for g in s.agenda)


def test_tie_broken_cheap_before_heavy():
    model = bv.Model(seed=0)
    W = model.add_parameters((3, 3), name="W")
    g = bv.Graph("agenda")
    with graph_scope(g):
        x = bv.input(np.ones(3))
        a = bv.tanh(x)       # cheap, depth 1
        b = W @ x            # heavy, depth 1: same average depth as tanh
        loss = bv.sum_elems(a + b)
    t = bv.trace(loss)
    assert t.steps[1].signature_name == "tanh"
    assert t.steps[1].reason == "tie on average depth broken cheap-before-heavy"
    assert t.steps[2].signature_name.startswith("matmul")


def test_depth_none_and_custom_reasons_are_honest():
    g, loss, _ = figure1("depth")
    depth = bv.trace(loss, "depth")
    assert [s.reason for s in depth.steps] == [f"depth {g.depths[s.batch[0]]}" for s in depth.steps]
    assert {s.reason for s in bv.trace(loss, "none").steps} == {"creation order"}
    custom = bv.trace(loss, ReverseDepth())
    assert custom.strategy == "reverse-depth"
    assert {s.reason for s in custom.steps} == {"chosen by reverse-depth"}
    assert custom.batches == ReverseDepth().schedule(PendingView(g, start=0))


def test_a_broken_user_strategy_is_refused():
    class Broken(bv.Strategy):
        name = "broken"

        def schedule(self, view):
            return [[i] for i in reversed(view.nodes)]  # users before their arguments

    g, loss, _ = figure1()
    with pytest.raises(ScheduleError, match="arguments must run in an earlier batch"):
        bv.trace(loss, Broken())


# --- the copies: exactly what the executor does -----------------------------------------


def canonical(read) -> tuple:
    """A plan's read as plain values (its index arrays as lists), to compare reads."""
    return (type(read).__name__,) + tuple(
        v.tolist() if isinstance(v, np.ndarray) else canonical(v) if isinstance(v, tuple) else v
        for v in read)


def assert_trace_matches_executor(build, strategy):
    """The trace's batches, reads and copy counts are the very plan that the executor ran
    on a run of the same graph from scratch."""
    g, loss = build(strategy)
    t = bv.trace(loss, strategy)
    g2, loss2 = build(strategy)
    loss2.value()
    executed = g2.layout.batches  # every batch the executor ran, with its reads
    stats = g2.last_stats.forward
    assert t.batches == [list(b.nodes) for b in executed]
    assert [[a.read for a in s.arguments] for s in t.steps] == \
        [[type(r).__name__ for r in b.reads] for b in executed]
    traced = snapshot_plan(g, t.batches).batches
    assert [[canonical(r) for r in b.reads] for b in traced] == \
        [[canonical(r) for r in b.reads] for b in executed]
    assert t.copies == stats.copies
    assert t.copies_avoided == stats.copies_avoided
    assert t.bytes_copied == stats.bytes_copied
    assert t.kernels == stats.kernels


@pytest.mark.parametrize("strategy", STRATEGIES + (ReverseDepth(),))
def test_copies_match_the_executor_on_figure1(strategy):
    assert_trace_matches_executor(lambda s: figure1(s)[:2], strategy)


def _lstm_models(strategy):
    g = bv.Graph(strategy)
    with graph_scope(g):
        loss = lstm_models_loss()
    return g, loss


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_copies_match_the_executor_on_lstm_models(strategy):
    """BiLSTM and Tree-LSTM steps read the cell block of earlier step nodes (a block
    other than the value) and often find their arguments evenly spaced: the trace still
    reports exactly the executor's views, strided views and copies."""
    assert_trace_matches_executor(_lstm_models, strategy)


@SETTINGS
@given(seed=st.integers(0, 10**6),
       strategy=st.sampled_from(STRATEGIES + (ReverseDepth(), FewestFirst())))
def test_copies_match_the_executor_on_random_graphs(seed, strategy):
    """For every built-in strategy and two of a user's (a plain one and a rule over the
    agenda): the trace's batches, reads and copy counts are the plan the executor ran."""
    assert_trace_matches_executor(lambda s: build_mixed(seed, s), strategy)


@SETTINGS
@given(seed=st.integers(0, 10**6), strategy=st.sampled_from(STRATEGIES + (ReverseDepth(),)))
def test_step_counts_are_consistent_on_random_graphs(seed, strategy):
    g, loss = build_mixed(seed)
    t = bv.trace(loss, strategy)
    total = len(g.ops) - len(g.param_of_node)
    done = 0
    for step in t.steps:
        sizes = {grp.signature: grp.size for grp in step.agenda}
        assert sum(sizes.values()) == step.on_agenda
        assert sizes.get(step.signature, 0) >= len(step.batch)  # the batch is on the agenda
        if t.strategy == "agenda":
            assert sizes[step.signature] == len(step.batch)    # all of its signature's nodes
        assert (step.done, step.done + step.on_agenda + step.waiting) == (done, total)
        done += len(step.batch)
    assert done == total


def test_figure1_copies_in_words():
    g, loss, _ = figure1("agenda")
    t = bv.trace(loss)
    concat = t.steps[3]  # concatenate [h; x]: h from zeros (a view), x from scattered inputs
    assert concat.signature_name == "concatenate-4x1+3x1"
    assert [(a.kind, a.bytes_copied) for a in concat.arguments] == [("view", 0), ("copy", 3 * 3 * 4)]
    matmul = t.steps[4]
    assert matmul.arguments[0].kind == "shared" and "W#3" in matmul.arguments[0].detail
    bias = t.steps[5]  # W h + b: b is a parameter, stacked node by node
    assert bias.arguments[1].kind == "copy" and "parameter b#5" in bias.arguments[1].detail
    assert t.steps[5].kernels == 2


def test_a_sum_reads_all_its_arguments_with_one_read():
    """esum (Op.one_gather): one read covers every argument position of the batch, node after
    node - a view when its arguments lie in order, as the three losses of Figure 1 do under
    agenda batching (their batch), a copy when they come from three batches (depth)."""
    reads = {}
    for strategy in ("agenda", "depth"):
        g, loss, _ = figure1(strategy)
        t = bv.trace(loss, strategy)
        step = next(s for s in t.steps if s.signature_name == "esum-1")
        assert [(a.position, a.positions) for a in step.arguments] == [(0, 3)]
        reads[strategy] = step.arguments[0]
        loss.value()
        record = next(r for r in g.layout.batches if r.op.name == "esum")
        assert record.together and len(record.reads) == 1
        assert g.batch_runs[record.index].ins[0].shape == (1, 3, 1)
        again = Trace.from_dict(json.loads(json.dumps(t.to_dict())))
        assert again.steps[t.steps.index(step)].arguments == step.arguments
    assert (reads["agenda"].kind, reads["depth"].kind) == ("view", "copy")
    assert reads["depth"].bytes_copied == 3 * 4  # three float32 losses


# --- the trace changes nothing -----------------------------------------------------------


def test_tracing_changes_no_result():
    g, loss, model = figure1("agenda")
    before_run = bv.trace(loss)
    assert g.n_evaluated == 0 and not g.plans
    value = loss.value()
    loss.backward()
    grads = {p.name: p.grad.copy() for p in model.parameters()}
    records = list(g.layout.batches)
    stats = bv.last_run_stats()
    after_run = bv.trace(loss)
    # one run of the whole graph: the trace of the run is the dry run's, labelled so
    assert before_run.dry_run and not after_run.dry_run
    assert [s.run for s in after_run.steps] == [0] * len(after_run.steps)
    for step in after_run.steps:
        step.run = None
    assert after_run == before_run
    assert loss.value() == value
    assert g.layout.batches == records and bv.last_run_stats() is stats
    for p in model.parameters():
        np.testing.assert_array_equal(p.grad, grads[p.name])


def test_trace_a_partly_run_graph_as_a_whole():
    g, loss, _ = figure1("agenda")
    g.forward()
    with graph_scope(g):
        extra = bv.tanh(loss)  # added after the first run
    t = bv.trace(extra)
    assert sum(len(b) for b in t.batches) == len(g.ops) - len(g.param_of_node)
    assert t.loss == extra.node


# --- snapshot, serialization, networkx ---------------------------------------------------


def test_snapshot_of_every_node():
    g, loss, _ = figure1("agenda", record_source=True)
    line = sys._getframe().f_lineno - 1
    t = bv.trace(loss)
    assert len(t.nodes) == len(g.ops) and t.loss == loss.node
    for n in t.nodes:
        assert (n.op, n.shape, n.signature, n.depth, n.args) == (
            g.ops[n.id].name, g.shapes[n.id], g.sigs[n.id], g.depths[n.id], g.args[n.id])
        assert n.signature_name == g.signature_name(n.signature)
        assert n.is_parameter == (n.id in g.param_of_node)
    assert [n.parameter for n in t.nodes if n.is_parameter] == ["W", "b", "U", "c"]
    # record_source=True: the first line outside batchviz - here, this test's call of figure1
    assert {n.source for n in t.nodes} == {f"{__file__}:{line}"}
    summary = {s.name: s for s in t.signatures}
    assert summary["tanh"].nodes == 9 and summary["tanh"].cheap
    assert summary["matmul-W#3-7x1"].shared == (0,) and not summary["matmul-W#3-7x1"].cheap


def test_source_lines_point_at_user_code():
    g = bv.Graph("agenda", record_source=True)
    with graph_scope(g):
        x = bv.input(np.ones(2))
        y = bv.tanh(x); line = sys._getframe().f_lineno  # noqa: E702
    t = bv.trace(y)
    assert t.nodes[y.node].source == f"{__file__}:{line}"


def test_json_round_trip(tmp_path):
    g, loss = build_mixed(3)
    t = bv.trace(loss)
    text = t.to_json()
    assert json.loads(text)["format"] == 2
    again = Trace.from_json(text)
    assert again == t
    assert again.batches == t.batches and again.copies == t.copies
    assert isinstance(again.steps[0], Step) and isinstance(again.nodes[5].shape, tuple)
    assert Trace.from_dict(t.to_dict()) == t
    path = tmp_path / "trace.json"
    t.to_json(path, indent=1)
    assert Trace.from_json(path) == t
    assert Trace.from_json(str(path)).states(3) == t.states(3)


def test_bad_trace_files_are_refused():
    with pytest.raises(ValueError, match="not a batchviz trace"):
        Trace.from_dict({"hello": 1})
    g, loss, _ = figure1()
    d = bv.trace(loss).to_dict()
    d["format"] = 99
    with pytest.raises(ValueError, match="format 99 is not supported"):
        Trace.from_dict(d)


def test_networkx_depths_are_longest_paths():
    g, loss = build_mixed(11)
    t = bv.trace(loss)
    G = t.to_networkx()
    assert G.number_of_nodes() == len(g.ops)
    assert G.number_of_edges() == len({(a, i) for i in range(len(g.ops)) for a in g.args[i]})
    for v in G:
        longest = nx.dag_longest_path_length(G.subgraph(nx.ancestors(G, v) | {v}))
        assert longest == g.depths[v] == G.nodes[v]["depth"]
        assert G.nodes[v]["op"] == g.ops[v].name and G.nodes[v]["shape"] == g.shapes[v]
        assert G.nodes[v]["signature"] == g.sigs[v]


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_topological_generations_reproduce_depth_batching(seed):
    g, loss = build_mixed(seed, "depth")
    t = bv.trace(loss, "depth")
    G = t.to_networkx()
    expected = set()
    for generation in nx.topological_generations(G):
        groups = {}
        for v in generation:
            if G.nodes[v]["parameter"] is None:
                groups.setdefault(G.nodes[v]["signature"], set()).add(v)
        expected |= {frozenset(grp) for grp in groups.values()}
    assert {frozenset(b) for b in t.batches} == expected


# --- states per step ----------------------------------------------------------------------


def test_states_per_step():
    g, loss, _ = figure1("agenda")
    t = bv.trace(loss)
    for step in t.steps:
        states = t.states(step.index)
        assert [i for i, s in enumerate(states) if s == "batch"] == sorted(step.batch)
        params = set(g.param_of_node)
        count = lambda name: sum(1 for i, s in enumerate(states) if s == name and i not in params)
        assert count("done") == step.done
        assert count("agenda") + count("batch") == step.on_agenda
        assert count("waiting") == step.waiting
        assert all(states[p] == "done" for p in params)
    assert set(t.states(len(t))) == {"done"}
    assert t.states(-1) == t.states(len(t))
    with pytest.raises(IndexError, match="this trace has 23 steps"):
        t.states(24)
    with pytest.raises(TypeError, match="step must be an int"):
        t.states(1.5)


def test_bad_input():
    with pytest.raises(TypeError, match="expected an expression"):
        bv.trace(np.ones(3))
    g, loss, _ = figure1()
    with pytest.raises(ValueError, match="unknown strategy 'fastest'"):
        bv.trace(loss, "fastest")
    t = bv.trace(g)  # a graph works too
    assert t.loss is None and len(t) == 23
