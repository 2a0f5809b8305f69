"""bv.explain: numbers checked against the executor, the traces and networkx; the lower
bound against a brute-force oracle; the report's wording; and speed on a 100k-node graph."""
import io
import json
import re
import xml.etree.ElementTree as ET

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import batchviz as bv
from batchviz.examples import figure1
from batchviz.graph import graph_scope
from batchviz.explain import Explanation, cost_model
from batchviz.explain import costmodel
from batchviz.explain.diagnose import key_differences
from batchviz.ops.base import Op
from batchviz.schedule import DepthBatching

PAPER_STRATEGIES = ("none", "depth", "agenda")  # what bv.explain compares by default
from test_trace import ReverseDepth, build_mixed

SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
ANSI = re.compile(r"\x1b\[")


class _Unbatchable(Op):
    """A test op that may not be batched (App. A's last class)."""

    name = "test_unbatchable"
    batchable = False

    def infer_shape(self, shapes, attrs):
        return shapes[0]

    def forward(self, xp, ins, attrs, n):
        return ins[0] * 1.0

    def backward(self, xp, ins, out, gout, attrs, n, needs):
        return [gout]


_UNBATCHABLE = _Unbatchable()  # not registered: the op registry is the library's


def executor_counts(build, strategy):
    g, loss = build(strategy)
    loss.value()
    f = g.last_stats.forward
    return dict(batches=f.batches, kernels=f.kernels, copies=f.copies,
                copies_avoided=f.copies_avoided, bytes_copied=f.bytes_copied)


def explained_counts(e, strategy):
    r = e.strategies[strategy]
    return dict(batches=r.batches, kernels=r.kernels, copies=r.copies,
                copies_avoided=r.copies_avoided, bytes_copied=r.bytes_copied)


def chain_bound_oracle(g):
    """Sum over signatures of the longest path counting nodes of that signature, computed
    by networkx on a graph with a super-source and edge weight [head has signature s]."""
    G = nx.DiGraph()
    scheduled = [i for i in range(len(g.ops)) if i not in g.param_of_node]
    total = 0
    for s in {g.sigs[i] for i in scheduled}:
        G.clear()
        for i in scheduled:
            G.add_edge("source", i, w=int(g.sigs[i] == s))
            for a in g.args[i]:
                if a not in g.param_of_node:
                    G.add_edge(a, i, w=int(g.sigs[i] == s))
        total += nx.dag_longest_path_length(G, weight="w", default_weight=0)
    return total


# --- the numbers -------------------------------------------------------------------------


def test_figure1_numbers():
    g, loss, _ = figure1("agenda")
    e = bv.explain(loss)
    assert isinstance(e, Explanation) and repr(e).startswith("<bv.Explanation nodes=61")
    d = e.to_dict()
    assert (d["nodes"], d["parameters"], d["signatures"], d["lower_bound"]) == (61, 4, 10, 23)
    assert {n: r["batches"] for n, r in d["strategies"].items()} == {"none": 61, "depth": 29,
                                                                     "agenda": 23}
    for name in PAPER_STRATEGIES:
        assert explained_counts(bv.explain(loss), name) == executor_counts(
            lambda s: figure1(s)[:2], name)
        r = d["strategies"][name]
        assert r["kernels"] == r["batches"] + r["copies"]
        assert r["above_lower_bound"] == r["batches"] - 23
    json.dumps(d)  # plain data


@SETTINGS
@given(seed=st.integers(0, 10**6))
def test_counts_equal_executor_and_trace_on_random_graphs(seed):
    g, loss = build_mixed(seed)
    e = bv.explain(loss)
    for name in PAPER_STRATEGIES:
        assert explained_counts(e, name) == executor_counts(lambda s: build_mixed(seed, s), name)
        t = bv.trace(loss, name)
        assert (t.copies, t.copies_avoided, t.bytes_copied, t.kernels) == (
            e.strategies[name].copies, e.strategies[name].copies_avoided,
            e.strategies[name].bytes_copied, e.strategies[name].kernels)


@SETTINGS
@given(seed=st.integers(0, 10**6))
def test_lower_bound_is_the_chain_oracle_and_a_bound(seed):
    g, loss = build_mixed(seed)
    e = bv.explain(loss, strategies=("none", "depth", "agenda", ReverseDepth()))
    assert e.lower_bound == chain_bound_oracle(g)
    assert all(r.batches >= e.lower_bound for r in e.strategies.values())


