"""The exact optimum (batchviz/explain/optimum.py): it equals a brute-force search on tiny
random graphs, never goes below the lower bound, gives schedules that pass
validate_schedule and compute, through the executor, the values and gradients of
unbatched execution; Figure 1's optimum is pinned; the time limit holds, and a graph too
big to prove in it is reported as not proven."""
import json
import sys
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import batchviz as bv
from batchviz.examples import figure1
from batchviz.explain.optimum import (GraphTooLarge, SolverMissing, cp_model_module,
                                      optimal_schedule, solve)
from batchviz.schedule import NoBatching, PendingView, validate_schedule
from batchviz.schedule.lookahead import batch_lower_bound

from models import load_tutorial_graphs

G = load_tutorial_graphs()

try:
    cp_model_module()
    SOLVER_MISSING = ""
except SolverMissing as e:
    SOLVER_MISSING = str(e)
needs_solver = pytest.mark.skipif(bool(SOLVER_MISSING), reason=SOLVER_MISSING)


# --- tiny random graphs against brute force ----------------------------------------------

KINDS = ("tanh", "logistic", "add")  # three signatures: two unary element-wise ops and a sum


@st.composite
def tiny_graphs(draw):
    """``(kinds, nodes)``: 4 to 9 nodes of 1 to 3 kinds; each node ``(kind, args)``, its
    arguments earlier nodes or -1 (the parameter, which is done from the start)."""
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=1, max_size=3, unique=True))
    n = draw(st.integers(4, 9))
    nodes = []
    for k in range(n):
        kind = draw(st.sampled_from(kinds))
        arity = 2 if kind == "add" else 1
        nodes.append((kind, [draw(st.integers(-1, k - 1)) for _ in range(arity)]))
    return nodes


def build_tiny(nodes):
    model = bv.Model(seed=0)
    P = model.add_parameters((3,), name="P")
    graph = bv.Graph()
    with graph:
        made = []
        for kind, args in nodes:
            xs = [P if a < 0 else made[a] for a in args]
            made.append(bv.tanh(xs[0]) if kind == "tanh" else
                        bv.logistic(xs[0]) if kind == "logistic" else xs[0] + xs[1])
        view = PendingView(graph, start=0)
    return graph, view


def fewest_batches_exhaustively(view) -> int:
    """Breadth-first over the sets of nodes already run; a move runs *any* non-empty set of
    ready nodes of one signature (no shortcut: every batch a schedule could have)."""
    sig = view.signature
    needs = {n: frozenset(view.pending_args(n)) for n in view.nodes}
    goal = frozenset(view.nodes)
    frontier, seen, steps = {frozenset()}, {frozenset()}, 0
    while goal not in frontier:
        steps += 1
        following = set()
        for done in frontier:
            ready: dict = {}
            for n in view.nodes:
                if n not in done and needs[n] <= done:
                    ready.setdefault(sig[n], []).append(n)
            for group in ready.values():
                for mask in range(1, 1 << len(group)):
                    after = done | {n for i, n in enumerate(group) if mask >> i & 1}
                    if after not in seen:
                        seen.add(after)
                        following.add(after)
        frontier = following
    return steps


@needs_solver
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=tiny_graphs())
def test_matches_brute_force_on_tiny_graphs(nodes):
    graph, view = build_tiny(nodes)
    best = fewest_batches_exhaustively(view)
    # from the worst start (one node per batch) the solver must do all the work itself ...
    alone = solve(view, {"none": NoBatching().schedule(view)}, time_limit=30)
    # ... and from the strategies' schedules it must agree
    together = optimal_schedule(graph, time_limit=30)
    for result in (alone, together):
        assert result.proven and result.status == "optimal"
        assert result.count == result.lower_bound == best
        assert result.chain_bound == batch_lower_bound(view) <= best
        assert validate_schedule(view, result.batches) == result.batches
    graph.finish()


# --- bounds and validity on the tutorials' graphs ----------------------------------------

SMALL_GRAPHS = {
    "random-dag-3": lambda s="agenda": G.random_dag(s, seed=3, n_ops=40),
    "random-dag-4": lambda s="agenda": G.random_dag(s, seed=4, n_ops=40),
    "mixed-ops": lambda s="agenda": G.mixed_ops(s),
    "figure1": lambda s="agenda": G.figure1(s),
}


@needs_solver
@pytest.mark.parametrize("name", sorted(SMALL_GRAPHS))
def test_never_below_the_bound_and_never_above_a_strategy(name):
    graph, loss, _ = SMALL_GRAPHS[name]()
    result = optimal_schedule(loss, time_limit=60)
    view = PendingView(graph, start=0)
    assert result.proven
    assert batch_lower_bound(view) == result.chain_bound <= result.lower_bound == result.count
    assert result.count <= min(result.strategies.values())
    assert set(result.strategies) == {"none", "depth", "agenda", "lookahead"}
    validate_schedule(view, result.batches)
    graph.finish()


