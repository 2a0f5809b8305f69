"""Strategies: how pending nodes are grouped into batches (§3.2 "Determining execution order").

A strategy is a pure function of a read-only :class:`PendingView` of the nodes that have not
run yet; it returns the *schedule*: a list of batches in execution order, each a list of node
ids that share one signature. The executor runs it; traces and widgets look at it. Nothing in
a strategy executes or allocates arrays, so anyone can write one::

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

import numpy as np

from ..errors import ScheduleError

Schedule = list  # list[list[int]]: batches of node ids, in execution order


class PendingView:
    """What a strategy may look at: the nodes to schedule and their signatures, depths and
    dependencies. Parameters and nodes run by an earlier ``value()`` are already *done*.

    Attributes (lists indexed by node id, covering the whole graph):
    ``signature``, ``depth``, ``args``; and ``nodes``: the pending node ids in creation order.
    """

    def __init__(self, graph, start: int | None = None):
        self.graph = graph
        self.start = graph.n_evaluated if start is None else start
        self.end = len(graph.ops)
        self.signature = graph.sigs
        self.depth = graph.depths
        self.args = graph.args
        params = graph.param_of_node
        self.nodes = [i for i in range(self.start, self.end) if i not in params]
        self._params = params
        self._users = None

    def __len__(self) -> int:
        return len(self.nodes)

    def is_pending(self, node: int) -> bool:
        """True if ``node`` is part of this schedule (not a parameter, not already run)."""
        return node >= self.start and node not in self._params

    def pending_args(self, node: int) -> tuple:
        """The arguments of ``node`` that are themselves pending: its unresolved dependencies."""
        start, params = self.start, self._params
        return tuple(a for a in self.args[node] if a >= start and a not in params)

    def users(self) -> dict:
        """``{node: [pending nodes that use it]}``, computed once."""
        if self._users is None:
            users: dict[int, list] = {}
            start, params, args = self.start, self._params, self.args
            for i in self.nodes:
                for a in args[i]:
                    if a >= start and a not in params:
                        lst = users.get(a)
                        if lst is None:
                            users[a] = [i]
                        else:
                            lst.append(i)
            self._users = users
        return self._users

    def dependencies(self) -> tuple[list, list, list]:
        """``(unresolved, user_start, users)``, computed with NumPy in one pass over the edges.

        ``unresolved[i - start]`` is how many pending arguments node ``i`` waits for (an
        argument used twice counts twice); the users of node ``a`` are
        ``users[user_start[a - start]:user_start[a - start + 1]]``, in creation order. Plain
        lists are returned because a scheduling loop reads them one item at a time, which is
        faster on lists than on arrays."""
        start, end = self.start, self.end
        n = end - start
        args = self.args[start:end]
        lens = np.fromiter(map(len, args), dtype=np.int64, count=n)
        flat = np.fromiter(chain.from_iterable(args), dtype=np.int64, count=int(lens.sum()))
        user = np.repeat(np.arange(start, end, dtype=np.int64), lens)
        keep = flat >= start
        if self._params:
            is_param = np.zeros(end, dtype=bool)
            is_param[np.fromiter(self._params, dtype=np.int64)] = True
            keep &= ~is_param[flat]
        flat, user = flat[keep] - start, user[keep]
        unresolved = np.bincount(user - start, minlength=n)
        order = np.argsort(flat, kind="stable")  # grouped by argument, users in creation order
        user_start = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(flat, minlength=n), out=user_start[1:])
        return unresolved.tolist(), user_start.tolist(), user[order].tolist()

    def is_cheap(self, sig: int) -> bool:
        """The paper's tie-break class: element-wise ops are cheap, matmuls are heavy."""
        return self.graph.sigtab[sig].cheap

    def signature_name(self, sig: int) -> str:
        return self.graph.signature_name(sig)

    def op_name(self, node: int) -> str:
        return self.graph.ops[node].name


class Strategy:
    """Base class of scheduling strategies. Subclasses set ``name`` and define ``schedule``."""

    name = "?"
    #: built-in strategies are proven by the test suite; others are validated on every run
    trusted = False

    def schedule(self, view: PendingView) -> Schedule:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<strategy {self.name}>"


def validate_schedule(view: PendingView, batches) -> list:
    """Check ``batches`` against ``view``; return it as a list of lists or raise ScheduleError
    naming the first problem (a missing or repeated node, a mixed batch, an argument
    scheduled after its user)."""
    batches = [list(b) for b in batches]
    sig = view.signature
    position: dict[int, int] = {}
    for k, batch in enumerate(batches):
        if not batch:
            raise ScheduleError(f"batch {k} is empty")
        s = sig[batch[0]]
        for node in batch:
            if not view.is_pending(node):
                raise ScheduleError(f"batch {k} contains node {node}, which is not pending")
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
