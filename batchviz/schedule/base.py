"""Strategies: how pending nodes are grouped into batches (§3.2 "Determining execution order").

A strategy looks at a read-only :class:`~batchviz.schedule.view.PendingView` of the nodes
that have not run yet and returns the *schedule*: a list of batches in execution order,
each a list of node ids that share one signature, every node after its arguments. The
runtime plans and runs it; traces and widgets show it. Nothing in a strategy executes or
allocates arrays, so anyone can write one::

    class Reverse(bv.Strategy):
        name = "my-strategy"
        def schedule(self, view):
            ...
            return batches

    with bv.Graph(strategy=Reverse()): ...

Schedules from strategies that are not built in are checked (every node exactly once,
one signature per batch, arguments before users) before they run, so a buggy strategy
fails loudly instead of computing wrong numbers.
"""
from __future__ import annotations

from itertools import chain
from typing import NamedTuple

import numpy as np

from ..errors import ScheduleError
from .view import PendingView

Schedule = list  # list[list[int]]: batches of node ids, in execution order


class Strategy:
    """A scheduling strategy: subclass it, set ``name``, and write :meth:`schedule`.

    A strategy that is a rule over the paper's agenda can subclass
    :class:`~batchviz.schedule.agenda.AgendaStrategy` instead and write only the rule; its
    decisions then show in traces and widgets with its own key and words. Any other
    strategy's batches are shown on the agenda too, with what :meth:`describe` gives.
    Register a name for it with :func:`~batchviz.register_strategy`, or pass the object:
    ``bv.Graph(strategy=MyStrategy())``."""

    name = "?"
    #: built-in strategies are proven by the test suite; others are validated on every run
    trusted = False
    #: the backward pass sums each shared W's gradient over all its batches in one GEMM
    #: (a batching of the weight gradients; the "none" strategy switches it off)
    batches_weight_gradients = True

    def schedule(self, view: PendingView) -> Schedule:
        """The batches to run, in execution order: a list of lists of node ids.

        ``view`` is a read-only :class:`~batchviz.schedule.view.PendingView` of the nodes
        that have not run yet: ``view.nodes`` (their ids, in creation order),
        ``view.signature[i]``, ``view.depth[i]``, ``view.args[i]``,
        ``view.pending_args(i)`` (the arguments still to run) and ``view.users()``.

        Every pending node must be in exactly one batch, the nodes of a batch must share
        one signature, and every node must come after the batches of its pending
        arguments; the runtime checks this for strategies that are not built in, and a
        :class:`~batchviz.ScheduleError` names the first problem. The order of the nodes
        inside a batch is the order of its outputs in memory: a later batch that reads
        them in that same order reads a view instead of copying them (§3.3)."""
        raise NotImplementedError(f"{type(self).__name__} must define schedule(self, view)")

    def schedule_flat(self, view: PendingView) -> "FlatSchedule":
        """The same schedule as :meth:`schedule`, as a :class:`FlatSchedule` (by default,
        converted from it; a strategy may compute it directly). Call
        :func:`flat_schedule`, which uses this method only where it is the flat form of the
        ``schedule`` in force."""
        return FlatSchedule.of(self.schedule(view))

    def describe(self, view: PendingView):
        """A :class:`~batchviz.schedule.decisions.Rule` whose key and words describe this
        strategy's choices in a trace (only its ``key_names``, ``key``, ``reason`` and
        ``waits`` are used), or None: the trace then shows the agenda at every step and
        says "chosen by <name>"."""
        return None

    def __repr__(self) -> str:
        return f"<strategy {self.name}>"


def flat_schedule(strategy, view: PendingView) -> FlatSchedule:
    """``strategy``'s schedule of ``view`` as a :class:`FlatSchedule`.

    A subclass that overrides ``schedule`` but inherits another class's ``schedule_flat``
    would get that class's schedule from it, so ``schedule_flat`` is used only when the class
    that defines ``schedule`` also defines ``schedule_flat``; otherwise the lists from
    ``schedule`` are converted."""
    for cls in type(strategy).__mro__:
        if "schedule" in cls.__dict__:
            if "schedule_flat" in cls.__dict__:
                return strategy.schedule_flat(view)
            break
    return FlatSchedule.of(strategy.schedule(view))


