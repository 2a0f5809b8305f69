"""The fewest batches of a graph, exactly: ``bv.optimal_schedule(loss, time_limit=10)``.

Finding the schedule with the fewest batches is NP-hard (§3.2); the strategies are
heuristics, and the lower bound of ``bv.explain`` (per signature its longest dependency
chain, summed) is not always reachable, because the chains of different signatures can
get in each other's way. On graphs of a few hundred nodes the optimum can still be had,
with a constraint solver (OR-Tools CP-SAT, the ``batchviz[optimum]`` extra).

How it is found: CP-SAT answers "is there a schedule of at most ``K`` batches?", with
``K`` chosen by bisection between a lower bound and the best strategy's count. Every "yes"
comes with a schedule, a new upper bound; every "no" is a proof that raises the lower
bound; where they meet is the optimum. (One decision per ``K`` proved faster, on the
tutorials' random graphs, than one model that minimizes the count: with ``K`` fixed,
every node's possible batches form a short window.)

The model for one ``K``. Batches are positions ``0 .. K-1``.

* ``x[t, s]``: position ``t`` runs signature ``s``; at most one signature per position
  (a position left empty is dropped from the schedule).
* ``y[v, t]``: node ``v`` runs at position ``t``; exactly one position per node, and
  ``y[v, t]`` implies ``x[t, sig(v)]``: a batch holds one signature.
* ``pos(v) = sum_t t y[v, t]`` and ``pos(a) < pos(v)`` for every argument ``a`` of ``v``.
* The window of ``v``: its ancestors all run before it, and the ancestors of signature
  ``s`` need at least as many batches as their longest ``s``-chain, so ``v`` runs no
  earlier than position ``before(v)``, the sum over signatures of those chains; likewise
  no later than ``K - 1 - after(v)``, counted over its descendants. ``before(v) + 1 +
  after(v)`` is itself a lower bound, sometimes above the per-signature one.

(Redundant constraints - every signature gets at least as many positions as its longest
chain; every position holds a node - and breaking the symmetry of two independent
neighbouring batches were tried, and made the solver neither reliably faster nor slower.) The
strategies' schedules are the upper bound; when the best of them meets the lower bound it
is optimal and the solver is not needed (that is the case of the Figure 1 example and of
the tutorials' Tree-LSTM and parser graphs, which ``lookahead`` schedules optimally).
"""
from __future__ import annotations

import os
import time

from ..errors import BatchvizError
from ..schedule import FlatSchedule, PendingView, resolve_strategy, validate_schedule
from ..schedule.lookahead import batch_lower_bound
from ..trace.record import graph_of
from .optimum_report import Optimum

#: the strategies whose schedules are the starting points (upper bounds)
STARTING_STRATEGIES = ("none", "depth", "agenda", "lookahead")
#: the solver's model grows with nodes x batches; above this many nodes it is not built
MAX_NODES = 1000
EXTRA = "pip install 'batchviz[optimum]'"


class SolverMissing(BatchvizError, ImportError):
    """OR-Tools, which the exact solver needs, is not installed."""


class GraphTooLarge(BatchvizError, ValueError):
    """The graph has more nodes than the exact solver is allowed to take on."""


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
                     workers: int | None = None) -> Optimum:
    """The schedule of the graph of ``target`` (the loss, or a ``bv.Graph``) with the fewest
    batches, proven optimal within ``time_limit`` seconds, else the best found and the
    proven lower bound. Every node of the graph is scheduled, as if nothing had run yet
    (as ``bv.explain`` does). ``print()`` the result; in Jupyter it shows as a table.

    Raises :class:`~batchviz.explain.SolverMissing` without OR-Tools and
    :class:`~batchviz.explain.GraphTooLarge` above ``max_nodes`` nodes, unless a strategy
    already meets the lower bound (then the solver is not needed). ``workers``: CP-SAT's
    threads (default: the CPUs, at most 8)."""
    if not is_seconds(time_limit):
        raise ValueError(f"optimal_schedule: time_limit must be a positive number of seconds, "
                         f"got {time_limit!r}")
    graph, _ = graph_of(target)
    view = PendingView(graph, start=0)
    schedules = {name: resolve_strategy(name).schedule(view) for name in STARTING_STRATEGIES}
    return solve(view, schedules, time_limit, max_nodes=max_nodes, workers=workers)


def solve(view: PendingView, schedules: dict, time_limit: float, max_nodes: int = MAX_NODES,
          workers: int | None = None, chain_bound: int | None = None) -> Optimum:
    """The fewest batches for the nodes of ``view``, starting from ``schedules`` (strategy
    name -> valid schedule, a list of batches or a FlatSchedule: the upper bounds); see the
    module docstring. ``chain_bound``: the per-signature lower bound, when known."""
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
        raise GraphTooLarge(f"the exact solver takes graphs of up to max_nodes={max_nodes} nodes; "
                            f"this one has {len(view.nodes)} (pass a larger max_nodes to try)")
    cp_model = cp_model_module()
    t0 = time.perf_counter()  # (importing OR-Tools, once, is not solving)
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


