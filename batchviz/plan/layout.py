"""Where batch outputs live: one arena per run, one contiguous segment per batch (§3.3).

Every forward run of a graph gets one flat *arena* for the nodes it computes, and each
batch one segment of it, batch after batch in schedule order, its nodes back to back in
batch order. A later batch whose arguments are those nodes, in that order, then reads them
as a view instead of copying them (the paper's contiguous-memory point).

A node's *address* is its first element in a virtual address space that all arenas of a
graph share, so one integer tells both the arena and the offset.

Nodes that keep several blocks (``Op.storage_blocks``: an LSTM step keeps ``h``, ``c`` and
its gates) are laid out *plane by plane*. A run of consecutive batches of such nodes gets
one region of the arena: first the values of all of them, batch after batch, then all
their second blocks in the same places, and so on; each batch's block ``b`` lies ``b``
times the run's values after its values (its ``block_stride``). So every block of a batch
is a contiguous ``(n,) + shape`` array for the kernel, and the values of the whole run are
back to back: a later batch that reads the ``h`` of every step of a Tree-LSTM, laid out
in that order, reads one view. (A batch keeping fewer blocks than others of its run
leaves its last planes' places empty.)
"""
from __future__ import annotations

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

    def copy(self) -> "Layout":
        """A layout with the same map, to plan more batches on without changing this one
        (a trace's dry run of the nodes a graph has not run yet)."""
        other = Layout()
        other.address, other.batch_of = list(self.address), list(self.batch_of)
        other.bases, other.batches = list(self.bases), list(self.batches)
        other.next_address = self.next_address
        return other

    def truncate(self, arena: int, batches: int, nodes: int) -> None:
        """Forget arena ``arena`` and the later ones, every batch from number ``batches`` on
        and where the nodes from ``nodes`` on live (the runs a reverted graph forgets)."""
        self.next_address = self.bases[arena]
        del self.bases[arena:], self.batches[batches:]
        del self.address[nodes:], self.batch_of[nodes:]

    def arena_of(self, address: int) -> int:
        """The arena holding ``address``: the last one whose base is at or below it (a binary
        search, ``bisect_right`` written out so that compiled it is a C loop: a parser's
        graph has an arena per forward run, and the planner asks for every read)."""
        bases = self.bases
        low, high = 0, len(bases)
        while low < high:  # bases[:low] are at or below ``address``, bases[high:] above
            middle = (low + high) // 2
            base = bases[middle]  # (compiled: a C integer, compared without making a PyLong)
            if base <= address:
                low = middle + 1
            else:
                high = middle
        return low - 1

    def address_of(self, node: int, block: int = 0) -> int:
        """Where block ``block`` of what ``node`` keeps begins (block 0: its value); -1 for a
        parameter. The blocks of one node are its batch's values apart."""
        address = self.address[node]
        if block and address >= 0:
            address += block * self.batches[self.batch_of[node]].block_stride
        return address

    def addresses_of(self, nodes, block: int = 0) -> list:
        """:meth:`address_of` of many nodes: (compiled) one C loop over the address list for
        values (block 0), the common case; a batch of a thousand nodes reads several of
        these."""
        address = self.address
        addresses = [address[node] for node in nodes]
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
    each batch's values one segment: set every node's address and batch. Returns
    ``(arena, sizes, strides)``: the arena's number; per batch its nodes' sizes (one int
    when they are all the same size, else one per node); and per batch how far apart its
    nodes' blocks are (0 for nodes that keep their value only; see the module docstring).

    The nodes from ``start`` on that no batch holds are parameters: their entries stay -1.
    This touches every node of the run (``layout.pxd`` gives the loops C types)."""
    shapes, infos, sigs = graph.shapes, graph.sigtab.infos, graph.sigs
    layout.grow(len(shapes))
    address, batch_of = layout.address, layout.batch_of
    next_free = first_free = layout.next_address
    first_batch = len(layout.batches)
    sizes = []
    strides = [0] * len(batches)
    region = None  # the run of batches keeping several blocks: [its first address, planes, batches]
    for k in range(len(batches)):
        batch = batches[k]
        info = infos[sigs[batch[0]]]
        blocks = info.blocks
        if blocks != 1:  # nodes that keep more than their value (Op.storage_blocks)
            if region is None:
                region = [next_free, blocks, []]
            region[1] = max(region[1], blocks)
            region[2].append(k)
        elif region is not None:
            next_free = _close_region(region, next_free, strides)
            region = None
        size = size_of(shapes[batch[0]])
        index = first_batch + k  # the batch's number (one int object for all its nodes)
        several = None
        if blocks == 1 and info.op.elementwise and len(batch) > 1:
            several = _sizes_if_several(batch, shapes)  # element-wise, of several sizes
        if several is None:
            for node in batch:  # back to back, ``size`` apart
                address[node] = next_free
                batch_of[node] = index
                next_free += size
            sizes.append(size)
        else:
            for i in range(len(batch)):
                address[batch[i]] = next_free
                batch_of[batch[i]] = index
                next_free += several[i]
            sizes.append(several)
    if region is not None:
        next_free = _close_region(region, next_free, strides)
    arena = layout.new_arena(next_free - first_free)
    return arena, sizes, strides


def _sizes_if_several(batch: list, shapes: list):
    """Each node's size when the nodes of ``batch`` are not all of one size, else None."""
    first = shapes[batch[0]]
    for node in batch:
        shape = shapes[node]
        if shape is not first and shape != first:
            break
    else:
        return None  # one shape
    sizes = [size_of(shapes[node]) for node in batch]
    for size in sizes:
        if size != sizes[0]:
            return sizes
    return None  # shapes differ, sizes do not


def _close_region(region: list, values_end: int, strides: list) -> int:
    """End a run of batches laid out plane by plane (``region``: its first address, its
    most blocks per node, its batches), whose values end at ``values_end``: every batch's
    blocks are the run's values apart. Returns the first address after its last plane."""
    first, planes, members = region
    values = values_end - first
    for k in members:
        strides[k] = values
    return first + planes * values