def test_user_strategy_of_the_graph_is_added():
    g, loss, _ = figure1(ReverseDepth())
    e = bv.explain(loss)
    assert list(e.strategies) == ["none", "depth", "agenda", "reverse-depth"]
    assert e.strategies["reverse-depth"].batches == e.strategies["depth"].batches
    with pytest.raises(ValueError, match="unknown strategy"):
        bv.explain(loss, strategies=["agenda", "fastest"])
    with pytest.raises(TypeError, match="expected an expression"):
        bv.explain("loss")



def test_one_strategy_given_alone_is_one_strategy():
    """``strategies="depth"`` is the strategy depth, not the letters d, e, p, t, h."""
    g, loss, _ = figure1("agenda")
    both = bv.explain(loss, strategies=("depth",))
    for alone in ("depth", DepthBatching(), DepthBatching):
        e = bv.explain(loss, strategies=alone)
        assert list(e.strategies) == ["depth", "agenda"]  # the graph's own is added
        assert e.to_dict() | {"explain_seconds": 0} == both.to_dict() | {"explain_seconds": 0}
    e = bv.explain(loss, strategies=ReverseDepth())
    assert list(e.strategies) == ["reverse-depth", "agenda"]

def test_tiny_and_empty_graphs():
    e = bv.explain(bv.Graph())
    assert (e.nodes, e.lower_bound, e.strategies["agenda"].batches) == (0, 0, 0)
    assert e.verdict.startswith("nothing to schedule") and "verdict: nothing" in str(e)
    g = bv.Graph()
    with graph_scope(g):
        x = bv.input(np.ones(3))
    e = bv.explain(x)
    assert e.lower_bound == 1 and {r.kernels for r in e.strategies.values()} == {1}
    assert e._repr_html_().count("<svg") == 4


# --- changes nothing ---------------------------------------------------------------------


def test_explain_changes_no_result():
    g, loss, model = figure1("agenda")
    before = bv.explain(loss).to_dict()
    assert g.n_evaluated == 0 and not g.plans
    value = loss.value()
    loss.backward()
    stats, records = bv.last_run_stats(), list(g.layout.batches)
    after = bv.explain(loss).to_dict()
    for d in (before, after):
        d.pop("explain_seconds")
    # the same numbers, but after the run the graph's strategy is shown as it ran
    assert not before["strategies"]["agenda"].pop("ran")
    assert after["strategies"]["agenda"].pop("ran")
    assert after == before
    assert bv.last_run_stats() is stats and g.layout.batches == records
    # the same graph without any explain: bit-identical value and gradients
    _, plain_loss, plain_model = figure1("agenda")
    assert plain_loss.value() == value
    plain_loss.backward()
    for p, q in zip(model.parameters(), plain_model.parameters()):
        np.testing.assert_array_equal(p.grad, q.grad)


# --- the report ----------------------------------------------------------------------------


def test_report_text():
    g, loss, _ = figure1("agenda")
    e = bv.explain(loss)
    text = e.to_text(color=False)
    assert str(e) == text  # pytest's captured stdout is not a terminal: plain
    assert not ANSI.search(text)
    assert "61 nodes in 10 signatures (+4 parameters" in text
    assert "lower bound: 23 batches" in text
    row = lambda label: next(line for line in text.splitlines() if line.startswith(label)).split()  # noqa: E731
    assert row("batches ")[-3:] == ["61", "29", "23"]
    assert row("kernel launches")[-3:] == [str(e.strategies[n].kernels) for n in PAPER_STRATEGIES]
    assert row("above lower bound")[-3:] == ["+38", "+6", "+0"]
    assert "(estimate)" in text and "calibrated once on this machine" in text
    d, a = e.strategies["depth"].kernels, e.strategies["agenda"].kernels
    assert text.splitlines()[-1] == (
        f"verdict: agenda needs {round(100 * (d - a) / d)}% fewer launches than depth: the 3 "
        "squared_distance nodes sit at depths 11\u201319 (3 batches with depth, "
        "1 with agenda)")
    assert "largest batches (agenda): 9 \u00d7 input\u00b73x1 (step 1/23)" in text
    # the signatures by their short names (the full ones are in to_dict() and on hover)
    assert row("input\u00b72x1")[:2] == ["input\u00b72x1", "3"] and "input-2x1" not in text
    rows = {r["display_name"]: r["name"] for r in e.to_dict()["top_signatures"]}
    assert rows["matmul\u00b7U"] == "matmul-U#13-4x1"
    assert '<td title="matmul-U#13-4x1">matmul\u00b7U</td>' in e._repr_html_()


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    g, loss, _ = figure1("agenda")
    e = bv.explain(loss)
    monkeypatch.setattr("sys.stdout", _Terminal())
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    coloured = str(e)
    assert ANSI.search(coloured) and "verdict" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured).count("squared_distance") >= 2
    monkeypatch.setenv("NO_COLOR", "1")
    assert not ANSI.search(str(e))


