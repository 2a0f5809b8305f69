"""Where node values live: arenas of contiguous memory, and the gathers that read them.

Every run allocates one flat *arena* for the nodes it computes, and gives each batch one
contiguous segment of it, in schedule order (the paper's §3.3). A node's *address* is its
offset in a virtual address space that all arenas of a graph share, so one integer tells
both which arena and where.

When a batch's argument nodes are consecutive in one arena and in batch order, the kernel
reads them as a *view*: no copy. When they are evenly spaced instead (every 40th word
vector of a lookup batch laid out sentence by sentence, or the cells at the front of the
previous step's nodes, ``lstm_step``), a kernel that takes a batch axis reads them as a
*strided* view: no copy either, the batch axis simply steps further (and any kernel reads
evenly spaced scalars, such as the losses that a per-sentence ``esum`` adds up, that way). Otherwise one gather
kernel ``arena[index]`` copies them into a contiguous block (the paper's App. B
"sparse-to-dense" copy); the backward pass scatters gradients back through the same index
("dense-to-sparse").
"""
from __future__ import annotations

from bisect import bisect_right

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


class ArenaPool:
    """Flat arrays kept from finished graphs and backward passes, for the next ones.

    Every minibatch builds a new graph whose arenas (values, then gradients) are tens of
    megabytes. A fresh allocation of that size comes from the operating system as untouched
    pages, and the first write to each page faults: on a 68 MB arena that costs more than
    the write itself. Like DyNet's memory pools, which are reset rather than freed between
    graphs, the pool hands the same memory out again. Only a graph's owner may read its
    arenas, and only until the graph is finished: values handed to users are copies.
    (The backward pass also stacks each weight's gradient terms here, see
    ``executor._add_weight_gradient``: a value and a gradient arena and two stacks at a
    time, hence room for eight.)"""

    def __init__(self, keep: int = 8):
        self.keep = keep
        self.spare: dict[tuple, list] = {}

    #: smaller arrays come from the allocator's own free lists: no pages to fault in
    MIN_SIZE = 1 << 16

    def take(self, size: int):
        """A flat array of ``size`` elements (contents undefined): a kept array of at least
        ``size`` and at most twice that, else a new one."""
        key = (state.xp.__name__, state.dtype)
        spare = self.spare.get(key) if size >= self.MIN_SIZE else None
        if spare:
            fits = [k for k, a in enumerate(spare) if size <= a.size <= 2 * size]
            if fits:
                best = min(fits, key=lambda k: spare[k].size)
                return spare.pop(best)[:size]
        return state.xp.empty(size, dtype=state.dtype)

    def give(self, array) -> None:
        """Return an array from :meth:`take` (its whole buffer) for later use."""
        whole = array.base if array.base is not None else array
        if whole.ndim != 1 or whole.size < self.MIN_SIZE:
            return
        key = (type(whole).__module__.split(".")[0], whole.dtype)
        spare = self.spare.setdefault(key, [])
        if any(a is whole for a in spare):
            return
        spare.append(whole)
        spare.sort(key=lambda a: -a.size)
        del spare[self.keep:]  # keep the largest


POOL = ArenaPool()


#: nodes at least this long are gathered (and scattered back) as whole rows on the CPU
ROWS_MIN_WIDTH = 16


def rows_view(flat, width: int):
    """``flat`` seen as the overlapping rows ``flat[i:i + width]``, one for every offset
    ``i`` (no copy). Indexing it with the start addresses of ``n`` nodes copies ``n`` whole
    rows: NumPy then moves each node as one block instead of following one index per
    element, several times faster for vectors of hundreds of elements. The nodes of one
    gather never overlap, so writing through the same rows (the backward scatter) is safe.
    (NumPy only: on the GPU one index per element is what the gather kernel wants.) Built
    with the ``ndarray`` constructor over ``flat``'s memory, which costs a tenth of
    ``as_strided``'s 5 µs: a parser minibatch makes thousands of these views."""
    stride = flat.strides[0]
    return np.ndarray((flat.size - width + 1, width), flat.dtype, flat, 0, (stride, stride))


def element_index(starts: np.ndarray, size: int) -> np.ndarray:
    """The index of every element of nodes ``size`` long that begin at ``starts``, node
    after node: what a gather kernel reads when it follows one index per element."""
    return (starts[:, None] + np.arange(size, dtype=np.int64)).reshape(-1)


