"""The agenda (§3.2), a batch at a time with NumPy: the vectorized twin of
:func:`batchviz.schedule.agenda.run_agenda`, and depth batching as one sort.

Same steps as the readable loop - take the best signature on the agenda, run all its agenda
nodes, count down their users, put the users that reach zero on the agenda - but each step
works on a whole batch with array operations instead of on single nodes in Python. On a
100k-node graph with large batches that is several times faster; it returns exactly the
same batches, nodes in the same order (the test suite compares the twins on random graphs).
Node ids are local (``node - view.start``) throughout.
"""
from __future__ import annotations

import heapq

import numpy as np

from .arrays import stable_argsort, users_by_argument
from ..twins import compiled_twin
from .base import FlatSchedule


def depth_batches(view) -> FlatSchedule:
    """Depth batching's schedule (:class:`~batchviz.schedule.simple.DepthBatching`): batches
    in order of (depth, signature), nodes in creation order inside a batch, as one stable
    sort of the pending nodes by ``depth * number of signatures + signature``."""
    a = view.arrays()
    local = a.nodes - a.start
    if len(local) == 0:
        return FlatSchedule(local, np.zeros(0, dtype=np.int64))
    n_sigs = int(a.sig.max()) + 1
    key = a.depth[local] * n_sigs + a.sig[local]
    by_key = stable_argsort(key, (int(a.depth.max()) + 1) * n_sigs)
    key = key[by_key]
    cuts = np.flatnonzero(key[1:] != key[:-1]) + 1
    sizes = np.diff(np.concatenate(([0], cuts, [len(key)])))
    return FlatSchedule(a.nodes[by_key], sizes)


def agenda_batches(view, rank: np.ndarray, choice) -> FlatSchedule:
    """The agenda's schedule, a batch at a time. ``rank``: per signature id, its place in
    the rule's order (-1: no pending node); ``choice``: picks the next rank from the agenda
    (``BestPriority``, the paper's rule, or a rule's vectorized form with the same
    ``pick(agenda)`` and ``ran(rank, ready)``)."""
    a = view.arrays()
    if len(a.nodes) == 0:
        return FlatSchedule(a.nodes, np.zeros(0, dtype=np.int64))
    rank = rank[a.sig]  # per node: its signature's rank
    edge_user, edge_arg = _without_repeats(a.edge_user, a.edge_arg)
    unresolved = np.bincount(edge_user, minlength=len(a.sig))
    pending = a.nodes - a.start
    agenda = _Agenda(rank)
    agenda.add(pending[unresolved[pending] == 0])
    release = _Release(a, edge_user, edge_arg, unresolved, rank)
    batches = []
    while agenda:
        r = choice.pick(agenda)
        batch = agenda.pop(r)
        batches.append(batch)
        ready = release(batch, r)
        choice.ran(r, ready)
        if len(ready):
            agenda.add(ready)
    sizes = np.fromiter(map(len, batches), dtype=np.int64, count=len(batches))
    order = np.concatenate(batches)
    order += a.start
    return FlatSchedule(order, sizes)


@compiled_twin
def best_priority_batches(view, rank: np.ndarray) -> FlatSchedule:
    """:func:`agenda_batches` with the paper's choice, ``BestPriority`` (its compiled
    twin runs the node-by-node loop in C: no NumPy call per batch)."""
    return agenda_batches(view, rank, BestPriority())


class BestPriority:
    """The paper's choice: the signature of best priority (lowest rank) on the agenda."""

    def pick(self, agenda: "_Agenda") -> int:
        return agenda.heap[0]

    def ran(self, r: int, ready: np.ndarray) -> None:
        """Told after each batch: its rank, and the nodes it made ready."""


class _Agenda:
    """The agenda of :func:`agenda_batches`: per signature rank, the ready
    nodes as a list of arrays in the order they became ready, and a heap of the ranks
    present. (Ranks are distinct per signature, so the heap holds plain ints.)"""

    def __init__(self, rank: np.ndarray):
        self.rank = rank            # per node: its signature's rank
        self.ready: dict[int, list] = {}
        self.heap: list = []

    def __bool__(self) -> bool:
        return bool(self.heap)

    def add(self, nodes: np.ndarray) -> None:
        """Put ``nodes`` on the agenda, keeping their order within each signature."""
        ranks = self.rank[nodes]
        lowest = ranks.min()
        highest = ranks.max()
        if lowest == highest:       # usually: one signature (two reductions, no sort)
            self._add(int(lowest), nodes)
            return
        if highest - lowest < 4:    # a few neighbouring ranks: one mask each, no sort
            for r in range(int(lowest), int(highest) + 1):
                of_rank = nodes[ranks == r]
                if len(of_rank):
                    self._add(r, of_rank)
            return
        by_rank = ranks.argsort(kind="stable")
        ranks = ranks[by_rank]
        nodes = nodes[by_rank]
        cuts = (np.flatnonzero(ranks[1:] != ranks[:-1]) + 1).tolist()
        for lo, hi in zip([0] + cuts, cuts + [len(nodes)]):
            self._add(int(ranks[lo]), nodes[lo:hi])

    def _add(self, r: int, nodes: np.ndarray) -> None:
        chunks = self.ready.get(r)
        if chunks is None:
            self.ready[r] = [nodes]
            heapq.heappush(self.heap, r)
        else:
            chunks.append(nodes)

    def pop(self, r: int) -> np.ndarray:
        """Take off all agenda nodes of the signature of rank ``r``: the next batch."""
        if r == self.heap[0]:
            heapq.heappop(self.heap)
        else:  # (a strategy that does not always run the best priority)
            self.heap.remove(r)
            heapq.heapify(self.heap)
        chunks = self.ready.pop(r)
        return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