def test_same_numbers_equal_depth_verdict():
    g, loss, _ = figure1("agenda", lengths=(3, 3, 3))
    e = bv.explain(loss)
    assert e.strategies["agenda"].batches == e.strategies["depth"].batches == e.lower_bound
    assert e.verdict.startswith("agenda and depth need the same number of launches")


def _result(name, batches, copies, bytes_copied=0):
    from batchviz.explain.report import StrategyResult
    return StrategyResult(name=name, batches=batches, kernels=batches + copies, copies=copies,
                          copies_avoided=0, bytes_copied=bytes_copied, estimated_seconds=0.0,
                          above_lower_bound=0)


def _row(batches: dict):
    from batchviz.explain.report import SignatureRow
    return SignatureRow(id=3, name="cmult", op="cmult", nodes=40, min_depth=2, max_depth=9,
                        average_depth=5.0, chain_bound=4, batches=batches, display_name="cmult")


def test_the_verdict_names_a_signature_only_when_it_takes_fewer_batches():
    """Launches are batches plus copies: a strategy may need fewer launches with more
    batches, because it copies less. The verdict then says that, instead of naming a
    signature that both strategies batch alike (a Tree-LSTM's explanation once read "the 1
    esum nodes sit at depth 50 (1 batches with depth, 1 with agenda)")."""
    from batchviz.explain.diagnose import verdict

    results = {"depth": _result("depth", 94, 58, 22_400), "agenda": _result("agenda", 100, 45, 15_000)}
    same = _row({"depth": 1, "agenda": 1})
    line = verdict(results, {"agenda": same, "depth": _row({"depth": 20, "agenda": 26})})
    assert line == ("agenda needs 5% fewer launches than depth (145 against 152): agenda runs "
                    "100 batches against 94 and copies 45 argument blocks against 58 "
                    "(14.6 KiB against 21.9 KiB)")
    results = {"depth": _result("depth", 30, 12), "agenda": _result("agenda", 30, 8)}
    assert "agenda runs the same 30 batches and copies 8 argument blocks against 12" in \
        verdict(results, {"agenda": same})
    results = {"depth": _result("depth", 30, 10), "agenda": _result("agenda", 34, 6)}
    assert verdict(results, {}) == (
        "agenda and depth need the same number of launches (40): agenda runs 34 batches "
        "against 30 and copies 6 argument blocks against 10 (0 B against 0 B)")
    results = {"depth": _result("depth", 30, 10), "agenda": _result("agenda", 26, 10)}
    saves = _row({"depth": 9, "agenda": 5})
    assert verdict(results, {"agenda": saves}) == (
        "agenda needs 10% fewer launches than depth: the 40 cmult nodes sit at depths 2\u20139 "
        "(9 batches with depth, 5 with agenda)")


def test_small_batches_and_why():
    model = bv.Model(seed=0)
    W1 = model.add_parameters((3, 3), name="W1")
    W2 = model.add_parameters((3, 3), name="W2")
    g = bv.Graph("agenda")
    with graph_scope(g):
        h1 = h2 = bv.input(np.ones(3))
        for _ in range(5):  # two chains: each matmul waits for the previous one
            h1, h2 = W1 @ h1, W2 @ h2
        u = [g.add(_UNBATCHABLE, (h1.node,)) for _ in range(3)]
        loss = bv.sum_elems(bv.esum([h1, h2] + u))
    e = bv.explain(loss)
    notes = {n.name: n for n in e.small}
    w1 = notes["matmul\u00b7W1"]
    assert (w1.nodes, w1.batches) == (5, 5)
    assert "dependency chain of 5: no strategy needs fewer batches" in w1.reason
    assert "cannot join the 5 nodes of matmul\u00b7W2:" in w1.reason
    assert "shared argument W1#" in w1.reason and "vs W2#" in w1.reason
    assert e.unbatchable == 3
    assert "3 nodes belong to unbatchable ops" in str(e)


