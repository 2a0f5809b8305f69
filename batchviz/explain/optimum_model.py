"""One decision of the exact optimum: "do the nodes fit in ``K`` batches?", asked of CP-SAT
within a deadline (the search around it is in :mod:`batchviz.explain.optimum`).

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

The deadline covers building the model too. On a graph of thousands of nodes the model
has hundreds of thousands of variables and building it in Python takes seconds, longer
than a short time limit; and CP-SAT spends a while loading a large model before it looks
at its own clock. So the building checks the clock as it goes and gives up at the
deadline, and the solver is given what is left less an allowance for that loading
(proportional to the time the model took to build: both grow with the model).

Deterministic: one worker and a fixed seed by default, so that a decision the solver
finishes gets the same answer, and the same schedule, on every run. (Several workers race
each other; whichever finishes first wins, and the schedule changes from run to run.) A
decision cut short by the deadline stops wherever the clock says, so the best schedule of
a search that was not proven may still differ between runs; the result says it is not
proven.
"""
from __future__ import annotations

import time

#: CP-SAT's loading of a model, before its own time limit applies, as a share of the time
#: Python took to build the model: measured from a fifth to three quarters on graphs of
#: 3,500 nodes (more on a busy machine); the solver's time limit leaves this much of the
#: deadline free, so that a decision ends by its deadline
SOLVER_START_SHARE = 1.0
#: how many nodes are added to the model between two looks at the clock
CLOCK_EVERY = 64
#: the time Python takes to build the model, per placement variable ``y[v, t]``, before a
#: model of this graph has been built and timed (measured: about 6 µs on a 2-core
#: machine); only a first guess, replaced by what the first model really took
GUESSED_SECONDS_PER_VARIABLE = 6e-6


class Dag:
    """The pending nodes of a view as local ids ``0 .. n-1`` in creation order (arguments
    come first): ``sig`` and ``args`` (local ids of the pending arguments) per node, and the
    bounds of its window (module docstring): ``before``, the batches that must run before
    the node, and ``after``, the batches that must run after it."""

    def __init__(self, view):
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

    def variables(self, k: int) -> int:
        """The placement variables of the model for ``k`` batches: its size, what the time
        to build and load it grows with."""
        return sum(max(0, k - b - a) for b, a in zip(self.before, self.after))


class BuildClock:
    """How long a model of this graph takes to build and load, from the last one built
    (a first guess before any): so that the search gives a decision the time it needs,
    and does not start one that cannot finish in the time left."""

    def __init__(self):
        self.seconds_per_variable = GUESSED_SECONDS_PER_VARIABLE

    def needs(self, dag: Dag, k: int) -> float:
        """Seconds to build the model for ``k`` and let CP-SAT load it."""
        return dag.variables(k) * self.seconds_per_variable * (1 + SOLVER_START_SHARE)

    def built(self, variables: int, seconds: float) -> None:
        if variables:
            self.seconds_per_variable = seconds / variables


class OutOfTime(Exception):
    """The deadline came while the model was being built (internal: ``decide`` answers
    ``"unbuilt"``)."""


def decide(cp_model, dag: Dag, k: int, deadline: float, workers: int = 1,
           clock: BuildClock | None = None) -> tuple:
    """``(status, batches)``: whether the nodes of ``dag`` fit in ``k`` batches, decided by
    CP-SAT before ``deadline`` (a ``time.perf_counter()`` time; building the model counts).
    ``status``: ``"feasible"`` (with the batches), ``"infeasible"``, ``"unknown"`` (the
    solver ran out of time) or ``"unbuilt"`` (the time ran out before the solver could
    start: building the model, or loading it, would not fit). ``clock`` learns how long
    the model took to build."""
    windows = [dag.window(v, k) for v in range(len(dag.nodes))]
    if any(not window for window in windows):
        return "infeasible", None
    started = time.perf_counter()
    try:
        model, place = _model(cp_model, dag, k, windows, deadline)
    except OutOfTime:
        return "unbuilt", None
    now = time.perf_counter()
    if clock is not None:
        clock.built(sum(map(len, windows)), now - started)
    seconds = deadline - now - SOLVER_START_SHARE * (now - started)
    if seconds <= 0:
        return "unbuilt", None
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = seconds
    solver.parameters.num_workers = workers
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


def _model(cp_model, dag: Dag, k: int, windows: list, deadline: float) -> tuple:
    """The model of the module docstring for ``k`` positions, and ``place``: per node,
    ``{position: y[v, position]}`` over its window. Raises :class:`OutOfTime` when the
    clock passes ``deadline`` before the model is complete."""
    model = cp_model.CpModel()
    signatures = sorted(set(dag.sig))  # sorted: the same model, variable for variable, each run
    runs = {(t, s): model.NewBoolVar(f"x{t}_{s}") for t in range(k) for s in signatures}
    for t in range(k):
        model.AddAtMostOne(runs[t, s] for s in signatures)
    place, position = [], []
    for v, window in enumerate(windows):
        if v % CLOCK_EVERY == 0 and time.perf_counter() > deadline:
            raise OutOfTime
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