def _without_repeats(edge_user, edge_arg) -> tuple:
    """The edges (user, argument: local ids, by user) without an argument that a user reads
    again right after itself - an LSTM step reads the step before it as ``h`` and as the
    cell. Counting it once changes no schedule: the user is ready when that argument is.
    With such repeats gone, a batch's users are usually listed once each, which lets
    :class:`_Release` count them down with plain indexing."""
    if len(edge_arg) < 2:
        return edge_user, edge_arg
    again = np.zeros(len(edge_arg), dtype=bool)
    np.equal(edge_arg[1:], edge_arg[:-1], out=again[1:])
    again[1:] &= edge_user[1:] == edge_user[:-1]
    if not again.any():
        return edge_user, edge_arg
    keep = ~again
    return edge_user[keep], edge_arg[keep]


class _Release:
    """Counting down the users of a batch, for :func:`agenda_batches`.

    Two facts per signature (by rank), computed once, let most batches skip work:

    * ``fanout[r]``: how many pending users each node of the signature has, when all have
      the same number (-1 otherwise): the users of a batch are then a fixed-width block
      per node, with no variable-length ranges to join. (With -1, each batch is checked
      on its own: a sequence's last step has fewer users than its other steps, but the
      nodes of one batch usually agree - in all 158 such batches of the synthetic
      BiLSTM's minibatch);
    * ``repeats[r]``: whether some node has two arguments of the signature: only then can
      a user be listed twice in one batch's users.
    """

    def __init__(self, a, edge_user: np.ndarray, edge_arg: np.ndarray, unresolved: np.ndarray,
                 rank: np.ndarray):
        user_start, self.users = users_by_argument(edge_user, edge_arg, len(unresolved))
        self.first_user = user_start[:-1]
        self.n_users = np.diff(user_start)
        self.unresolved = unresolved
        # per node, scratch for "where in this step's list it was last seen"; a node reaches
        # zero in one step only, so the array never needs resetting
        self.last_seen = np.full(len(unresolved), -1, dtype=np.int64)
        n_ranks = int(rank.max()) + 1
        pending = a.nodes - a.start
        self.fanout = _same_or_minus_one(rank[pending], self.n_users[pending], n_ranks)
        # a user with two arguments of one signature: one (user, rank) pair twice
        pairs = edge_user * n_ranks + rank[edge_arg]
        pairs.sort(kind="stable")  # sorted by user already: timsort finds the runs
        repeats = np.zeros(n_ranks, dtype=bool)
        repeats[pairs[1:][pairs[1:] == pairs[:-1]] % n_ranks] = True
        self.repeats = repeats.tolist()

    def __call__(self, batch: np.ndarray, r: int) -> np.ndarray:
        """The users that a batch of rank ``r`` makes ready, in the order the node-by-node
        loop puts them on the agenda: by the position of their last argument in the batch."""
        users = self._users_of(batch, self.fanout[r])
        if len(users) == 0:
            return users
        if self.repeats[r]:  # a user may be listed twice: count every listing
            np.subtract.at(self.unresolved, users, 1)
        else:                # users listed once: a plain indexed update is faster
            self.unresolved[users] -= 1
        ready = users[self.unresolved[users] == 0]
        if len(ready) <= 1 or not self.repeats[r]:
            return ready
        # a user with several arguments in the batch is listed once per argument; the loop
        # puts it on the agenda at the last one, where its count reaches zero
        where = _arange(len(ready))
        np.maximum.at(self.last_seen, ready, where)
        return ready[self.last_seen[ready] == where]

    def _users_of(self, batch: np.ndarray, fanout: int) -> np.ndarray:
        """The users of every batch node, batch node after batch node."""
        if fanout == 1:
            return self.users[self.first_user[batch]]
        if fanout > 1:
            return self.users[(self.first_user[batch][:, None] + _arange(fanout)).reshape(-1)]
        if fanout == 0:
            return batch[:0]
        counts = self.n_users[batch]
        fewest = counts.min()
        if fewest == counts.max():  # the signature's fan-outs differ, but not in this batch
            return self._users_of(batch, int(fewest))
        # variable numbers of users: join the nodes' ranges of the users array
        ends = np.add.accumulate(counts)
        total = int(ends[-1])
        entries = np.repeat(self.first_user[batch] - ends + counts, counts)
        entries += _arange(total)
        return self.users[entries]


def _same_or_minus_one(keys: np.ndarray, values: np.ndarray, n_keys: int) -> list:
    """Per key: the value that all its entries share, or -1 when they differ (or none).
    (``values`` are counts, never negative.)

    An indexed assignment with a repeated index keeps one of the values given for it, so
    ``some`` gets one value of every key; the keys whose entries do not all equal it are
    then set to -1. Plain indexing, faster than ``minimum.at`` and ``maximum.at``."""
    some = np.full(n_keys, -1, dtype=np.int64)
    some[keys] = values
    some[keys[values != some[keys]]] = -1
    return some.tolist()


_ARANGE = np.arange(1 << 16)
_ARANGE.flags.writeable = False


def _arange(n: int) -> np.ndarray:
    """``np.arange(n)``, a read-only slice of a shared array when short (saves an allocation
    per batch)."""
    return _ARANGE[:n] if n <= len(_ARANGE) else np.arange(n)