class FlatSchedule(NamedTuple):
    """A schedule as two arrays: ``order``, every node id in execution order, batch after
    batch; ``sizes``, the number of nodes of each batch. The same thing as a list of lists,
    in the form that whole-schedule analyses (``bv.explain``) read with NumPy, without a
    Python object per node."""
    order: np.ndarray
    sizes: np.ndarray

    @classmethod
    def of(cls, batches) -> "FlatSchedule":
        """The flat form of a list of batches."""
        sizes = np.fromiter(map(len, batches), dtype=np.int64, count=len(batches))
        order = np.fromiter(chain.from_iterable(batches), dtype=np.int64, count=int(sizes.sum()))
        return cls(order, sizes)

    def __len__(self) -> int:
        return len(self.sizes)

    def starts(self) -> np.ndarray:
        """Where each batch begins in ``order``."""
        return np.cumsum(self.sizes) - self.sizes

    def batches(self) -> Schedule:
        """The list-of-lists form (node ids as Python ints)."""
        order = self.order.tolist()
        ends = np.cumsum(self.sizes).tolist()
        return [order[i - k:i] for i, k in zip(ends, self.sizes.tolist())]


def schedule(strategy, view: PendingView) -> list:
    """``strategy``'s batches for ``view``: what the runtime runs and the traces show (the
    widgets' traces included: both come here, so a bad strategy fails the same way in a run
    and in a widget). A strategy that is not built in is checked
    (:func:`~batchviz.validate_schedule`) before anything runs, so that a mistake in it is
    an error that names the strategy and the problem, never wrong values."""
    try:
        batches = strategy.schedule(view)
    except ScheduleError as error:  # e.g. its rule's key (decisions.checked_key)
        raise _naming(strategy, error)
    if getattr(strategy, "trusted", False):
        return batches
    if batches is None or isinstance(batches, (str, bytes)) or not hasattr(batches, "__iter__"):
        raise ScheduleError(
            f"{strategy_words(strategy)}: schedule() must return a list of batches (lists of "
            f"node ids), got {type(batches).__name__}" + (" - is a `return` missing?"
                                                         if batches is None else ""))
    return validate_schedule(view, batches, strategy)


def strategy_words(strategy) -> str:
    """How an error names ``strategy``: ``strategy 'name'`` (its class where it has no
    name of its own)."""
    name = getattr(strategy, "name", "?")
    return f"strategy {name!r}" if name != "?" else f"strategy {type(strategy).__name__}"


def _naming(strategy, error: ScheduleError) -> ScheduleError:
    """``error`` with the strategy named first (once), its traceback kept."""
    words = strategy_words(strategy)
    if not str(error).startswith(words):
        error.args = (f"{words}: {error}",) + error.args[1:]
    return error


def _node_list(batch, k: int) -> list:
    if isinstance(batch, (str, bytes)) or not hasattr(batch, "__iter__"):
        raise ScheduleError(f"batch {k} is {batch!r}, not a list of node ids: schedule() "
                            "returns a list of batches, each a list of node ids")
    return list(batch)


def validate_schedule(view: PendingView, batches, strategy=None) -> list:
    """Check ``batches`` against ``view``; return it as a list of lists or raise ScheduleError
    naming the first problem (something that is not a node id, a node that is not pending,
    a missing or repeated node, a mixed batch, an argument scheduled after its user), and
    ``strategy`` when given."""
    try:
        return _validated(view, batches)
    except ScheduleError as error:
        raise (error if strategy is None else _naming(strategy, error))


def _is_node_id(node) -> bool:
    """Node ids are ints (NumPy's included); a bool is not one, though Python says it is."""
    return isinstance(node, (int, np.integer)) and not isinstance(node, (bool, np.bool_))


def _validated(view: PendingView, batches) -> list:
    batches = [_node_list(b, k) for k, b in enumerate(batches)]
    sig = view.signature
    position: dict[int, int] = {}
    for k, batch in enumerate(batches):
        if not batch:
            raise ScheduleError(f"batch {k} is empty")
        s = None
        for node in batch:
            if not _is_node_id(node):
                raise ScheduleError(
                    f"batch {k} contains {node!r} ({type(node).__name__}), not a node id: "
                    "batches hold the int ids of view.nodes")
            if not view.is_pending(node):
                raise ScheduleError(
                    f"batch {k} contains node {node}, which is not pending: the nodes to "
                    f"schedule are view.nodes (ids {view.start} to {view.end - 1}, "
                    "parameters left out)")
            if s is None:
                s = sig[node]
            if node in position:
                raise ScheduleError(f"node {node} is scheduled twice (batches {position[node]} and {k})")
            if sig[node] != s:
                raise ScheduleError(
                    f"batch {k} mixes signatures: node {batch[0]} is {view.signature_name(s)} but "
                    f"node {node} is {view.signature_name(sig[node])}")
            position[node] = k
    missing = [n for n in view.nodes if n not in position]
    if missing:
        raise ScheduleError(f"{len(missing)} pending nodes are never scheduled, e.g. node {missing[0]}")
    for node, k in position.items():
        for a in view.pending_args(node):
            if position[a] >= k:
                raise ScheduleError(
                    f"node {node} (batch {k}) uses node {a}, which runs in batch {position[a]}: "
                    "arguments must run in an earlier batch")
    return batches
