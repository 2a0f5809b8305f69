"""The fewest batches of a graph, exactly: ``bv.optimal_schedule(loss, time_limit=10)``.

Finding the schedule with the fewest batches is NP-hard (§3.2); the strategies are
heuristics, and the lower bound of ``bv.explain`` (per signature its longest dependency
chain, summed) is not always reachable, because the chains of different signatures can
get in each other's way. Where it is not, a constraint solver (OR-Tools CP-SAT, the
``batchviz[optimum]`` extra) can still find and prove the optimum on graphs of a few
hundred nodes, given time: on the tutorials' random graphs of mixed ops, 247 nodes took
5 to 21 s with one worker (``docs/concepts/optimum.md``).

How it is found: CP-SAT answers "is there a schedule of at most ``K`` batches?", with
``K`` chosen by bisection between a lower bound and the best strategy's count. Every "yes"
comes with a schedule, a new upper bound; every "no" is a proof that raises the lower
bound; where they meet is the optimum. (One decision per ``K`` proved faster, on the
tutorials' random graphs, than one model that minimizes the count: with ``K`` fixed,
every node's possible batches form a short window.) The model of one decision, and how it
keeps to its deadline, are in :mod:`batchviz.explain.optimum_model`.

The time limit is the whole call's: scheduling the starting points, building each model
and solving it all count, and the call returns within about the limit. When the first
model cannot even be built in time (a graph of thousands of nodes and a short limit), the
result is the best strategy's schedule, not proven, with a note saying so.

(Redundant constraints - every signature gets at least as many positions as its longest
chain; every position holds a node - and breaking the symmetry of two independent
neighbouring batches were tried, and made the solver neither reliably faster nor slower.) The
strategies' schedules are the upper bound; when the best of them meets the lower bound it
is optimal and the solver is not needed (that is the case of the Figure 1 example and of
the tutorials' Tree-LSTM and parser graphs, which ``lookahead`` schedules optimally).
"""
from __future__ import annotations

import time

from ..errors import BatchvizError
from ..schedule import FlatSchedule, PendingView, resolve_strategy, validate_schedule
from ..schedule.lookahead import batch_lower_bound
from ..trace.record import graph_of
from .optimum_model import BuildClock, Dag, decide
from .optimum_report import Optimum

#: the strategies whose schedules are the starting points (upper bounds)
STARTING_STRATEGIES = ("none", "depth", "agenda", "lookahead")
#: the solver's model grows with nodes x batches; above this many nodes it is not built
MAX_NODES = 1000
EXTRA = "pip install 'batchviz[optimum]'"


class SolverMissing(BatchvizError, ImportError):
    """OR-Tools, which the exact solver needs, is not installed."""


class GraphTooLarge(BatchvizError, ValueError):
    """The graph has more nodes than the exact solver is allowed to take on. ``nodes`` and
    ``max_nodes`` say by how much, for callers that word their own advice (``bv.explain``
    has no ``max_nodes`` to pass)."""

    def __init__(self, nodes: int, max_nodes: int):
        super().__init__(f"the exact solver takes graphs of up to max_nodes={max_nodes} nodes; "
                         f"this one has {nodes} (pass a larger max_nodes to try)")
        self.nodes, self.max_nodes = nodes, max_nodes


def cp_model_module():
    """OR-Tools' CP-SAT module, imported on first use (it takes longer to import than
    batchviz itself, and only the exact solver needs it)."""
    try:
        from ortools.sat.python import cp_model
    except ImportError as e:
        raise SolverMissing(f"the exact solver needs OR-Tools (CP-SAT): {EXTRA}") from e
    return cp_model