def device_element_index(starts: np.ndarray, size: int):
    """:func:`element_index` on the current backend's device. On a GPU only the ``n``
    starts travel (one small upload) and the ``n * size`` indices are made there with one
    broadcast add: built on the host, the index of a minibatch's output layer (2,560 nodes
    of 300) is 6 MB of int64 made by NumPy and then copied over, on every forward pass."""
    if state.xp is np:
        return element_index(starts, size)
    offsets = state.xp.arange(size, dtype=np.int64)
    return (to_device_index(starts)[:, None] + offsets).reshape(-1)


def copy_index(starts: np.ndarray, size: int) -> tuple:
    """``(index, width)`` for a COPY of nodes ``size`` long that begin at ``starts`` (host
    arena offsets): ``width == size`` with one index per node into :func:`rows_view` (NumPy,
    nodes of :data:`ROWS_MIN_WIDTH` or more), else ``width == 1`` with one index per
    element, on the backend's device."""
    if size == 1:
        return to_device_index(starts), 1
    if size >= ROWS_MIN_WIDTH and state.xp is np:
        return starts, size
    return device_element_index(starts, size), 1


def strided_view(xp, flat, start: int, n: int, size: int, step: int):
    """``n`` blocks of ``size`` elements of ``flat``, ``step`` elements apart from
    ``flat[start]`` on, as one ``(n, size)`` array without a copy. (Slicing a reshaped
    segment when ``flat`` reaches far enough: several times cheaper than ``as_strided``.)"""
    stop = start + n * step
    if stop <= flat.size:
        return flat[start:stop].reshape(n, step)[:, :size]
    item = flat.itemsize
    return xp.lib.stride_tricks.as_strided(flat[start:], shape=(n, size),
                                           strides=(step * item, item))


# How a batch obtained one argument position (kept for backward and for traces):
SHARED, VIEW, STRIDED, COPY, STACK = "shared", "view", "strided", "copy", "stack"