def test_key_differences_name_the_part():
    model = bv.Model(seed=0)
    W = model.add_parameters((3, 4), name="W")
    g = bv.Graph()
    with graph_scope(g):
        x3, x4 = bv.input(np.ones(3)), bv.input(np.ones(4))
        a = bv.concatenate([x3, x4])
        b = bv.concatenate([x4, x4])
        c = bv.concatenate([x3, x3, x4])
        m = W @ x4
        M = bv.input(np.ones((3, 4))) @ x4
        s3, s2, t2 = bv.esum([x3, x3, x3]), bv.esum([x3, x3]), bv.esum([x4, x4])
    key = lambda e: g.sigtab[g.sigs[e.node]].key  # noqa: E731
    assert key_differences(g, key(a), key(b)) == [("shape", "7x1", "8x1"), ("shape", "3x1", "4x1")]
    assert key_differences(g, key(a), key(c))[0][0] == "number of arguments"
    assert key_differences(g, key(m), key(M)) == [("shared argument", f"W#{m.graph.args[m.node][0]}", "3x4")]
    assert key(s3) == key(s2)  # a sum batches with sums of any number of arguments
    assert key_differences(g, key(s3), key(t2)) == [("shape", "3x1", "4x1")]
    assert key_differences(g, key(a), key(m))[0][0] == "op"


# --- HTML ----------------------------------------------------------------------------------


def test_html(tmp_path):
    g, loss, _ = figure1("agenda")
    e = bv.explain(loss)
    html = e._repr_html_()
    assert "<table" in html and "verdict: agenda needs" in html and "bv-best" in html
    svgs = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert len(svgs) == 4  # three batch strips and the graph thumbnail
    for svg in svgs:
        ET.fromstring(svg)  # well-formed
    strip = ET.fromstring(svgs[0])
    assert len(strip.findall("{http://www.w3.org/2000/svg}rect")) == 61  # one bar per batch of none
    page = e.to_html(tmp_path / "report.html")
    assert page.startswith("<!DOCTYPE html>") and (tmp_path / "report.html").read_text() == page


# --- cost model ----------------------------------------------------------------------------


def test_cost_model_is_calibrated_once_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("BATCHVIZ_CACHE_DIR", str(tmp_path))
    costmodel.forget_cached_model()
    try:
        first = cost_model()
        assert first.launch_seconds > 0 and first.flops_per_second > 0
        assert (tmp_path / "cost-model.json").exists()
        costmodel.forget_cached_model()
        monkeypatch.setattr(costmodel, "calibrate", lambda: pytest.fail("measured twice"))
        assert cost_model() == first  # read back from the disk cache
        assert first.estimate(10, 0) == pytest.approx(10 * first.launch_seconds)
        assert first.estimate(10, 1e9) > first.estimate(5, 1e9) > first.estimate(5, 0)
    finally:
        costmodel.forget_cached_model()


# --- a 100k-node graph ---------------------------------------------------------------------


def build_rnn_minibatch(n_sequences, seed=0, hidden=8):
    rng = np.random.default_rng(seed)
    m = bv.Model(seed=0)
    W = m.add_parameters((hidden, 2 * hidden), name="W")
    b = m.add_parameters((hidden,), name="b")
    U = m.add_parameters((1, hidden), name="U")
    E = m.add_lookup_parameters((100, hidden), name="E")
    g = bv.Graph("agenda")
    with graph_scope(g):
        losses = []
        for _ in range(n_sequences):
            h = bv.zeros(hidden)
            for _ in range(int(rng.integers(5, 120))):
                h = bv.tanh(W @ bv.concatenate([h, E[int(rng.integers(100))]]) + b)
            losses.append(bv.squared_norm(U @ h))
        loss = bv.esum(losses)
    return g, loss