@needs_solver
def test_the_bound_is_not_always_reachable():
    """A random graph where the per-signature bound (15) is out of reach: the solver proves
    16 batches impossible and finds 17, three fewer than the best strategy (lookahead)."""
    graph, loss, _ = G.random_dag(seed=3, n_ops=40)
    result = optimal_schedule(loss, time_limit=60)
    assert (result.chain_bound, result.count, result.strategies["lookahead"]) == (15, 17, 20)
    assert result.found_by == "CP-SAT" and result.proof == "fewer than 17 batches proven impossible"
    graph.finish()


# --- through the executor ------------------------------------------------------------------

class Replay(bv.Strategy):
    """Runs a schedule given beforehand (the solver's), checked like any user strategy."""

    name = "replay"

    def __init__(self):
        self.batches = None

    def schedule(self, view):
        return self.batches


def values_and_grads(graph, loss, model):
    value = loss.value()
    loss.backward()
    return value, {p.name: p.grad.copy() for p in model.parameters()}


@needs_solver
@pytest.mark.parametrize("name", ["random-dag-3", "random-dag-4", "mixed-ops"])
def test_the_optimum_runs_with_the_values_and_gradients_of_no_batching(name, float64):
    reference = values_and_grads(*SMALL_GRAPHS[name]("none"))
    replay = Replay()
    graph, loss, model = SMALL_GRAPHS[name](replay)
    result = optimal_schedule(loss, time_limit=60)
    replay.batches = result.batches
    value, grads = values_and_grads(graph, loss, model)
    assert graph.last_stats.forward.batches == result.count
    assert value == pytest.approx(reference[0], rel=1e-12)
    for p, g in grads.items():
        np.testing.assert_allclose(g, reference[1][p], rtol=1e-10, atol=1e-12, err_msg=p)


# --- Figure 1 --------------------------------------------------------------------------------

def test_figure1_optimum_is_23_without_the_solver():
    """The agenda's 23 batches meet the lower bound: optimal, no solver needed."""
    graph, loss, _ = figure1()
    result = optimal_schedule(loss)
    assert (result.count, result.lower_bound, result.chain_bound) == (23, 23, 23)
    assert result.proven and result.proof == "agenda and lookahead reach the lower bound"
    assert {n: result.strategies[n] for n in ("none", "depth", "agenda")} == {
        "none": 61, "depth": 29, "agenda": 23}
    graph.finish()


@needs_solver
def test_figure1_optimum_is_23_found_by_the_solver_alone():
    graph, loss, _ = figure1()
    view = PendingView(graph, start=0)
    result = solve(view, {"none": NoBatching().schedule(view)}, time_limit=60)
    assert result.proven and result.found_by == "CP-SAT" and result.count == 23
    validate_schedule(view, result.batches)
    graph.finish()


# --- the time limit --------------------------------------------------------------------------

@needs_solver
def test_time_limit_is_honoured_and_not_proven_is_said():
    graph, loss, _ = G.random_dag(seed=1, n_ops=400)   # 478 nodes: bound 24, lookahead 60
    t0 = time.perf_counter()
    result = optimal_schedule(loss, time_limit=0.5)
    elapsed = time.perf_counter() - t0
    assert not result.proven and result.status == "not proven within 0.5 s"
    assert result.seconds < 0.5 + 1.0 and elapsed < 0.5 + 5.0  # (building the model counts)
    assert result.chain_bound <= result.lower_bound < result.count <= min(result.strategies.values())
    validate_schedule(PendingView(graph, start=0), result.batches)
    assert "not proven within 0.5 s" in str(result) and "between" in result.summary()
    graph.finish()


def big_graph():
    """A random graph of mixed ops of 3,500 nodes, above the solver's default max_nodes."""
    graph, loss, _ = G.random_dag(seed=1, n_ops=2960)
    assert len(graph.ops) >= 3000
    return graph, loss


@needs_solver
def test_a_short_time_limit_holds_on_thousands_of_nodes():
    """time_limit=1 on 3,500 nodes: building the solver's model alone takes longer, so the
    answer is the best strategy's schedule, not proven, with a note saying why; within the
    limit (it took 6.6 s when only the solver's own search was timed)."""
    graph, loss = big_graph()
    t0 = time.perf_counter()
    result = optimal_schedule(loss, time_limit=1, max_nodes=5000)
    assert time.perf_counter() - t0 < 1 + 1
    assert not result.proven and result.found_by in result.strategies
    assert "could not be built and searched within 1 s" in result.note
    assert result.note in result.summary() and "time-limited best" in result.summary()
    assert result.to_dict()["note"] == result.note
    validate_schedule(PendingView(graph, start=0), result.batches)
    graph.finish()


