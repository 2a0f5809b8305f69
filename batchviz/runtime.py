"""``bv.Graph``: a lazy graph that runs itself when a value is asked for.

:class:`~batchviz.graph.LazyGraph` records the nodes. This class adds what running them
needs: the strategy, the memory, and lazy evaluation (§3.1). ``expr.value()`` runs the
nodes added since the last run ("further calls will lazily evaluate the delta"); every
run is the paper's pipeline, one package per step::

    view = PendingView(graph)               the nodes to run           batchviz.schedule
    batches = schedule(strategy, view)      which run together, when   batchviz.schedule
    plan(graph, batches, layout, start)     where outputs live, how    batchviz.plan
                                            each argument is read
    execute_forward(graph, plan, ...)       one kernel per batch       batchviz.execute

and ``loss.backward()`` walks the plans of every run in reverse (:func:`execute_backward`).
"""
from __future__ import annotations

import time
import weakref
from bisect import bisect_right
from contextlib import contextmanager

import numpy as np

from . import backend
from .backend import state
from .execute import Arenas, execute_backward, execute_forward
from .errors import BatchvizError
from .execute.stats import PassStats, RunStats, set_last
from .execute.threads import BLAS_THREADS
from .expression import Expression
from .graph import LazyGraph, current_graph, open_graph
from .execute.numerics import reporting
from .plan import Layout, plan
from .schedule import PendingView, record_decisions, resolve_strategy, schedule
from .signature import size_of


#: the nodes whose gradient or value was last asked for, in any graph, as ``(weak
#: reference to the graph, node)``: what ``batchviz explain script.py`` explains
#: (:func:`last_asked`). Weak, so that a finished minibatch's graph is freed as soon as the
#: program drops it, not kept until the next one asks for something
_asked = {"backward": None, "scalar": None, "value": None}


def last_asked():
    """The expression a program most likely meant as its loss: the last one ``backward()``
    ran from, else the last scalar whose value was read, else the last expression whose
    value was read; None when none was asked for since :func:`forget_asked` (or its graph
    is gone)."""
    for kind in ("backward", "scalar", "value"):
        if _asked[kind] is not None:
            graph = _asked[kind][0]()
            if graph is not None:
                return graph.expression(_asked[kind][1])
    return None


def forget_asked() -> None:
    """Forget what :func:`last_asked` would answer (before running another program)."""
    _asked.update(backward=None, scalar=None, value=None)
    _kept.clear()


#: while :func:`keeping_asked` is on: the graphs of ``_asked``, held strongly
_kept: dict = {}
_keeping = False


@contextmanager
def keeping_asked():
    """Inside the block, the graphs that :func:`last_asked` would answer from stay alive
    (until :func:`forget_asked`): ``batchviz explain script.py`` explains a script's loss
    after the script has ended and dropped its graphs."""
    global _keeping
    _keeping = True
    try:
        yield
    finally:
        _keeping = False


def _ask(kind: str, graph, node: int) -> None:
    """Remember that ``node`` of ``graph`` was asked for, as ``kind``."""
    _asked[kind] = (weakref.ref(graph), node)
    if _keeping:
        _kept[kind] = graph