@pytest.mark.slow
def test_big_graph_is_concise():
    """A 100k-node graph gives a short report. (That explain takes less time than building
    the graph did is shown by ``python -m benchmarks overhead``, which times both in one run;
    a timed assertion here would fail whenever the machine is busy.)"""
    g, loss = build_rnn_minibatch(340)
    assert len(g.ops) > 100_000
    e = bv.explain(loss)
    text = str(e)
    assert len(text.splitlines()) <= 40 and len(text) <= 4000
    assert len(e._repr_html_()) < 200_000
    assert e.lower_bound == e.strategies["agenda"].batches  # the agenda reaches the bound here
    assert e.verdict.startswith("agenda needs") and "squared_norm" in e.verdict


@pytest.mark.parametrize("seconds, text", [
    (3.2e-6, "3.2 \u00b5s"), (4.6e-4, "460 \u00b5s"), (0.0123, "12.3 ms"), (2.5, "2.50 s")])
def test_seconds_read_in_the_unit_that_fits(seconds, text):
    from batchviz.explain.text import seconds_text
    assert seconds_text(seconds) == text


@pytest.mark.parametrize("n, text", [(288, "288 B"), (4_800, "4.7 KiB"), (4_821_456, "4.6 MiB"),
                                     (3 << 30, "3.0 GiB")])
def test_bytes_read_in_the_unit_that_fits(n, text):
    from batchviz.words import bytes_text
    assert bytes_text(n) == text


def test_long_tables_say_how_much_they_left_out():
    """Eight chains, each with its own weight matrix: more signatures than the table shows,
    and more signatures stuck in small batches than the notes list; both say how many."""
    model = bv.Model(seed=0)
    with bv.Graph():
        outs = []
        for d in range(2, 10):
            W = model.add_parameters((d, d))
            h = bv.zeros(d)
            for _ in range(3):
                h = bv.tanh(W @ h)
            outs.append(bv.sum_elems(h))
        e = bv.explain(bv.esum(outs))
    shown = len(e.rows)
    assert e.more_signatures == e.signatures - shown > 0
    assert e.more_signature_nodes == e.nodes - sum(r.nodes for r in e.rows)
    assert len(e.small) == 5 and e.more_small == 3      # 8 matmul signatures, 3 batches each
    text = str(e)
    assert f"... and {e.more_signatures} more signatures with {e.more_signature_nodes} nodes" in text
    assert "  ... and 3 more" in text


def test_the_header_counts_in_words():
    model = bv.Model(seed=0)
    W = model.add_parameters((3, 3))
    with bv.Graph():
        e = bv.explain(bv.sum_elems(bv.tanh(W @ bv.zeros(3))))
    assert str(e).splitlines()[0] == ("batchviz explain: 4 nodes in 4 signatures "
                                      "(+1 parameter, done from the start)")
    with bv.Graph():
        one = bv.explain(bv.input(1.0))
    assert str(one).splitlines()[:2] == [
        "batchviz explain: 1 node in 1 signature (+0 parameters, done from the start)",
        "lower bound: 1 batch (per signature its longest dependency chain, summed over "
        "signatures)"]


@pytest.mark.parametrize("n_sequences", [None, 24])
def test_the_graph_picture_keeps_its_text_size_and_fits_a_notebook_cell(n_sequences):
    """Drawn at its natural size (its 11 px text never shrunk to a box) and no wider than a
    notebook cell at 1280 px: a large graph is summarised in fewer boxes instead."""
    from batchviz.explain.html import THUMBNAIL_SIZE

    if n_sequences is None:
        g, loss, _ = figure1("agenda")
    else:
        g, loss = build_rnn_minibatch(n_sequences)
    html = bv.explain(loss)._repr_html_()
    g.finish()
    picture = re.search(r'<div class="bv-thumb"><svg[^>]*>', html).group(0)
    width, height = (float(v) for v in re.search(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', picture).groups())
    assert f'width="{width:g}" height="{height:g}"' in picture  # CSS px, scale 1
    assert 'font-size="11"' in picture and width <= THUMBNAIL_SIZE[0]
    assert "max-width:300px" not in html and 'width="100%"' not in picture