def is_seconds(x) -> bool:
    """``x`` is a positive number (not a bool, not NaN): a time limit."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def optimal_schedule(target, time_limit: float = 10.0, max_nodes: int = MAX_NODES,
                     workers: int | None = 1) -> Optimum:
    """The schedule of the graph of ``target`` (the loss, or a ``bv.Graph``) with the fewest
    batches, proven optimal within ``time_limit`` seconds, else the best found and the
    proven lower bound. Every node of the graph is scheduled, as if nothing had run yet
    (as ``bv.explain`` does). ``print()`` the result; in Jupyter it shows as a table.

    The call returns within about ``time_limit`` seconds, everything included (the
    strategies' schedules, building the solver's models, solving them).

    Raises :class:`~batchviz.explain.SolverMissing` without OR-Tools and
    :class:`~batchviz.explain.GraphTooLarge` above ``max_nodes`` nodes, unless a strategy
    already meets the lower bound (then the solver is not needed). ``workers``: CP-SAT's
    threads. One (the default) gives the same answer on every run; more may prove sooner
    on a large machine, but the schedule found then changes from run to run. An answer not
    proven is the best found when the time ran out, and may differ between runs (None:
    one, as before this default was fixed)."""
    started = time.perf_counter()
    workers = 1 if workers is None else workers
    if not is_seconds(time_limit):
        raise ValueError(f"optimal_schedule: time_limit must be a positive number of seconds, "
                         f"got {time_limit!r}")
    if not (isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1):
        raise ValueError(f"optimal_schedule: workers must be a whole number >= 1, "
                         f"got {workers!r}")
    graph, _ = graph_of(target)
    view = PendingView(graph, start=0)
    schedules = {name: resolve_strategy(name).schedule(view) for name in STARTING_STRATEGIES}
    return solve(view, schedules, time_limit, max_nodes=max_nodes, workers=workers,
                 started=started)


def solve(view: PendingView, schedules: dict, time_limit: float, max_nodes: int = MAX_NODES,
          workers: int | None = 1, chain_bound: int | None = None,
          started: float | None = None) -> Optimum:
    """The fewest batches for the nodes of ``view``, starting from ``schedules`` (strategy
    name -> valid schedule, a list of batches or a FlatSchedule: the upper bounds); see the
    module docstring. ``chain_bound``: the per-signature lower bound, when known.
    ``started``: the ``time.perf_counter()`` time the ``time_limit`` counts from (default:
    now)."""
    t0 = time.perf_counter() if started is None else started
    workers = 1 if workers is None else workers
    counts = {name: len(batches) for name, batches in schedules.items()}
    best = min(counts, key=counts.get)
    chain_bound = batch_lower_bound(view) if chain_bound is None else chain_bound
    result = Optimum(batches=_as_lists(schedules[best]), lower_bound=chain_bound,
                     chain_bound=chain_bound, proven=False, seconds=0.0, time_limit=time_limit,
                     strategies=counts, found_by=best, nodes=len(view.nodes))
    if counts[best] <= chain_bound:
        result.proven, result.proof = True, _reaching(
            [name for name, count in counts.items() if count <= chain_bound], len(counts))
        return result
    if len(view.nodes) > max_nodes:
        raise GraphTooLarge(len(view.nodes), max_nodes)
    cp_model = cp_model_module()
    result.solved = True
    dag = Dag(view)
    result.lower_bound = max(chain_bound, dag.through_bound)
    _bisect(result, view, dag, cp_model, t0, workers)
    result.proven = result.lower_bound >= result.count
    if result.proven:
        result.proof = ("CP-SAT reaches the lower bound" if result.count == chain_bound else
                        f"fewer than {result.count} batches proven impossible")
    result.seconds = time.perf_counter() - t0
    return result


def _reaching(names: list, strategies: int) -> str:
    """Which of the ``strategies`` compared reach the lower bound (``names``), in words."""
    if len(names) == strategies > 1:
        return "every strategy reaches the lower bound"
    if len(names) == 1:
        return f"{names[0]} reaches the lower bound"
    return f"{', '.join(names[:-1])} and {names[-1]} reach the lower bound"


def _bisect(result: Optimum, view: PendingView, dag: Dag, cp_model, t0: float,
            workers: int) -> None:
    """Narrow ``[result.lower_bound, result.count]`` by bisection on ``K``, in place, until
    the two meet or the time is up. A decision gets half the time left, all of it when it
    is the last open one, or when half would not even build its model; when it runs out,
    its ``K`` stays open and the search goes on above it, for a better schedule. A
    decision whose model cannot be built in the time left is not started. When none could
    be (a large graph, a short limit), ``result.note`` says so."""
    search_from, started_any, clock = result.lower_bound, False, BuildClock()
    while search_from < result.count:
        left = result.time_limit - (time.perf_counter() - t0)
        k = (search_from + result.count - 1) // 2
        needs = clock.needs(dag, k)
        if left <= needs:
            break
        last = result.lower_bound == result.count - 1
        deadline = time.perf_counter() + (left if last or needs > left / 2 else left / 2)
        status, batches = decide(cp_model, dag, k, deadline, workers, clock)
        started_any = started_any or status != "unbuilt"
        if status == "feasible":
            result.batches, result.found_by = validate_schedule(view, batches), "CP-SAT"
        elif status == "infeasible":
            result.lower_bound = search_from = k + 1
        else:
            search_from = k + 1
    if not started_any:
        result.note = (f"the solver's model of {len(dag.nodes)} nodes could not be built and "
                       f"searched within {result.time_limit:g} s; a larger time_limit lets "
                       "it search")


def _as_lists(schedule) -> list:
    if isinstance(schedule, FlatSchedule):
        return schedule.batches()
    return [list(batch) for batch in schedule]


#: ``bv.explain(loss, optimum=True)``'s time limit, in seconds
EXPLAIN_TIME_LIMIT = 10.0


def explain_optimum(view: PendingView, schedules: dict, chain_bound: int, optimum) -> tuple:
    """``(Optimum or None, note)`` for ``bv.explain(loss, optimum=...)``; ``schedules``:
    explain's, by strategy name.

    ``optimum=None`` (the default) costs nothing: the optimum is shown where one of the
    schedules meets the lower bound (it is then optimal), else the note says how to solve
    for it. ``True`` runs the solver for up to ``EXPLAIN_TIME_LIMIT`` seconds, a number for
    that many seconds, starting from ``lookahead`` too; where the solver cannot run (no
    OR-Tools, too many nodes) the note says why. ``False``: neither."""
    if optimum is False:
        return None, ""
    if not (optimum is None or optimum is True or is_seconds(optimum)):
        raise ValueError(f"explain: optimum must be None, True, False or a time limit in seconds, "
                         f"got {optimum!r}")
    reached = [name for name, s in schedules.items() if len(s) <= chain_bound]
    if optimum is None:
        if reached:
            return solve(view, schedules, EXPLAIN_TIME_LIMIT, chain_bound=chain_bound), ""
        return None, "not computed; bv.explain(loss, optimum=True) solves for it"
    if not reached and "lookahead" not in schedules:
        schedules = dict(schedules, lookahead=resolve_strategy("lookahead").schedule(view))
    limit = EXPLAIN_TIME_LIMIT if optimum is True else float(optimum)
    try:
        return solve(view, schedules, limit, chain_bound=chain_bound), ""
    except SolverMissing as e:
        return None, f"not computed: {e}"
    except GraphTooLarge as e:  # explain has no max_nodes: name the call that has one
        return None, (f"not computed: the exact solver takes graphs of up to {e.max_nodes} "
                      f"nodes here; this one has {e.nodes} (bv.optimal_schedule(loss, "
                      f"max_nodes={e.nodes}) tries it)")