class Graph(LazyGraph):
    """A dynamic computation graph, built lazily and executed in batches.

    Use it as a context manager (``with bv.Graph(strategy="agenda"): ...``) or through
    :func:`new_graph`. ``strategy`` is ``"none"``, ``"depth"``, ``"agenda"``, another
    registered name, or any :class:`~batchviz.Strategy` object.
    ``record_source=True`` remembers the user's source line of every node (for traces,
    explanations and errors; it costs time at construction, so it is off by default, except
    inside ``with bv.recording_sources():``). ``check_numerics=True`` stops at the first
    batch, forward or backward, that makes NaN or infinity, with a
    :class:`~batchviz.NumericsError` naming its op, node and line
    (:func:`batchviz.check_numerics`; it records sources unless ``record_source=False``).
    ``record=True`` keeps the strategy's own record of its decisions at every run
    (``decision_logs``); without it, ``bv.trace`` rebuilds the agenda of every step from
    the batches that ran, which gives the same agenda, and the strategy's words for it.

    What its runs leave: ``plans`` (one :class:`~batchviz.plan.Plan` per forward run),
    ``layout`` (where every computed node lives), ``last_stats`` (the latest run's counts),
    ``decision_logs`` (per run, its :class:`~batchviz.schedule.DecisionLog`, or None
    without ``record``). ``bv.trace``, ``bv.explain`` and the widgets show these.
    """

    expression_type = Expression

    def __init__(self, strategy="agenda", record_source: bool | None = None,
                 check_numerics: bool = False, record: bool = False):
        self.strategy = resolve_strategy(strategy)
        if record_source is None and check_numerics:
            record_source = True  # its errors name the user's line
        super().__init__(record_source)
        self.check_numerics = bool(check_numerics)
        self.record = bool(record)
        self.n_evaluated = 0      # nodes before this one have run
        self.layout = Layout()
        self.arenas = Arenas()
        self.plans: list = []
        self.run_ends: list = []    # per plan: how many nodes had run once it had run
        self.decision_logs: list = []  # per plan: the strategy's decisions (with ``record``)
        self.batch_runs: list = []  # per batch of every plan: what its backward run needs
        self._stopped_arena = None  # the arena of a run that stopped with an error
        self.last_stats = None
        #: compute every node's gradient, constants' too, and keep them for
        #: :meth:`gradient_of` (DyNet's ``backward(full=True)``); set before the forward run
        self.keep_gradients = False
        self._gradients = None

    def forward(self) -> None:
        """Run every node added since the last run, batched by the graph's strategy."""
        self.check_alive()
        if self.n_evaluated == len(self.ops):
            return
        if self._stopped_arena is not None:
            self._forget_runs(self._stopped_arena, len(self.batch_runs))
        h2d, d2h, t0 = state.host_to_device, state.device_to_host, time.perf_counter()
        view = PendingView(self)
        if self.record:
            batches, log = record_decisions(self.strategy, view)
        else:
            batches, log = schedule(self.strategy, view), None
        t1 = time.perf_counter()
        arena, first_batch = len(self.layout.bases), len(self.batch_runs)
        try:
            run = plan(self, batches, self.layout, self.n_evaluated, self.keep_gradients)
            t2 = time.perf_counter()
            with reporting(self, "forward"), BLAS_THREADS.for_pass():
                execute_forward(self, run, self.arenas, state.xp)  # (onto self.batch_runs)
        except BaseException:
            # a run that stopped (a NumericsError, say) ran none of its batches for later
            # runs to read; its plan stays in the layout, where the error's batch number
            # points, until the next run forgets it
            del self.batch_runs[first_batch:]
            self._stopped_arena = arena
            raise
        self.plans.append(run)
        self.decision_logs.append(log)
        self.n_evaluated = len(self.ops)
        self.run_ends.append(self.n_evaluated)
        copies, avoided, elements = run.copy_counts()
        stats = PassStats(nodes=len(view), batches=len(run.batches), copies=copies,
                          copies_avoided=avoided, bytes_copied=elements * state.dtype.itemsize,
                          schedule_seconds=t1 - t0, plan_seconds=t2 - t1,
                          seconds=time.perf_counter() - t0,
                          host_to_device=state.host_to_device - h2d,
                          device_to_host=state.device_to_host - d2h)
        self.last_stats = RunStats(self.strategy.name, forward=stats)
        set_last(self.last_stats)

    def backward(self, node: int) -> None:
        """Accumulate d(node)/d(parameter) into every parameter's ``grad``."""
        _ask("backward", self, node)
        self.forward()
        h2d, d2h, t0 = state.host_to_device, state.device_to_host, time.perf_counter()
        with reporting(self, "backward"), BLAS_THREADS.for_pass():
            batches, scatters, self._gradients = execute_backward(self, node, state.xp,
                                                                  self.keep_gradients)
        stats = PassStats(nodes=len(self.ops), batches=batches, copies=scatters,
                          seconds=time.perf_counter() - t0,
                          host_to_device=state.host_to_device - h2d,
                          device_to_host=state.device_to_host - d2h)
        if self.last_stats is None:
            self.last_stats = RunStats(self.strategy.name)
        self.last_stats.backward = stats
        set_last(self.last_stats)

    def value_of(self, node: int, block: int = 0) -> np.ndarray:
        """The node's value (with ``block``: that block of what it keeps, see
        ``Op.storage_blocks``) as a NumPy array of its own; runs what is pending first."""
        self.check_alive()
        _ask("value", self, node)
        if self.shapes[node] in ((), (1,)):
            _ask("scalar", self, node)
        self.forward()
        arena, offset = self.layout.where(node, block)
        if arena is None:
            values = self.param_of_node[node].array
        else:
            values = self.arenas[arena][offset:offset + size_of(self.shapes[node])]
        return np.array(backend.to_numpy(values), copy=True).reshape(self.shapes[node])

    def gradient_of(self, node: int) -> np.ndarray:
        """The gradient of the last backward pass's loss with respect to ``node``, as a NumPy
        array of its own. Kept only with ``keep_gradients`` (set before the forward run);
        a parameter's is its ``grad``."""
        if node in self.param_of_node:
            return self.param_of_node[node].grad
        if self._gradients is None:
            raise BatchvizError("no gradients kept: set graph.keep_gradients = True before "
                                "the forward run, then call backward()")
        address = self.layout.address_of(node) - self.layout.bases[0]
        flat = self._gradients[address:address + size_of(self.shapes[node])]
        return np.array(backend.to_numpy(flat), copy=True).reshape(self.shapes[node])

    def has_gradient(self, node: int) -> bool:
        """Whether :meth:`gradient_of` has a gradient for ``node``: a parameter's (its
        ``grad``), or the one the last backward pass kept (``keep_gradients``) for a node
        that had run by then."""
        if node in self.param_of_node:
            return True
        layout = self.layout
        if self._gradients is None or node >= len(layout.address) or layout.address[node] < 0:
            return False
        end = layout.address[node] - layout.bases[0] + size_of(self.shapes[node])
        return end <= len(self._gradients)

    def recompute(self, inputs: dict | None = None) -> None:
        """Forget every computed value, so that the next run computes the whole graph again
        (DyNet's ``forward(recalculate=True)``); ``inputs``: ``{node: data}``, new data for
        input nodes, of their shapes (DyNet's ``set()`` of an input)."""
        self.check_alive()
        for node, data in (inputs or {}).items():
            self.attrs[node] = data
        self.arenas.release()
        self.layout, self.plans, self.run_ends, self.batch_runs = Layout(), [], [], []
        self.decision_logs, self._stopped_arena = [], None
        self.n_evaluated, self._gradients = 0, None

    def _cut(self, nodes: int, signatures: int) -> None:
        """:meth:`LazyGraph._cut`, and the runs: those that computed nodes before ``nodes``
        only are kept with their values; a later run computed removed nodes too, so it is
        forgotten whole (its memory goes back), and the kept nodes it had computed run
        again with the next forward run (DyNet, too, computes them again)."""
        super()._cut(nodes, signatures)
        for kind, asked in _asked.items():
            if asked is not None and asked[0]() is self and asked[1] >= nodes:
                _asked[kind] = None
        if self.n_evaluated <= nodes:
            return  # no removed node had run
        kept = bisect_right(self.run_ends, nodes)  # the runs that ended at the mark or before
        first_batch = sum(len(run.batches) for run in self.plans[:kept])
        self.n_evaluated = self.run_ends[kept - 1] if kept else 0
        self._forget_runs(self.plans[kept].arena, first_batch)
        del self.plans[kept:], self.run_ends[kept:], self.decision_logs[kept:]
        self._gradients = None  # (laid out like the forgotten arenas too)

    def _forget_runs(self, arena: int, first_batch: int) -> None:
        """Forget the runs from arena ``arena`` and batch ``first_batch`` on: their layout,
        their memory and what their batches ran (the nodes from ``n_evaluated`` on run again
        with the next forward run): runs cut back, or one that stopped with an error (see
        :meth:`forward`)."""
        if arena < len(self.layout.bases):  # (its arena was laid out)
            self.layout.truncate(arena, first_batch, self.n_evaluated)
        self.arenas.release(arena)
        del self.batch_runs[first_batch:]
        self._stopped_arena = None

    def finish(self, because: str = "by graph.finish()") -> None:
        """End the graph: its expressions can no longer be used, and its memory is freed."""
        super().finish(because)
        self.arenas.release()
        self.batch_runs = []

    def __repr__(self) -> str:
        state_ = "finished" if self.finished else f"{self.n_evaluated}/{len(self.ops)} evaluated"
        return (f"<bv.Graph #{self.number} strategy={self.strategy.name!r} "
                f"nodes={len(self.ops)} {state_}>")


def new_graph(strategy="agenda", record_source: bool | None = None,
              check_numerics: bool = False, record: bool = False) -> Graph:
    """Finish the open graph and open a new one (DyNet's ``renew_cg``); the arguments are
    :class:`Graph`'s."""
    previous = open_graph(None)
    if previous is not None and not previous.finished:
        previous.finish("when bv.new_graph() started a new one")
    graph = Graph(strategy, record_source=record_source, check_numerics=check_numerics,
                  record=record)
    open_graph(graph)
    return graph


__all__ = ["Graph", "new_graph", "current_graph", "last_asked", "forget_asked"]
