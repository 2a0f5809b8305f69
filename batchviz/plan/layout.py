"""Where batch outputs live: one arena per run, one contiguous segment per batch (§3.3).

Every forward run of a graph gets one flat *arena* for the nodes it computes, and each
batch one segment of it, batch after batch in schedule order, its nodes back to back in
batch order. A later batch whose arguments are those nodes, in that order, then reads them
as a view instead of copying them (the paper's contiguous-memory point).

A node's *address* is its first element in a virtual address space that all arenas of a
graph share, so one integer tells both the arena and the offset. A batch of nodes that
keep several blocks (``Op.storage_blocks``: an LSTM step keeps ``h``, ``c`` and its gates)
is laid out block by block: all its values back to back, then all its second blocks, and
so on, so that its values are one block for every reader and every block is a contiguous
``(n,) + shape`` array for the kernel.
"""
from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from operator import itemgetter

import numpy as np

from ..signature import size_of


class Layout:
    """The memory map of one graph, over all its runs.

    ``address[node]``: where the node's value begins (-1: a parameter, whose value lives in
    the model, or a node not computed yet); ``batch_of[node]``: the index of the batch that
    computed it (-1 likewise); ``bases``: each arena's first address, ascending;
    ``batches``: every planned batch (:class:`~batchviz.plan.BatchPlan`), by index."""

    def __init__(self):
        self.address: list[int] = []
        self.batch_of: list[int] = []
        self.bases: list[int] = []
        self.next_address = 0
        self.batches: list = []

    def grow(self, n_nodes: int) -> None:
        missing = n_nodes - len(self.address)
        if missing > 0:
            self.address.extend([-1] * missing)
            self.batch_of.extend([-1] * missing)

    def new_arena(self, size: int) -> int:
        """A new arena of ``size`` elements after the last one; returns its number."""
        self.bases.append(self.next_address)
        self.next_address += size
        return len(self.bases) - 1

    def arena_of(self, address: int) -> int:
        """The arena holding ``address``: the last one whose base is at or below it (a binary
        search: a parser's graph has an arena per forward run)."""
        return bisect_right(self.bases, address) - 1

    def address_of(self, node: int, block: int = 0) -> int:
        """Where block ``block`` of what ``node`` keeps begins (block 0: its value); -1 for a
        parameter. The blocks of one node are its batch's values apart."""
        address = self.address[node]
        if block and address >= 0:
            address += block * self.batches[self.batch_of[node]].block_stride
        return address

    def addresses_of(self, nodes, block: int = 0) -> list:
        """:meth:`address_of` of many nodes: one C loop over the address list for values
        (block 0), the common case; a batch of a thousand nodes reads several of these."""
        addresses = list(map(self.address.__getitem__, nodes))
        if not block:
            return addresses
        owners = list(map(self.batch_of.__getitem__, nodes))
        if owners.count(owners[0]) == len(owners):  # usually: all of one batch
            shift = block * self.batches[owners[0]].block_stride
            return [a + shift if a >= 0 else a for a in addresses]
        return [a + block * self.batches[b].block_stride if a >= 0 else a
                for a, b in zip(addresses, owners)]

    def where(self, node: int, block: int = 0) -> tuple:
        """``(arena, offset)`` of block ``block`` of ``node``; ``(None, -1)`` for a parameter."""
        address = self.address_of(node, block)
        if address < 0:
            return None, -1
        arena = self.arena_of(address)
        return arena, address - self.bases[arena]


def place_batches(graph, batches: list, layout: Layout, start: int) -> tuple:
    """Lay ``batches`` (of the nodes from ``start`` on) out one after another in a new arena,
    each batch's outputs one segment: set every node's address and batch. Returns
    ``(arena, sizes)``: the arena's number, and per batch its nodes' sizes (one int when
    they are all the same size, else one per node).

    This touches every node of the run, so nothing here loops over nodes in Python: a
    batch's shapes are read with one ``itemgetter`` call and its addresses are a ``range``,
    joined into flat lists, and the per-node lists are written at once."""
    shapes, sigtab, sigs = graph.shapes, graph.sigtab, graph.sigs
    layout.grow(len(shapes))
    next_free = first_free = layout.next_address
    sizes, order, places = [], [], []      # per batch; per node, node after node
    for batch in batches:
        n = len(batch)
        order += batch
        blocks = sigtab[sigs[batch[0]]].blocks
        if blocks != 1:  # nodes that keep more than their value (Op.storage_blocks)
            size = size_of(shapes[batch[0]])
            places += range(next_free, next_free + n * size, size)
            next_free += n * size * blocks
        elif n == 1:
            size = size_of(shapes[batch[0]])
            places.append(next_free)
            next_free += size
        else:
            batch_shapes = itemgetter(*batch)(shapes)
            size = size_of(batch_shapes[0])  # (one shape in a batch of a non-element-wise op)
            if (sigtab[sigs[batch[0]]].op.elementwise and batch_shapes.count(batch_shapes[0]) != n
                    and any(size_of(s) != size for s in batch_shapes)):
                size = list(map(size_of, batch_shapes))  # element-wise, of several sizes
                places += accumulate(size[:-1], initial=next_free)
                next_free += sum(size)
            else:
                places += range(next_free, next_free + n * size, size)
                next_free += n * size
        sizes.append(size)
    arena = layout.new_arena(next_free - first_free)
    _set_per_node(layout, start, order, places, [len(b) for b in batches])
    return arena, sizes


def _set_per_node(layout: Layout, start: int, order: list, places: list, counts: list) -> None:
    """Record the address (``places``, in ``order``) and the batch of every node of this run:
    the nodes of the next new batch are the next ``counts[k]`` of ``order``. Every other
    node from ``start`` on is a parameter, whose entries stay -1, so the new tails of the
    per-node lists are written whole."""
    first_batch = len(layout.batches)
    if len(order) < 64:
        batch_of = [b for b, n in enumerate(counts, first_batch) for _ in range(n)]
        for i, address, b in zip(order, places, batch_of):
            layout.address[i] = address
            layout.batch_of[i] = b
        return
    local = np.array(order, dtype=np.int64)
    local -= start
    tail = np.full(len(layout.address) - start, -1, dtype=np.int64)
    tail[local] = places
    layout.address[start:] = tail.tolist()
    tail.fill(-1)
    tail[local] = np.repeat(np.arange(first_batch, first_batch + len(counts)), counts)
    layout.batch_of[start:] = tail.tolist()
