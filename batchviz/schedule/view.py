"""What a strategy may look at: the pending nodes of a graph, read-only.

A :class:`PendingView` covers the nodes that have not run yet (parameters and nodes run
by an earlier ``value()`` are *done*): their signatures, depths, arguments and users, as
plain lists for a node-by-node loop, and as NumPy arrays (:meth:`PendingView.arrays`, see
:mod:`batchviz.schedule.arrays`) for strategies and analyses that work on whole batches.
"""
from __future__ import annotations

import numpy as np

from .arrays import PendingArrays, users_by_argument


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
        self._user_lists = None
        #: a DecisionLog while a trace records the strategy's decisions, else None
        self.decisions = None

    @property
    def nodes(self) -> list:
        """The pending node ids, in creation order (computed once)."""
        if self._nodes is None:
            if self._arrays is not None:
                self._nodes = self._arrays.nodes.tolist()
            elif self.is_small():  # a few nodes: a membership loop costs less than NumPy
                params = self._params
                self._nodes = [i for i in range(self.start, self.end) if i not in params]
            else:
                self._nodes = (np.flatnonzero(self._pending_mask()) + self.start).tolist()
        return self._nodes

    def _pending_mask(self) -> np.ndarray:
        """Per node id from ``start`` to ``end``: True unless it is a parameter. (Sized by
        the nodes added since the last run, not by the whole graph: a parser runs forward
        after every step of a graph that grows to tens of thousands of nodes.)"""
        start = self.start
        pending = np.ones(self.end - start, dtype=bool)
        inside = [p - start for p in self._params if p >= start]
        if inside:
            pending[inside] = False
        return pending

    def __len__(self) -> int:
        return len(self.nodes)

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
            nodes = self.nodes
            users: dict[int, list] = {i: [] for i in nodes}
            start, params, args = self.start, self._params, self.args
            for i in nodes:
                for a in args[i]:
                    if a >= start and a not in params:
                        users[a].append(i)
            self._users = users
        return self._users

    def arrays(self) -> "PendingArrays":
        """The view as NumPy arrays (computed once), for strategies and analyses that work on
        whole batches at a time instead of node by node; see :class:`PendingArrays`."""
        if self._arrays is None:
            self._arrays = PendingArrays(self)
        return self._arrays

    def user_arrays(self) -> tuple:
        """``(user_start, users)`` as arrays of local ids (node id - ``start``), computed once:
        the pending users of local node ``k`` are ``users[user_start[k]:user_start[k + 1]]``,
        in creation order (a user that reads ``k`` twice is listed twice)."""
        if self._user_lists is None:
            a = self.arrays()
            self._user_lists = users_by_argument(a.edge_user, a.edge_arg, self.end - self.start)
        return self._user_lists

    def unresolved(self) -> np.ndarray:
        """Per local id (node id - ``start``): how many pending arguments the node waits for
        (an argument used twice counts twice). A fresh array: callers may count it down."""
        return np.bincount(self.arrays().edge_user, minlength=self.end - self.start)

    def dependencies(self) -> tuple[list, list, list]:
        """``(unresolved, user_start, users)`` as plain lists (see :meth:`unresolved` and
        :meth:`user_arrays`): ``unresolved[i - start]`` is how many pending arguments node
        ``i`` waits for; the users of node ``a`` are (node ids, not local ids)
        ``users[user_start[a - start]:user_start[a - start + 1]]``, in creation order. Lists,
        because a scheduling loop reads them one item at a time, which is faster on lists
        than on arrays."""
        if self.is_small():
            return self._small_dependencies()
        user_start, users = self.user_arrays()
        return self.unresolved().tolist(), user_start.tolist(), (users + self.start).tolist()

    #: pending sets up to this size are handled with Python loops (NumPy's per-call cost
    #: is more than a loop over a few dozen nodes; a parser runs thousands of such steps)
    SMALL = 128

    def is_small(self) -> bool:
        return self.end - self.start <= self.SMALL

    def _small_dependencies(self) -> tuple[list, list, list]:
        """:meth:`dependencies` with plain Python loops, for small pending sets."""
        start, params, args = self.start, self._params, self.args
        n = self.end - start
        unresolved = [0] * n
        users_of: list[list] = [[] for _ in range(n)]
        for i in self.nodes:
            for a in args[i]:
                if a >= start and a not in params:
                    unresolved[i - start] += 1
                    users_of[a - start].append(i)
        user_start = [0] * (n + 1)
        users: list = []
        for k, lst in enumerate(users_of):
            users += lst
            user_start[k + 1] = len(users)
        return unresolved, user_start, users

    def is_cheap(self, sig: int) -> bool:
        """The paper's tie-break class: element-wise ops are cheap, matmuls are heavy."""
        return self.graph.sigtab[sig].cheap

    def signature_name(self, sig: int) -> str:
        return self.graph.signature_name(sig)

    def op_name(self, node: int) -> str:
        return self.graph.ops[node].name
