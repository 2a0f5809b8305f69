"""The layout pass a batch at a time with NumPy: the vectorized twin of
:func:`batchviz.schedule.layout.lay_out`.

Same walk - from the last batch to the first, place the available batch read last, sort its
nodes by their first read, record where its arguments are read - but each batch's nodes
and argument edges are handled with a dozen array operations instead of one by one. A read
is one integer, ``slot * P * M + place`` (``M``: more than any local node id, ``P``: more
than any argument position), which orders reads exactly as the readable pass's tuples
``(slot, position, index)`` do (``(slot, index, position)`` for batches that read node
after node). Node ids are local (``node - view.start``) throughout. The batches that may
follow their arguments are found from the same edges, grouped by (batch, position) with
one sort, and the pass forward that sorts them is a few array operations per such batch.

The argument edges are grouped by the batch that reads them once, before the walk (one
radix sort), so that a batch's edges are one slice: its work is then proportional to its
own size, and the walk costs about as many NumPy calls per batch as the agenda's loop.
"""
from __future__ import annotations

import heapq

import numpy as np

from ..signature import size_of
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
    walk.follow_arguments(view, order)
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
        self.may_follow = self._followers(view, n_batches)  # batch -> position
        self.follows: dict = {}  # slot -> the position its batch follows (follow_arguments)
        self.slot_of = [-1] * n_batches

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

    def _followers(self, view, n_batches: int) -> dict:
        """``{batch: position}``, as :func:`batchviz.schedule.layout.followers`: the
        (batch, position) groups of argument edges that come from several batches and
        weigh more than what later batches read of the batch, the heaviest per batch."""
        arg_size = node_sizes(view)[self.arg]
        read_weight = np.bincount(self.producer, weights=arg_size, minlength=n_batches)
        reader_batch = np.repeat(np.arange(n_batches), np.diff(self.edge_start))
        keep = ~np.asarray(self.node_major, dtype=bool)[reader_batch]
        key = reader_batch[keep] * self.P + self.position[keep]
        if not len(key):
            return {}
        by_key = np.argsort(key, kind="stable")
        key, producer, size = key[by_key], self.producer[keep][by_key], arg_size[keep][by_key]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        several = np.minimum.reduceat(producer, starts) != np.maximum.reduceat(producer, starts)
        weight = np.add.reduceat(size, starts)
        batch, position = np.divmod(key[starts], self.P)
        ok = several & (weight > read_weight[batch])
        if not ok.any():
            return {}
        batch, position, weight = batch[ok], position[ok], weight[ok]
        heaviest = np.lexsort((position, -weight, batch))  # per batch: heaviest, then first
        first = np.r_[True, batch[heaviest][1:] != batch[heaviest][:-1]]
        chosen = heaviest[first]
        return dict(zip(batch[chosen].tolist(), position[chosen].tolist()))

    def follow_arguments(self, view, order: np.ndarray) -> None:
        """After the walk (``order``: the placed batches, joined), from the first slot to the
        last: a batch that may follow its arguments does so when they take every place of
        one range of ``order`` once each; its nodes are then sorted by those places
        (``order`` is updated in place)."""
        if not self.may_follow:
            return
        a = view.arrays()
        rank = np.full(len(self.batch_of), -1, dtype=np.int64)
        rank[order] = np.arange(len(order))
        at = np.cumsum([0] + [len(nodes) for nodes in self.placed])
        candidates = sorted((self.slot_of[k], p) for k, p in self.may_follow.items())
        for slot, position in candidates:
            nodes = self.placed[slot]
            arg = a.arg_flat[a.arg_ptr[nodes] + position] - view.start
            places = np.full(len(nodes), -1, dtype=np.int64)
            inside = arg >= 0
            places[inside] = rank[arg[inside]]
            by_place = np.argsort(places)
            lowest = places[by_place[0]]
            if lowest < 0 or not (places[by_place] == np.arange(lowest, lowest + len(nodes))).all():
                continue
            self.follows[slot] = position
            nodes = nodes[by_place]
            self.placed[slot] = nodes
            order[at[slot]:at[slot + 1]] = nodes
            rank[nodes] = np.arange(at[slot], at[slot + 1])

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
        self.slot_of[k] = slot
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


def node_sizes(view) -> np.ndarray:
    """Per local node of ``view``, its number of elements (one ``size_of`` per distinct
    shape)."""
    shapes = view.graph.shapes[view.start:view.end]
    size = {shape: size_of(shape) for shape in set(shapes)}
    return np.fromiter(map(size.__getitem__, shapes), dtype=np.int64, count=len(shapes))


def _previous_of_signature(signature: np.ndarray) -> np.ndarray:
    """Per batch, the index of the batch of the same signature before it, or -1."""
    previous = np.full(len(signature), -1, dtype=np.int64)
    by_signature = np.argsort(signature, kind="stable")
    same = signature[by_signature[1:]] == signature[by_signature[:-1]]
    previous[by_signature[1:][same]] = by_signature[:-1][same]
    return previous
