"""The layout pass a batch at a time with NumPy: the vectorized twin of
:func:`batchviz.schedule.layout.lay_out`.

Same walk - from the last batch to the first, place the available batch read last, sort its
nodes by their first read, record where its arguments are read - but each batch's nodes
and argument edges are handled with a dozen array operations instead of one by one. A read
is one integer, ``slot * P * M + place`` (``M``: more than any local node id, ``P``: more
than any argument position), which orders reads exactly as the readable pass's tuples
``(slot, position, index)`` do (``(slot, index, position)`` for batches that read node
after node). Node ids are local (``node - view.start``) throughout.

The argument edges are grouped by the batch that reads them once, before the walk (one
radix sort), so that a batch's edges are one slice: its work is then proportional to its
own size, and the walk costs about as many NumPy calls per batch as the agenda's loop.
"""
from __future__ import annotations

import heapq

import numpy as np

from .arrays import stable_argsort
from .base import FlatSchedule


def lay_out_flat(view, flat: FlatSchedule) -> FlatSchedule:
    """``flat`` (a valid schedule of ``view``) laid out for its readers; the same schedule as
    :func:`~batchviz.schedule.layout.lay_out` gives for ``flat.batches()``."""
    n_batches = len(flat.sizes)
    if n_batches == 0:
        return flat
    walk = _Walk(view, flat)
    for slot in range(n_batches - 1, -1, -1):
        walk.place(slot)
    order = np.concatenate(walk.placed)
    order += view.start
    sizes = np.fromiter(map(len, walk.placed), dtype=np.int64, count=n_batches)
    return FlatSchedule(order, sizes)


class _Walk:
    """The state of the backward walk (see :func:`lay_out_flat`)."""

    def __init__(self, view, flat: FlatSchedule):
        a = view.arrays()
        n_batches = len(flat.sizes)
        n = view.end - view.start
        self.order = flat.order - view.start             # node ids, batch after batch
        self.first = flat.starts()
        self.sizes = flat.sizes
        self.batch_of = np.empty(n, dtype=np.int64)
        self.batch_of[self.order] = np.repeat(np.arange(n_batches), flat.sizes)
        self.M = max(n, 1)
        self.P = int(a.arity.max()) + 1 if len(a.arity) else 1
        self.PM = self.P * self.M
        if (n_batches + 1) * self.PM >= 1 << 62:
            raise OverflowError("too many batches, positions and nodes for the read codes")
        # reads not placed yet: a node never read comes after every read, in creation order
        self.first_read = n_batches * self.PM + np.arange(n, dtype=np.int64)
        self._group_edges(view, a, n_batches)
        signature = a.sig[self.order[self.first]]
        infos = view.graph.sigtab.infos
        self.node_major = [bool(infos[s].op.one_gather) for s in signature.tolist()]
        # a batch is placed once all reads of its nodes are, and the next batch of its
        # signature (batches of one signature keep their order)
        self.unplaced = np.bincount(self.producer, minlength=n_batches)
        previous = _previous_of_signature(signature)
        self.unplaced[previous[previous >= 0]] += 1
        self.previous = previous.tolist()
        self.available: list = []
        for k in np.flatnonzero(self.unplaced == 0).tolist():
            self.push(k)
        self.placed: list = [None] * n_batches

    def _group_edges(self, view, a, n_batches: int) -> None:
        """The pending argument edges grouped by the batch of the reading node: batch
        ``k``'s are ``[edge_start[k], edge_start[k + 1])``, each with the reader's place in
        the batch (as given), the argument, the argument's batch and ``position * M``."""
        pending = np.zeros(view.end, dtype=bool)
        pending[a.start:] = a.pending
        keep = np.flatnonzero(pending[a.arg_flat])  # the argument entries that are pending
        user = a.edge_user
        position = keep - a.arg_ptr[user]
        place = np.empty(len(self.batch_of), dtype=np.int64)
        place[self.order] = np.arange(len(self.order)) - np.repeat(self.first, self.sizes)
        reader_batch = self.batch_of[user]
        by_batch = stable_argsort(reader_batch, n_batches)
        self.edge_start = np.zeros(n_batches + 1, dtype=np.int64)
        np.cumsum(np.bincount(reader_batch, minlength=n_batches), out=self.edge_start[1:])
        self.edge_start = self.edge_start.tolist()
        self.reader = place[user[by_batch]]
        self.arg = a.edge_arg[by_batch]
        self.producer = self.batch_of[self.arg]
        self.position = position[by_batch]
        self.position_M = self.position * self.M

    def nodes_of(self, k: int) -> np.ndarray:
        return self.order[self.first[k]:self.first[k] + self.sizes[k]]

    def push(self, k: int) -> None:
        heapq.heappush(self.available, (-int(self.first_read[self.nodes_of(k)].min()), k))

    def place(self, slot: int) -> None:
        """Place the available batch read last at ``slot``; record its reads."""
        k = heapq.heappop(self.available)[1]
        nodes = self.nodes_of(k)
        if len(nodes) > 1:
            by_read = np.argsort(self.first_read[nodes])
            nodes = nodes[by_read]
        self.placed[slot] = nodes
        lo, hi = self.edge_start[k], self.edge_start[k + 1]
        if hi > lo:
            reader = self.reader[lo:hi]
            if len(nodes) > 1:  # the readers' places after the sort
                index = np.empty(len(nodes), dtype=np.int64)
                index[by_read] = np.arange(len(nodes))
                reader = index[reader]
            if self.node_major[k]:
                reads = reader * self.P + self.position[lo:hi]
            else:
                reads = reader + self.position_M[lo:hi]
            reads += slot * self.PM
            np.minimum.at(self.first_read, self.arg[lo:hi], reads)
            producers = self.producer[lo:hi]
            np.subtract.at(self.unplaced, producers, 1)
            done = producers[self.unplaced[producers] == 0]
            if len(done):
                for p in (set(done.tolist()) if len(done) > 1 else done.tolist()):
                    self.push(p)
        before = self.previous[k]
        if before >= 0:
            self.unplaced[before] -= 1
            if self.unplaced[before] == 0:
                self.push(before)


def _previous_of_signature(signature: np.ndarray) -> np.ndarray:
    """Per batch, the index of the batch of the same signature before it, or -1."""
    previous = np.full(len(signature), -1, dtype=np.int64)
    by_signature = np.argsort(signature, kind="stable")
    same = signature[by_signature[1:]] == signature[by_signature[:-1]]
    previous[by_signature[1:][same]] = by_signature[:-1][same]
    return previous
