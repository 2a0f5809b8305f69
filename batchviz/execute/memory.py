"""The arrays behind a plan: arenas, the pool they come from, and the index arrays of copies.

Nothing here decides anything: the plan (:func:`~batchviz.plan.plan`) says which arena each batch
writes and how each argument is read; this module holds the flat arrays and builds the
views and indices that carry those decisions out, on NumPy or CuPy.
"""
from __future__ import annotations

import numpy as np
from numpy import ndarray  # (a name of this module: compiled, no attribute lookup per view)

from ..backend import state, to_device_index


class ArenaPool:
    """Flat arrays kept from finished graphs and backward passes, for the next ones.

    Every minibatch builds a new graph whose arenas (values, then gradients) are tens of
    megabytes. A fresh allocation of that size comes from the operating system as untouched
    pages, and the first write to each page faults, which costs more than the write itself.
    Like DyNet's memory pools, which are reset rather than freed between graphs, the pool
    hands the same memory out again. Only a graph's owner may read its arenas, and only
    until the graph is finished: values handed to users are copies. (The backward pass also
    stacks each weight's gradient terms here: a value and a gradient arena and two stacks
    at a time, hence room for eight.)"""

    def __init__(self, keep: int = 8):
        self.keep = keep
        self.spare: dict[tuple, list] = {}

    #: smaller arrays come from the allocator's own free lists: no pages to fault in
    MIN_SIZE = 1 << 16

    #: how many times the next power of two a new array reserves, on the CPU
    CPU_ROOM = 4

    def take(self, size: int):
        """A flat array of ``size`` elements (contents undefined): a kept array of at least
        ``size`` and at most twice the room a new one gets, else a new one.

        A new one has room to the next power of two, as DyNet's pools grow by doubling:
        minibatches sorted by length ask for a little more every time, and an array of
        exactly ``size`` would fit none of the next requests. On the CPU it reserves
        ``CPU_ROOM`` times that: pages never written are never faulted in, so the room
        costs address space only, and growing minibatches grow into it, each faulting in
        its new tail, instead of faulting in a whole fresh array (tens of megabytes) at
        every doubling. On a GPU room is memory: there it is the power of two alone."""
        if size < self.MIN_SIZE:
            return state.xp.empty(size, dtype=state.dtype)
        room = self.CPU_ROOM if state.xp is np else 1
        spare = self.spare.get((state.xp.__name__, state.dtype))
        if spare:
            fits = [k for k, a in enumerate(spare) if size <= a.size <= 2 * room * size]
            if fits:
                best = min(fits, key=lambda k: spare[k].size)
                return spare.pop(best)[:size]
        return state.xp.empty(room << (size - 1).bit_length(), dtype=state.dtype)[:size]

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


class Arenas:
    """The flat arrays of one graph's runs, by arena number (one per forward run)."""

    def __init__(self):
        self.arrays: list = []

    def new(self, size: int):
        """The array of the next arena (from the pool)."""
        array = POOL.take(size)
        self.arrays.append(array)
        return array

    def __getitem__(self, arena: int):
        return self.arrays[arena]

    def release(self, first: int = 0) -> None:
        """The graph is finished (or cut back, ``first``: the first arena it no longer
        needs): its arenas go back to the pool."""
        for array in self.arrays[first:]:
            POOL.give(array)
        self.arrays = self.arrays[:first]


#: nodes at least this long are gathered (and scattered back) as whole rows on the CPU
ROWS_MIN_WIDTH = 16


def rows_view(flat, width: int):
    """``flat`` seen as the overlapping rows ``flat[i:i + width]``, one for every offset
    ``i`` (no copy). Indexing it with the start offsets of ``n`` nodes copies ``n`` whole
    rows: NumPy then moves each node as one block instead of following one index per
    element, several times faster for vectors of hundreds of elements. The nodes of one
    gather never overlap, so writing through the same rows (the backward scatter) is safe.
    (NumPy only: on the GPU one index per element is what the gather kernel wants.) Built
    with the ``ndarray`` constructor over ``flat``'s memory, a tenth of ``as_strided``'s
    cost: a parser minibatch makes thousands of these views."""
    stride = flat.strides[0]
    return ndarray((flat.size - width + 1, width), flat.dtype, flat, 0, (stride, stride))


def element_index(starts: np.ndarray, size: int) -> np.ndarray:
    """The index of every element of nodes ``size`` long that begin at ``starts``, node
    after node: what a gather kernel reads when it follows one index per element."""
    return (starts[:, None] + np.arange(size, dtype=np.int64)).reshape(-1)