def gather_kind(locs: list, sizes, arena_of, batch_axis: bool = False) -> str:
    """How a batch reads one argument position whose nodes live at addresses ``locs`` (in
    batch order), ``sizes`` long (one int for all, or one per node); ``arena_of(address)``
    names the arena of an address; ``batch_axis``: the kernel takes its arguments with a
    batch axis (every op but the element-wise ones, which read flat blocks).

    VIEW when they lie back to back in one arena (no copy, §3.3); STRIDED when they are
    evenly spaced further apart than their size and either the kernel has a batch axis or
    they are scalars (evenly spaced scalars are a flat block too, with a step; no copy
    either); STACK when a parameter (address -1) or several arenas are involved; otherwise
    COPY (one gather kernel). The executor and the traces (``batchviz.trace``) both decide
    with this one function, so the copies a trace reports are the copies the executor
    makes."""
    first = locs[0]
    if isinstance(sizes, int) and first >= 0:  # the common cases, views, checked first (in C)
        n = len(locs)
        last = first + (n - 1) * sizes  # (the ends are compared before building a range)
        if locs[-1] == last and locs == list(range(first, last + 1, sizes)):
            if arena_of(first) == arena_of(last):
                return VIEW
        elif (batch_axis or sizes == 1) and n > 1:
            step = locs[1] - first
            last = first + (n - 1) * step
            if (step > sizes and locs[-1] == last and locs == list(range(first, last + 1, step))
                    and arena_of(first) == arena_of(last)):
                return STRIDED
    lo = min(locs)
    if lo < 0 or arena_of(lo) != arena_of(max(locs)):
        return STACK
    if isinstance(sizes, int):
        return COPY
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
        self.bases: list[int] = []       # the arenas' base addresses, ascending (for bisect)
        self.next_address = 0
        self.pending_size = 0            # the size of the next run's arena (set by its layout)
        self.records: list = []          # BatchRecords, in execution order

    def grow(self, n_nodes: int) -> None:
        missing = n_nodes - len(self.address)
        if missing > 0:
            self.address.extend([-1] * missing)
            self.batch_of.extend([-1] * missing)

    def new_arena(self, size: int):
        base = self.next_address
        arena = POOL.take(size)
        self.arenas.append((base, arena))
        self.bases.append(base)
        self.next_address = base + size
        return len(self.arenas) - 1, base, arena

    def release(self) -> None:
        """The graph is finished: its arenas go back to the pool."""
        for _, arena in self.arenas:
            POOL.give(arena)
        self.arenas = []
        self.bases = []
        self.records = []

    def arena_of(self, address: int) -> int:
        """The arena holding ``address``: the last one whose base is at or below it. (A
        binary search in C: a parser's graph has an arena per forward run, about a hundred,
        and its steps read the first run's BiLSTM vectors.)"""
        return bisect_right(self.bases, address) - 1

    def block_address(self, node: int, block: int) -> int:
        """Where block ``block`` of what ``node`` keeps begins (block 0: its value). A batch
        of nodes that keep several blocks is laid out block by block (see
        ``Op.storage_blocks``), so the blocks of one node are a batch's values apart."""
        address = self.address[node]
        if block:
            address += block * self.records[self.batch_of[node]].block_stride
        return address

    def flat_value(self, graph, node: int, block: int = 0):
        """The node's value as a flat view (parameters: the parameter's own array); with
        ``block``, that block of what the node keeps (``Op.storage_blocks``), which has
        the value's size."""
        address = self.block_address(node, block)
        if address < 0:
            return graph.param_of_node[node]._array.reshape(-1)
        base, arena = self.arenas[self.arena_of(address)]
        offset = address - base
        return arena[offset:offset + size_of(graph.shapes[node])]

    def value(self, node: int):
        """The node's value, in its shape (a view; callers copy before handing it out)."""
        return self.flat_value(self.graph, node).reshape(self.graph.shapes[node])

    def gather_one(self, graph, node: int, size, stats, block: int = 0):
        """:meth:`gather` of a single node (``size``: an int or a one-item list): a view
        of it, or a copy when it is a parameter (what :func:`gather_kind` says of one node).
        Batches of one node are common (every batch of the "none" strategy), so this path
        skips the general checks."""
        address = self.block_address(node, block)
        if address < 0:
            return self.gather(graph, [node], size, stats)
        size = size if isinstance(size, int) else size[0]
        k = self.arena_of(address)
        base, arena = self.arenas[k]
        start = address - base
        stats.copies_avoided += 1
        return arena[start:start + size], (VIEW, k, start, size)

    def _whole_batch(self, record, sizes, block: int):
        """The VIEW of block ``block`` of all of ``record``'s nodes, read in the batch's own
        order: one slice of its segment, found without looking at the nodes one by one
        (what :func:`gather_kind` says of them: back to back, in one arena). None if
        ``sizes`` do not cover that block exactly."""
        length = record.block_stride or record.stop - record.start
        wanted = len(record.nodes) * sizes if isinstance(sizes, int) else sum(sizes)
        if wanted != length:
            return None
        start = record.start + block * length
        arena = self.arenas[record.arena][1]
        return arena[start:start + length], (VIEW, record.arena, start, length)

    def _whole_batches(self, nodes: tuple, size: int, block: int):
        """The COPY of ``nodes`` when they are several whole earlier batches one after the
        other, each in its own order (a batch that waited for the outputs of many: the
        agenda's output layer or loss over every time step). Each batch is one slice of its
        segment, so the copy is one concatenation of slices and its index is built per
        batch, without looking at the nodes one by one. None where :func:`gather_kind`
        would not say COPY (the batches lie back to back, or are one node each and maybe
        evenly spaced, or are in several arenas) or the nodes are not such batches."""
        records, batch_of = self.records, self.batch_of
        pieces, batches, at, n = [], set(), 0, len(nodes)
        while at < n:
            owner = batch_of[nodes[at]]
            if owner < 0:
                return None
            record = records[owner]
            m = len(record.nodes)
            if nodes[at:at + m] != record.nodes:
                return None
            length = record.block_stride or record.stop - record.start
            if m * size != length or (pieces and record.arena != pieces[0][0]):
                return None
            pieces.append((record.arena, record.start + block * length, length))
            batches.add(owner)
            at += m
        back_to_back = all(b[1] == a[1] + a[2] for a, b in zip(pieces, pieces[1:]))
        if len(pieces) == n or back_to_back:
            return None  # single nodes (perhaps evenly spaced), or a view
        k = pieces[0][0]
        arena = self.arenas[k][1]
        xp = state.xp
        block_values = xp.concatenate([arena[start:start + length] for _, start, length in pieces])
        starts = np.concatenate([np.arange(start, start + length, size, dtype=np.int64)
                                 for _, start, length in pieces])   # node after node
        index, width = copy_index(starts, size)
        return block_values, (COPY, k, index, width, len(batches) == len(pieces))

    def _across_arenas(self, locs: list, size: int) -> tuple:
        """The values at ``locs``, ``size`` long each, that lie in several arenas - a graph
        run forward more than once, like a parser's, whose loss adds values of every run -
        copied with one gather per arena instead of one slice per node. Returns the flat
        block and, per arena, ``(arena, positions of its nodes in the block, element
        index into the arena)`` for the backward scatter."""
        xp = state.xp
        locs = np.asarray(locs, dtype=np.int64)
        which = np.searchsorted(np.asarray(self.bases, dtype=np.int64), locs, side="right") - 1
        by_arena = np.argsort(which, kind="stable")
        cuts = np.flatnonzero(which[by_arena][1:] != which[by_arena][:-1]) + 1
        out = xp.empty((len(locs), size), dtype=self.arenas[0][1].dtype)
        groups = []
        for at in np.split(by_arena, cuts):
            k = int(which[at[0]])
            base, arena = self.arenas[k]
            index = device_element_index(locs[at] - base, size)
            at = to_device_index(at)
            out[at] = arena[index].reshape(-1, size)
            groups.append((k, at, index))
        return out.reshape(-1), groups

    def gather(self, graph, nodes: list, sizes, stats, batch_axis: bool = False, block: int = 0):
        """The flat concatenation of ``nodes``' values (with ``block``: of that block of what
        each node keeps, see ``Op.storage_blocks``), and how it was obtained.

        ``sizes`` is one int when all nodes have the same size, else a list. Returns
        ``(array, (kind, ...))`` where kind is VIEW (no copy), STRIDED (no copy: an
        ``(n, size)`` array when ``batch_axis``, a flat one for scalars), COPY (one gather
        kernel) or STACK (the slow path: parameters or several arenas involved)."""
        owner = self.batch_of[nodes[0]]
        if owner >= 0:
            record = self.records[owner]
            if record.nodes == nodes:  # usually: a whole earlier batch, in its own order
                found = self._whole_batch(record, sizes, block)
                if found is not None:
                    stats.copies_avoided += 1
                    return found
            elif isinstance(sizes, int) and len(record.nodes) < len(nodes):
                found = self._whole_batches(nodes, sizes, block)
                if found is not None:
                    stats.copies += 1
                    stats.bytes_copied += found[0].nbytes
                    return found
        locs = list(map(self.address.__getitem__, nodes))
        if block:  # block ``block`` of each node: its batch's values' size times ``block`` on
            owners = list(map(self.batch_of.__getitem__, nodes))
            records = self.records
            if owners.count(owners[0]) == len(owners):  # usually: all from one batch
                shift = block * records[owners[0]].block_stride
                locs = [a + shift for a in locs]
            else:
                locs = [a + block * records[b].block_stride for a, b in zip(locs, owners)]
        kind = gather_kind(locs, sizes, self.arena_of, batch_axis)
        if kind == STACK:
            if isinstance(sizes, int) and min(locs) >= 0:  # no parameter: several arenas
                stacked, groups = self._across_arenas(locs, sizes)
            else:
                stacked = state.xp.concatenate([self.flat_value(graph, a, block) for a in nodes])
                groups = None
            stats.copies += 1
            stats.bytes_copied += stacked.nbytes
            return stacked, (STACK, nodes, sizes, block, groups)
        k = self.arena_of(locs[0])
        base, arena = self.arenas[k]
        first = locs[0]
        n = len(nodes)
        if isinstance(sizes, int):
            if kind == VIEW:
                stats.copies_avoided += 1
                return arena[first - base:first - base + n * sizes], (VIEW, k, first - base, n * sizes)
            if kind == STRIDED:
                stats.copies_avoided += 1
                step = locs[1] - first
                block = strided_view(state.xp, arena, first - base, n, sizes, step)
                return (block[:, 0] if sizes == 1 else block,  # scalars: a flat block
                        (STRIDED, k, first - base, n, sizes, step))
            index, width = copy_index(np.asarray(locs, dtype=np.int64) - base, sizes)
        else:
            ends = np.cumsum(sizes)
            starts = np.asarray(locs, dtype=np.int64)
            if kind == VIEW:
                stats.copies_avoided += 1
                return arena[first - base:first - base + int(ends[-1])], (VIEW, k, first - base, int(ends[-1]))
            total = int(ends[-1])
            index = to_device_index(np.repeat(starts - base - (ends - sizes), sizes)
                                    + np.arange(total, dtype=np.int64))
            width = 1
        unique = len(set(nodes)) == n
        if width == 1:
            block = arena[index]
        else:
            block = rows_view(arena, width)[index].reshape(-1)
        stats.copies += 1
        stats.bytes_copied += block.nbytes
        return block, (COPY, k, index, width, unique)
