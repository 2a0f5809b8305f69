"""Where node values live: arenas of contiguous memory, and the gathers that read them.

Every run allocates one flat *arena* for the nodes it computes, and gives each batch one
contiguous segment of it, in schedule order (the paper's §3.3). A node's *address* is its
offset in a virtual address space that all arenas of a graph share, so one integer tells
both which arena and where.

When a batch's argument nodes are consecutive in one arena and in batch order, the kernel
reads them as a *view*: no copy. Otherwise one gather kernel ``arena[index]`` copies them
into a contiguous block (the paper's App. B "sparse-to-dense" copy); the backward pass
scatters gradients back through the same index ("dense-to-sparse").
"""
from __future__ import annotations

import numpy as np

from ..backend import state, to_device_index

_SIZES: dict[tuple, int] = {}


def size_of(shape: tuple) -> int:
    size = _SIZES.get(shape)
    if size is None:
        size = 1
        for d in shape:
            size *= d
        _SIZES[shape] = size
    return size


# How a batch obtained one argument position (kept for backward and for traces):
SHARED, VIEW, COPY, STACK = "shared", "view", "copy", "stack"


def gather_kind(locs: list, sizes, arena_of) -> str:
    """How a batch reads one argument position whose nodes live at addresses ``locs`` (in
    batch order), ``sizes`` long (one int for all, or one per node); ``arena_of(address)``
    names the arena of an address.

    VIEW when they lie back to back in one arena (no copy, §3.3); STACK when a parameter
    (address -1) or several arenas are involved; otherwise COPY (one gather kernel). The
    executor and the traces (``batchviz.trace``) both decide with this one function, so the
    copies a trace reports are the copies the executor makes."""
    lo = min(locs)
    if lo < 0 or arena_of(lo) != arena_of(max(locs)):
        return STACK
    first = locs[0]
    if isinstance(sizes, int):
        return VIEW if locs == list(range(first, first + len(locs) * sizes, sizes)) else COPY
    expected = first
    for loc, size in zip(locs, sizes):
        if loc != expected:
            return COPY
        expected += size
    return VIEW


class Memory:
    """Node addresses, arenas, and which batch computed each node."""

    def __init__(self, graph):
        self.graph = graph
        self.address: list[int] = []     # per node; -1 for parameters (they live in the model)
        self.batch_of: list[int] = []    # per node: index of its BatchRecord; -1 for parameters
        self.arenas: list[tuple[int, object]] = []  # (base address, flat array)
        self.next_address = 0
        self.records: list = []          # BatchRecords, in execution order

    def grow(self, n_nodes: int) -> None:
        missing = n_nodes - len(self.address)
        if missing > 0:
            self.address.extend([-1] * missing)
            self.batch_of.extend([-1] * missing)

    def new_arena(self, size: int):
        base = self.next_address
        arena = state.xp.empty(size, dtype=state.dtype)
        self.arenas.append((base, arena))
        self.next_address = base + size
        return len(self.arenas) - 1, base, arena

    def arena_of(self, address: int) -> int:
        arenas = self.arenas
        if len(arenas) == 1 or address >= arenas[-1][0]:
            return len(arenas) - 1
        lo, hi = 0, len(arenas) - 1
        while lo < hi:  # last arena whose base <= address
            mid = (lo + hi + 1) // 2
            if arenas[mid][0] <= address:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def flat_value(self, graph, node: int):
        """The node's value as a flat view (parameters: the parameter's own array)."""
        address = self.address[node]
        if address < 0:
            return graph.param_of_node[node]._array.reshape(-1)
        base, arena = self.arenas[self.arena_of(address)]
        offset = address - base
        return arena[offset:offset + size_of(graph.shapes[node])]

    def value(self, node: int):
        """The node's value, in its shape (a view; callers copy before handing it out)."""
        return self.flat_value(self.graph, node).reshape(self.graph.shapes[node])

    def gather(self, graph, nodes: list, sizes, stats):
        """The flat concatenation of ``nodes``' values, and how it was obtained.

        ``sizes`` is one int when all nodes have the same size, else a list. Returns
        ``(array, (kind, ...))`` where kind is VIEW (no copy), COPY (one gather kernel) or
        STACK (the slow path: parameters or several arenas involved)."""
        address = self.address
        locs = [address[a] for a in nodes]
        kind = gather_kind(locs, sizes, self.arena_of)
        if kind == STACK:
            pieces = [self.flat_value(graph, a) for a in nodes]
            block = state.xp.concatenate(pieces)
            stats.copies += 1
            stats.bytes_copied += block.nbytes
            return block, (STACK, nodes)
        k = self.arena_of(locs[0])
        base, arena = self.arenas[k]
        first = locs[0]
        n = len(nodes)
        if isinstance(sizes, int):
            if kind == VIEW:
                stats.copies_avoided += 1
                return arena[first - base:first - base + n * sizes], (VIEW, k, first - base, n * sizes)
            index = ((np.asarray(locs, dtype=np.int64) - base)[:, None]
                     + np.arange(sizes, dtype=np.int64)).reshape(-1)
        else:
            ends = np.cumsum(sizes)
            starts = np.asarray(locs, dtype=np.int64)
            if kind == VIEW:
                stats.copies_avoided += 1
                return arena[first - base:first - base + int(ends[-1])], (VIEW, k, first - base, int(ends[-1]))
            total = int(ends[-1])
            index = (np.repeat(starts - base - (ends - sizes), sizes)
                     + np.arange(total, dtype=np.int64))
        unique = len(set(nodes)) == n
        index = to_device_index(index)
        block = arena[index]
        stats.copies += 1
        stats.bytes_copied += block.nbytes
        return block, (COPY, k, index, unique)