def device_element_index(starts: np.ndarray, size: int):
    """:func:`element_index` on the current backend's device. On a GPU only the ``n``
    starts travel (one small upload) and the ``n * size`` indices are made there with one
    broadcast add, instead of megabytes of indices made on the host and copied over."""
    if state.xp is np:
        return element_index(starts, size)
    offsets = state.xp.arange(size, dtype=np.int64)
    return (to_device_index(starts)[:, None] + offsets).reshape(-1)


def copy_index(starts: np.ndarray, size) -> tuple:
    """``(index, width)`` for gathering nodes that begin at ``starts`` (arena offsets),
    ``size`` long each (an int, or a tuple per node): ``width == size`` with one index per
    node into :func:`rows_view` (NumPy, nodes of :data:`ROWS_MIN_WIDTH` or more), else
    ``width == 1`` with one index per element, on the backend's device."""
    if not isinstance(size, int):  # nodes of several sizes: every element's index
        sizes = np.asarray(size, dtype=np.int64)
        ends = np.cumsum(sizes)
        index = np.repeat(starts - (ends - sizes), sizes) + np.arange(int(ends[-1]), dtype=np.int64)
        return to_device_index(index), 1
    if size == 1:
        return to_device_index(starts), 1
    if size >= ROWS_MIN_WIDTH and state.xp is np:
        return starts, size
    return device_element_index(starts, size), 1


def gather(flat, index, width: int):
    """The flat block of ``flat`` at ``index`` (from :func:`copy_index`): one gather kernel."""
    if width == 1:
        return flat[index]
    return rows_view(flat, width)[index].reshape(-1)


def strided_view(xp, flat, start: int, n: int, size: int, step: int):
    """``n`` blocks of ``size`` elements of ``flat``, ``step`` elements apart from
    ``flat[start]`` on, as one ``(n, size)`` array without a copy. (Slicing a reshaped
    segment when ``flat`` reaches far enough: several times cheaper than ``as_strided``.)"""
    stop = start + n * step
    if stop <= flat.size:
        return flat[start:stop].reshape(n, step)[:, :size]
    item = flat.itemsize
    return strided_array(xp, flat, start, (n, size), (step * item, item))


def strided_array(xp, flat, start: int, shape: tuple, strides: tuple):
    """The elements of ``flat`` from ``flat[start]`` on as an array of ``shape`` whose axes
    step ``strides`` bytes, without a copy: what ``as_strided`` makes. On NumPy it is made
    with the ``ndarray`` constructor over ``flat``'s memory (as :func:`rows_view` is),
    which also checks that it stays inside ``flat``: ``as_strided`` is Python code that
    costs several microseconds, and the batches of LSTM steps (which keep several blocks,
    see :func:`batch_outputs`) pay it for every output and every gradient. Other backends
    use their own ``as_strided``."""
    if xp is np:
        return ndarray(shape, flat.dtype, flat, start * flat.itemsize, strides)
    return xp.lib.stride_tricks.as_strided(flat[start:], shape=shape, strides=strides)


def segment(xp, flat, start: int, length: int, shape):
    """``flat[start:start + length]`` as an array of ``shape`` (C order; None or one axis:
    flat), without a copy. On NumPy a shaped one is made by the ``ndarray`` constructor over
    ``flat``'s memory (as :func:`rows_view` is): one array object, where a slice then a
    reshape make two, and every batch asks for its outputs and most of its reads this way.
    (``flat`` is an arena or a gradient buffer: contiguous.)"""
    if shape is None or len(shape) == 1:
        return flat[start:start + length]
    if xp is np:
        return ndarray(shape, flat.dtype, flat, start * flat.itemsize)
    return flat[start:start + length].reshape(shape)


def batch_outputs(xp, flat, batch):
    """A batch's segment of ``flat`` (its arena, or the gradients laid out like it) as the
    kernel's ``batch.out_shape`` array, without a copy. The blocks of a batch whose nodes
    keep several (``Op.storage_blocks``) are ``batch.block_stride`` apart: a run of such
    batches is laid out plane by plane (:func:`~batchviz.plan.layout.place_batches`). That
    array is made with explicit strides, so that it is a view on every backend (a reshape
    of a strided array may copy, and the kernels write into it)."""
    if not batch.block_stride:
        return segment(xp, flat, batch.start, batch.length, batch.out_shape)
    shape, item = batch.out_shape, flat.itemsize
    strides = [item] * len(shape)
    for axis in range(len(shape) - 2, 0, -1):   # a C-ordered (n,) + shape block ...
        strides[axis] = strides[axis + 1] * shape[axis + 1]
    strides[0] = batch.block_stride * item       # ... every block_stride elements
    return strided_array(xp, flat, batch.start, shape, tuple(strides))