@needs_solver
@pytest.mark.slow
def test_a_time_limit_that_lets_the_solver_search_holds_on_thousands_of_nodes():
    """time_limit=4 on 3,500 nodes: the model is built and searched (no note), and the call
    still ends within the limit and a second, building and solving counted."""
    graph, loss = big_graph()
    t0 = time.perf_counter()
    result = optimal_schedule(loss, time_limit=4, max_nodes=5000)
    assert time.perf_counter() - t0 < 4 + 1
    assert result.solved and result.note == ""
    assert result.lower_bound <= result.count <= min(result.strategies.values())
    validate_schedule(PendingView(graph, start=0), result.batches)
    graph.finish()


@needs_solver
def test_the_same_graph_gets_the_same_answer_every_run():
    """One worker and a fixed seed: the same schedule, not only the same count (several
    workers race, and whichever wins gives its own schedule)."""
    graph, loss, _ = G.random_dag(seed=3, n_ops=40)
    first, second = (optimal_schedule(loss, time_limit=60) for _ in range(2))
    assert first.proven and second.proven
    assert first.batches == second.batches
    graph.finish()


# --- errors and reports ----------------------------------------------------------------------

@pytest.mark.parametrize("limit", [0, -1, "10", True, float("nan")])
def test_a_bad_time_limit_is_refused(limit):
    graph, loss, _ = figure1()
    with pytest.raises(ValueError, match="time_limit must be a positive number of seconds"):
        optimal_schedule(loss, time_limit=limit)
    graph.finish()


def test_without_ortools_a_clear_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ortools.sat.python", None)  # its import fails
    graph, loss, _ = G.random_dag(seed=3, n_ops=40)
    with pytest.raises(SolverMissing, match=r"pip install 'batchviz\[optimum\]'"):
        optimal_schedule(loss)
    graph.finish()
    graph, loss, _ = figure1()  # where a strategy meets the bound, no solver is needed
    assert optimal_schedule(loss).proven
    graph.finish()


def test_too_many_nodes_is_a_clear_error():
    graph, loss, _ = G.random_dag(seed=3, n_ops=40)
    with pytest.raises(GraphTooLarge, match="max_nodes=10 nodes; this one has 55"):
        optimal_schedule(loss, max_nodes=10)
    graph.finish()


@needs_solver
def test_report_terminal_html_and_dict():
    graph, loss, _ = G.random_dag(seed=3, n_ops=40)
    result = bv.optimal_schedule(loss, time_limit=60)
    text = str(result)
    assert text.splitlines()[0].startswith(
        "optimum: 17 batches (optimal: fewer than 17 batches proven impossible; solved in")
    assert "lower bound: 15 batches" in text
    assert "strategies: lookahead 20, agenda 24, depth 28, none 55" in text
    assert repr(result) == "<bv.Optimum batches=17 lower_bound=17 status='optimal'>"
    html = result._repr_html_()
    assert "<table>" in html and "<td>proven lower bound</td><td>17</td>" in html
    d = json.loads(json.dumps(result.to_dict()))
    assert (d["batches"], d["lower_bound"], d["chain_bound"], d["status"]) == (17, 17, 15, "optimal")
    assert sum(map(len, d["schedule"])) == result.nodes == 55
    graph.finish()


# --- bv.explain shows it ---------------------------------------------------------------------

def explained_lines(e):
    return e.to_text(color=False).splitlines()


def test_explain_shows_the_optimum_where_it_costs_nothing():
    graph, loss, _ = figure1()
    e = bv.explain(loss)
    assert explained_lines(e)[2] == "optimum: 23 batches (optimal: agenda reaches the lower bound)"
    assert e.to_dict()["optimum"]["batches"] == 23 and "schedule" not in e.to_dict()["optimum"]
    assert "optimum: 23 batches" in e._repr_html_()
    assert not any(line.startswith("above optimum") for line in explained_lines(e))
    assert "optimum" not in e.to_text(color=False).replace("optimum: 23", "")
    assert bv.explain(loss, optimum=False).optimum is None
    assert not any(line.startswith("optimum") for line in explained_lines(
        bv.explain(loss, optimum=False)))
    graph.finish()