def _bisect(result: Optimum, view: PendingView, dag: "Dag", cp_model, t0: float,
            workers: int | None) -> None:
    """Narrow ``[result.lower_bound, result.count]`` by bisection on ``K``, in place, until
    the two meet or the time is up. A decision gets half the time left, all of it when it
    is the last open one; when it runs out, its ``K`` stays open and the search goes on
    above it, for a better schedule."""
    search_from = result.lower_bound
    while search_from < result.count:
        left = result.time_limit - (time.perf_counter() - t0)
        if left <= 0:
            return
        k = (search_from + result.count - 1) // 2
        last = result.lower_bound == result.count - 1
        deadline = time.perf_counter() + (left if last else left / 2)
        status, batches = decide(cp_model, dag, k, deadline, workers)
        if status == "feasible":
            result.batches, result.found_by = validate_schedule(view, batches), "CP-SAT"
        elif status == "infeasible":
            result.lower_bound = search_from = k + 1
        else:
            search_from = k + 1


def _as_lists(schedule) -> list:
    if isinstance(schedule, FlatSchedule):
        return schedule.batches()
    return [list(batch) for batch in schedule]


class Dag:
    """The pending nodes of a view as local ids ``0 .. n-1`` in creation order (arguments
    come first): ``sig`` and ``args`` (local ids of the pending arguments) per node, and the
    bounds of its window (module docstring): ``before``, the batches that must run before
    the node, and ``after``, the batches that must run after it."""

    def __init__(self, view: PendingView):
        self.nodes = list(view.nodes)
        local = {node: k for k, node in enumerate(self.nodes)}
        self.sig = [view.signature[node] for node in self.nodes]
        self.args = [[local[a] for a in view.pending_args(node)] for node in self.nodes]
        users = [[] for _ in self.nodes]
        for v, args in enumerate(self.args):
            for a in args:
                users[a].append(v)
        n = len(self.nodes)
        self.before = self._chains(range(n), self.args)
        self.after = self._chains(range(n - 1, -1, -1), users)

    def _chains(self, order, predecessors) -> list:
        """Per node (visited in ``order``, predecessors first): the sum over signatures of
        the longest chain of that signature among its predecessors (each node keeps
        ``{signature: longest chain ending at the node}``, the node included)."""
        total = [0] * len(self.nodes)
        chains = [None] * len(self.nodes)
        for v in order:
            mine: dict = {}
            for p in predecessors[v]:
                for s, length in chains[p].items():
                    if mine.get(s, 0) < length:
                        mine[s] = length
            total[v] = sum(mine.values())
            mine[self.sig[v]] = mine.get(self.sig[v], 0) + 1
            chains[v] = mine
        return total

    @property
    def through_bound(self) -> int:
        """The most batches any one node forces: before it, itself, after it."""
        return max((b + 1 + a for b, a in zip(self.before, self.after)), default=0)

    def window(self, v: int, k: int) -> range:
        """The positions node ``v`` may take in a schedule of ``k`` batches."""
        return range(self.before[v], k - self.after[v])


def decide(cp_model, dag: Dag, k: int, deadline: float, workers: int | None) -> tuple:
    """``("feasible", batches)``, ``("infeasible", None)`` or ``("unknown", None)``: whether
    the nodes of ``dag`` fit in ``k`` batches, decided by CP-SAT before ``deadline`` (a
    ``time.perf_counter()`` time; building the model counts)."""
    windows = [dag.window(v, k) for v in range(len(dag.nodes))]
    if any(not window for window in windows):
        return "infeasible", None
    model, place = _model(cp_model, dag, k, windows)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = max(deadline - time.perf_counter(), 0.001)
    solver.parameters.num_workers = workers or min(8, os.cpu_count() or 1)
    solver.parameters.random_seed = 0
    status = solver.Solve(model)
    if status == cp_model.INFEASIBLE:
        return "infeasible", None
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return "unknown", None
    batches = [[] for _ in range(k)]
    for v, here in enumerate(place):
        t = next(t for t, b in here.items() if solver.BooleanValue(b))
        batches[t].append(dag.nodes[v])
    return "feasible", [batch for batch in batches if batch]


def _model(cp_model, dag: Dag, k: int, windows: list) -> tuple:
    """The model of the module docstring for ``k`` positions, and ``place``: per node,
    ``{position: y[v, position]}`` over its window."""
    model = cp_model.CpModel()
    runs = {(t, s): model.NewBoolVar(f"x{t}_{s}") for t in range(k) for s in set(dag.sig)}
    for t in range(k):
        model.AddAtMostOne(runs[t, s] for s in set(dag.sig))
    place, position = [], []
    for v, window in enumerate(windows):
        here = {t: model.NewBoolVar(f"y{v}_{t}") for t in window}
        model.AddExactlyOne(here.values())
        for t, b in here.items():
            model.AddImplication(b, runs[t, dag.sig[v]])
        pos = model.NewIntVar(window.start, window.stop - 1, f"pos{v}")
        model.Add(pos == sum(t * b for t, b in here.items()))
        place.append(here)
        position.append(pos)
    for v, args in enumerate(dag.args):
        for a in args:
            model.Add(position[a] < position[v])
    return model, place


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
    except (SolverMissing, GraphTooLarge) as e:
        return None, f"not computed: {e}"
