"""What a strategy may look at: the pending nodes of a graph, read-only.

A :class:`PendingView` covers the nodes that have not run yet (parameters and nodes run
by an earlier ``value()`` are *done*): their signatures, depths, arguments and users, as
plain lists and int64 arrays for a node-by-node loop, and as NumPy arrays
(:meth:`PendingView.arrays`, see :mod:`batchviz.schedule.arrays`) for analyses that work on
whole levels of the graph at once.
"""
from __future__ import annotations

from array import array

import numpy as np

from .arrays import PendingArrays


class PendingView:
    """What a strategy may look at: the nodes to schedule and their signatures, depths and
    dependencies. Parameters and nodes run by an earlier ``value()`` are already *done*.

    Attributes (lists indexed by node id, covering the whole graph):
    ``signature``, ``depth``, ``args``; and ``nodes``: the pending node ids in creation order.
    """

    def __init__(self, graph, start: int | None = None, end: int | None = None):
        self.graph = graph
        self.start = graph.n_evaluated if start is None else start
        self.end = len(graph.ops) if end is None else end  # (a run that ended at ``end``)
        self.signature = graph.sigs
        self.depth = graph.depths
        self.args = graph.args
        self._params = graph.param_of_node
        self._users = None
        self._nodes = None
        self._arrays = None
        self._pending = None
        self._dependencies = None
        #: a DecisionLog while a trace records the strategy's decisions, else None
        self.decisions = None

    @property
    def nodes(self) -> list:
        """The pending node ids, in creation order (computed once)."""
        if self._nodes is None:
            self._nodes = pending_nodes(self.pending_mask(), self.start)
        return self._nodes

    def pending_mask(self) -> bytearray:
        """Per local id (node id - ``start``), up to ``end``: 1 for a pending node, 0 for a
        parameter (computed once; read it, do not change it). Sized by the nodes added
        since the last run, not by the whole graph: a parser runs forward after every
        step of a graph that grows to tens of thousands of nodes."""
        if self._pending is None:
            start, end = self.start, self.end
            pending = bytearray(b"\x01") * (end - start)
            for p in self._params:
                if start <= p < end:
                    pending[p - start] = 0
            self._pending = pending
        return self._pending

    def __len__(self) -> int:
        """How many nodes are pending: counted in :meth:`pending_mask`, without making the
        list of their ids (every run reports the count; few strategies read the list)."""
        return self.pending_mask().count(1)

    def is_pending(self, node: int) -> bool:
        """True if ``node`` is part of this schedule (not a parameter, not already run)."""
        return self.start <= node < self.end and node not in self._params

    def pending_args(self, node: int) -> tuple:
        """The arguments of ``node`` that are themselves pending: its unresolved dependencies."""
        start, params = self.start, self._params
        return tuple(a for a in self.args[node] if a >= start and a not in params)

    def users(self) -> dict:
        """``{node: [pending nodes that use it]}`` for every pending node, computed once. A
        node that no pending node uses (the loss, a value asked for) maps to an empty list,
        so that ``users[node]`` works for every node of ``view.nodes``, as a scheduler
        written from this description expects. A user that reads a node twice is listed
        twice."""
        if self._users is None:
            _, user_start, users = self.dependencies()
            start = self.start
            self._users = {i: users[user_start[i - start]:user_start[i - start + 1]].tolist()
                           for i in self.nodes}
        return self._users

    def arrays(self) -> "PendingArrays":
        """The view as NumPy arrays (computed once), for strategies and analyses that work on
        whole batches at a time instead of node by node; see :class:`PendingArrays`."""
        if self._arrays is None:
            self._arrays = PendingArrays(self)
        return self._arrays

    def user_arrays(self) -> tuple:
        """``(user_start, users)`` of :meth:`dependencies` as NumPy arrays of local ids (node
        id - ``start``), for analyses that work on whole levels of the graph at once."""
        _, user_start, users = self.dependencies()
        return (np.frombuffer(user_start, dtype=np.int64),
                np.frombuffer(users, dtype=np.int64) - self.start)

    def unresolved(self) -> np.ndarray:
        """Per local id (node id - ``start``): how many pending arguments the node waits for
        (an argument used twice counts twice). A fresh array: callers may count it down."""
        return np.array(self.dependencies()[0], dtype=np.int64)

    def dependencies(self) -> tuple:
        """``(unresolved, user_start, users)``, int64 arrays (``array.array``):
        ``unresolved[i - start]`` is how many pending arguments node ``i`` waits for (an
        argument used twice counts twice); the users of node ``a`` are (node ids, not local
        ids) ``users[user_start[a - start]:user_start[a - start + 1]]``, in creation order
        (a user that reads ``a`` twice is listed twice). ``unresolved`` is a fresh copy
        each time: the agenda counts it down."""
        if self._dependencies is None:
            args, pending, start = self.args, self.pending_mask(), self.start
            n = self.end - start
            unresolved, user_start = array("q", bytes(8 * n)), array("q", bytes(8 * (n + 1)))
            count_dependencies(args, pending, start, unresolved, user_start)
            users = array("q", bytes(8 * user_start[n]))
            place_users(args, pending, start, user_start, users)
            self._dependencies = (unresolved, user_start, users)
        unresolved, user_start, users = self._dependencies
        return array("q", unresolved), user_start, users

    def is_cheap(self, sig: int) -> bool:
        """The paper's tie-break class: element-wise ops are cheap, matmuls are heavy."""
        return self.graph.sigtab[sig].cheap

    def signature_name(self, sig: int) -> str:
        return self.graph.signature_name(sig)

    def op_name(self, node: int) -> str:
        return self.graph.ops[node].name


def pending_nodes(pending: bytearray, start: int) -> list:
    """The node ids of the pending local ids of ``pending`` (a view's :meth:`pending_mask`)."""
    return [start + k for k in range(len(pending)) if pending[k]]


def count_dependencies(args: list, pending: bytearray, start: int, unresolved: array,
                       user_end: array) -> None:
    """Count, per pending node from ``start`` on (by local id), its pending arguments into
    ``unresolved`` and its users into ``user_end``, summed: the users of local id ``k``
    would end at ``user_end[k]`` in one list of all users in argument order.
    (``pending``: per local id, whether it is scheduled; ``args``: the graph's.)"""
    n = len(pending)
    for k in range(n):
        if pending[k]:
            arguments = args[start + k]
            for a in arguments:
                if a >= start and pending[a - start]:
                    unresolved[k] += 1
                    user_end[a - start] += 1
    total = 0
    for k in range(n + 1):
        total += user_end[k]
        user_end[k] = total


def place_users(args: list, pending: bytearray, start: int, user_end: array,
                users: array) -> None:
    """Write the users (node ids) into ``users``, from the last user to the first, each just
    before the end of its argument's range, which then ends one place earlier: ``user_end``
    (from :func:`count_dependencies`) becomes where each node's users start, and each
    range lists its users in creation order."""
    for k in range(len(pending) - 1, -1, -1):
        if pending[k]:
            arguments = args[start + k]
            for a in arguments:
                if a >= start and pending[a - start]:
                    user_end[a - start] -= 1
                    users[user_end[a - start]] = start + k