def test_explain_says_how_to_solve_where_no_strategy_meets_the_bound():
    graph, loss, _ = G.random_dag(seed=3, n_ops=40)
    e = bv.explain(loss)
    assert e.optimum is None
    assert explained_lines(e)[2] == ("optimum: not computed; bv.explain(loss, optimum=True) "
                                     "solves for it")
    assert e.to_dict()["optimum"] is None
    graph.finish()


@needs_solver
def test_explain_solves_when_asked():
    graph, loss, _ = G.random_dag(seed=3, n_ops=40)
    e = bv.explain(loss, optimum=60)
    lines = explained_lines(e)
    assert lines[2].startswith("optimum: 17 batches (optimal: fewer than 17 batches proven "
                               "impossible; solved in")
    above = next(line for line in lines if line.startswith("above optimum")).split()
    assert above[-3:] == [f"+{e.strategies[n].batches - 17}" for n in ("none", "depth", "agenda")]
    assert e.optimum.strategies["lookahead"] == 20  # lookahead is a starting point too
    d = e.to_dict()["optimum"]
    assert (d["batches"], d["chain_bound"], d["status"]) == (17, 15, "optimal")
    assert "above optimum" in e._repr_html_()
    graph.finish()


def test_explain_never_fails_for_want_of_the_solver(monkeypatch):
    monkeypatch.setitem(sys.modules, "ortools.sat.python", None)
    graph, loss, _ = G.random_dag(seed=3, n_ops=40)
    e = bv.explain(loss, optimum=True)
    assert e.optimum is None and explained_lines(e)[2] == (
        "optimum: not computed: the exact solver needs OR-Tools (CP-SAT): "
        "pip install 'batchviz[optimum]'")
    graph.finish()


def test_explain_of_a_graph_too_big_for_the_solver_says_so():
    """explain has no max_nodes: its note names the call and the argument that exist."""
    import inspect

    graph, loss, _ = G.random_dag(seed=1, n_ops=1000)
    e = bv.explain(loss, optimum=True)
    assert e.optimum is None
    line = explained_lines(e)[2]
    nodes = len(PendingView(graph, start=0).nodes)
    assert line == (f"optimum: not computed: the exact solver takes graphs of up to 1000 nodes "
                    f"here; this one has {nodes} (bv.optimal_schedule(loss, max_nodes={nodes}) "
                    "tries it)")
    assert "max_nodes" in inspect.signature(bv.optimal_schedule).parameters
    assert "max_nodes" not in inspect.signature(bv.explain).parameters
    graph.finish()


@pytest.mark.parametrize("bad", [0, -2, "yes", [1]])
def test_explain_refuses_a_bad_optimum(bad):
    graph, loss, _ = figure1()
    with pytest.raises(ValueError, match="optimum must be None, True, False or a time limit"):
        bv.explain(loss, optimum=bad)
    graph.finish()


# --- tutorial 6's leaderboard ----------------------------------------------------------------

def test_leaderboard_has_an_optimum_column():
    from batchviz.grade import LeaderboardRow, format_leaderboard

    header, _, row, unknown = format_leaderboard([
        LeaderboardRow("tiny", agenda=24, depth=28, lower_bound=15, optimum=17, student=18),
        LeaderboardRow("big", agenda=9, lower_bound=7)])
    assert header.split()[:7] == ["graph", "agenda", "depth", "lower", "bound", "optimum", "yours"]
    assert row.split()[:6] == ["tiny", "24", "28", "15", "17", "18"]
    assert unknown.split()[:6] == ["big", "9", "-", "7", "-", "-"]


# --- the command line ------------------------------------------------------------------------

OPPOSITE_ORDERS_SCRIPT = """
import batchviz as bv
model = bv.Model(seed=0)
P = model.add_parameters((4,), name="P")
with bv.Graph():
    loss = bv.sum_elems(bv.logistic(bv.tanh(P)) + bv.tanh(bv.logistic(P)))
    loss.value()
"""


@needs_solver
def test_command_line_solves_with_optimum(tmp_path, capsys):
    from batchviz.cli import main

    script = tmp_path / "opposite.py"
    script.write_text(OPPOSITE_ORDERS_SCRIPT)
    assert main(["explain", str(script)]) == 0
    assert "optimum: not computed; bv.explain(loss, optimum=True)" in capsys.readouterr().out
    assert main(["explain", "--optimum", str(script)]) == 0
    out = capsys.readouterr().out
    assert "lower bound: 4 batches" in out
    assert "optimum: 5 batches (optimal: fewer than 5 batches proven impossible" in out
    with pytest.raises(SystemExit) as exit_:  # refused while parsing, before the script runs
        main(["explain", "--optimum", "--optimum-seconds", "0", str(script)])
    assert exit_.value.code == 2
    assert "time limit must be a number of seconds greater than 0" in capsys.readouterr().err
