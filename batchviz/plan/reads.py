"""How a batch reads one argument position: the kinds of read, and the rule that picks one.

A batch's kernel takes each argument position as one block, the ``H`` of ``W @ H`` (§3.3).
Where the argument nodes lie decides how that block is obtained:

- :class:`Shared`: every node of the batch has the same argument (``W``): read once;
- :class:`View`: the arguments lie back to back in one arena, in batch order: no copy;
- :class:`Strided`: evenly spaced further apart than their size, and the kernel takes a
  batch axis (or they are scalars): no copy either;
- :class:`Concat`: they are several whole earlier batches, one after another: one copy;
- :class:`Copy`: anywhere else in one arena: one gather (App. B);
- :class:`CopyFromArenas`: in several arenas (a graph run more than once): one gather per
  arena;
- :class:`Stack`: a parameter among them: node by node.

Each kind is an immutable record of *where* (arena number and element offsets), decided
once per run by :func:`read_of` and carried out by the executor, forward (read the block)
and backward (add the block's gradient back where the arguments live). The traces and
``bv.explain`` report these very records.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Shared(NamedTuple):
    """The same argument for every node of the batch (a parameter ``W``): read once."""
    node: int


class View(NamedTuple):
    """``length`` elements from ``start`` of arena ``arena``: the arguments back to back."""
    arena: int
    start: int
    length: int


class Strided(NamedTuple):
    """``n`` arguments of ``size`` elements, ``step`` apart from ``start``: an ``(n, size)``
    view of the arena with a longer stride (no copy)."""
    arena: int
    start: int
    n: int
    size: int
    step: int


class Concat(NamedTuple):
    """Slices ``(start, length)`` of arena ``arena``, each a whole earlier batch, joined in
    one copy; their gradients go back slice by slice."""
    arena: int
    pieces: tuple
    size: int


class Copy(NamedTuple):
    """A gather of the arguments starting at ``starts`` (element offsets into arena
    ``arena``, in batch order), ``size`` elements each (an int, or a tuple per argument);
    ``unique``: no argument twice (the backward scatter then needs no atomic adds)."""
    arena: int
    starts: np.ndarray
    size: object
    unique: bool


class CopyFromArenas(NamedTuple):
    """A gather from several arenas: per arena ``(arena, rows, starts)``, where ``rows`` are
    the positions of its arguments in the block and ``starts`` their offsets."""
    groups: tuple
    n: int
    size: int
    unique: bool


class Stack(NamedTuple):
    """Node by node: ``pieces`` are ``(arena, start, size)``, or ``(None, node, size)`` for a
    parameter, whose values live in the model."""
    pieces: tuple


#: the kinds that copy (and launch a kernel of their own)
COPIES = (Concat, Copy, CopyFromArenas, Stack)


#: ``tuple.__new__``, looked up once (see :func:`record`)
_new_tuple = tuple.__new__


def record(kind, fields: tuple):
    """``kind(*fields)``, for a NamedTuple class ``kind`` (a read), made by
    ``tuple.__new__`` in C. Calling the class itself runs the ``__new__`` that NamedTuple
    writes in Python: a frame of the interpreter for every record, about half a
    microsecond, while a plan makes a read per argument position of every batch.
    ``fields`` are all of ``kind``'s, in order, as one tuple: compiled, this is then a C
    function that the planner calls without packing arguments."""
    return _new_tuple(kind, fields)


#: the :class:`Shared` read of each node read as one so far: a record is immutable, so every
#: batch that reads the same node whole (a layer's ``W``, at the same node id in every graph
#: of a program that builds one per instance) can hold the same one. (Emptied when it grows
#: past ``_SHARED_KEPT``.)
_SHARED: dict = {}
_SHARED_KEPT = 20000


def shared_read(node: int) -> Shared:
    """The :class:`Shared` read of ``node``."""
    read = _SHARED.get(node)
    if read is None:
        if len(_SHARED) >= _SHARED_KEPT:
            _SHARED.clear()
        read = _SHARED[node] = record(Shared, (node,))
    return read


def is_copy(read) -> bool:
    return type(read) in COPIES


def elements_copied(read) -> int:
    """How many elements a read copies (0 for the kinds that read in place)."""
    kind = type(read)
    if kind is Copy:
        return len(read.starts) * read.size if isinstance(read.size, int) else sum(read.size)
    if kind is Concat:
        return sum(length for _, length in read.pieces)
    if kind is CopyFromArenas:
        return read.n * read.size
    if kind is Stack:
        return sum(size for _, _, size in read.pieces)
    return 0


def read_of(layout, nodes: tuple, sizes, batch_axis: bool, block: int = 0):
    """The read of argument nodes ``nodes`` (in batch order), ``sizes`` elements each (an int,
    or a list per node); ``batch_axis``: the kernel takes its arguments with a batch axis
    (every op but the element-wise ones, which read flat blocks); ``block``: which block of
    what each node keeps is read (``Op.storage_blocks``; 0: its value).

    The rule is :func:`read_at`, on the nodes' addresses. Two common cases are recognised
    first without looking at every node, with the same answer the rule gives: one node, and
    the nodes of whole earlier batches in their own order."""
    if len(nodes) == 1:
        arena, start = layout.where(nodes[0], block)
        if arena is None:  # a parameter
            return record(Stack, (((None, nodes[0], sizes if isinstance(sizes, int) else sizes[0]),),))
        return record(View, (arena, start, sizes if isinstance(sizes, int) else sizes[0]))
    owner = layout.batch_of[nodes[0]]
    if owner >= 0:
        batch = layout.batches[owner]
        if batch.nodes == nodes:  # usually: a whole earlier batch, in its own order
            read = _whole_batch(batch, sizes, block)
            if read is not None:
                return read
        elif isinstance(sizes, int) and len(batch.nodes) < len(nodes):
            read = _whole_batches(layout, nodes, sizes, block)
            if read is not None:
                return read
    return read_at(layout, nodes, layout.addresses_of(nodes, block), sizes, batch_axis)


def read_at(layout, nodes: tuple, addresses: list, sizes, batch_axis: bool):
    """The rule: how nodes at ``addresses`` (-1: a parameter), ``sizes`` long, are read."""
    lowest, highest, step = _extent(addresses)
    if lowest < 0:
        return _stack(layout, nodes, addresses, sizes)
    arena = layout.arena_of(lowest)
    if layout.arena_of(highest) != arena:  # (an arena is one range of addresses)
        if isinstance(sizes, int):
            return _from_arenas(layout, nodes, addresses, sizes)
        return _stack(layout, nodes, addresses, sizes)
    base = layout.bases[arena]
    first, n = addresses[0], len(addresses)
    if isinstance(sizes, int):
        if step > 0:  # evenly spaced
            if step == sizes:
                return record(View, (arena, first - base, n * sizes))
            if step > sizes and (batch_axis or sizes == 1):
                return record(Strided, (arena, first - base, n, sizes, step))
        starts = np.fromiter(addresses, np.int64, n)
        if base:  # offsets into the arena (the first arena's are its addresses)
            starts -= base
        return record(Copy, (arena, starts, sizes, len(set(nodes)) == n))
    ends = first + np.cumsum(sizes)
    if (np.asarray(addresses[1:]) == ends[:-1]).all():  # nodes of several sizes, back to back
        return View(arena, first - base, int(ends[-1] - first))
    starts = np.asarray(addresses, dtype=np.int64) - base
    return record(Copy, (arena, starts, tuple(sizes), len(set(nodes)) == n))


def _extent(addresses: list) -> tuple:
    """``(lowest, highest, step)`` of the addresses; ``step`` is how far apart they are when
    every one is the same distance after the one before it, else 0."""
    first = lowest = highest = addresses[0]
    step = addresses[1] - first if len(addresses) > 1 else 0
    expected = first
    for address in addresses:
        if address < lowest:
            lowest = address
        elif address > highest:
            highest = address
        if address != expected:
            step = 0
        expected += step
    return lowest, highest, step


def _stack(layout, nodes, addresses, sizes) -> Stack:
    pieces = []
    for k, (node, address) in enumerate(zip(nodes, addresses)):
        size = sizes if isinstance(sizes, int) else sizes[k]
        if address < 0:
            pieces.append((None, node, size))
        else:
            arena = layout.arena_of(address)
            pieces.append((arena, address - layout.bases[arena], size))
    return record(Stack, (tuple(pieces),))


def _from_arenas(layout, nodes, addresses, size: int) -> CopyFromArenas:
    """Arguments in several arenas (a parser's graph runs forward after every step, and its
    loss adds values of every run), read with one gather per arena."""
    addresses = np.asarray(addresses, dtype=np.int64)
    which = np.searchsorted(np.asarray(layout.bases, dtype=np.int64), addresses, side="right") - 1
    by_arena = np.argsort(which, kind="stable")
    cuts = np.flatnonzero(which[by_arena][1:] != which[by_arena][:-1]) + 1
    groups = []
    for rows in np.split(by_arena, cuts):
        arena = int(which[rows[0]])
        groups.append((arena, rows, addresses[rows] - layout.bases[arena]))
    return record(CopyFromArenas, (tuple(groups), len(nodes), size,
                                   len(set(nodes)) == len(nodes)))


def _whole_batch(batch, sizes, block: int):
    """The View of block ``block`` of all of ``batch``'s nodes, read in the batch's own order
    (one slice of its segment), or None if ``sizes`` do not cover that block exactly."""
    length = batch.length
    wanted = len(batch.nodes) * sizes if isinstance(sizes, int) else sum(sizes)
    if wanted != length:
        return None
    return record(View, (batch.arena, batch.start + block * batch.block_stride, length))


def _whole_batches(layout, nodes: tuple, size: int, block: int):
    """The Concat of ``nodes`` when they are several whole earlier batches of one arena, each
    in its own order (a batch that waited for the outputs of many: the agenda's output layer
    or loss over every time step). None where the rule would not copy them as such (they
    lie back to back, or are single nodes, perhaps evenly spaced) or they are not such
    batches."""
    batch_of, batches = layout.batch_of, layout.batches
    pieces, at, n = [], 0, len(nodes)
    arena = None
    while at < n:
        owner = batch_of[nodes[at]]
        if owner < 0:
            return None
        batch = batches[owner]
        m = len(batch.nodes)
        if nodes[at:at + m] != batch.nodes:
            return None
        if m * size != batch.length or (arena is not None and batch.arena != arena):
            return None
        arena = batch.arena
        pieces.append((batch.start + block * batch.block_stride, batch.length))
        at += m
    back_to_back = all(b[0] == a[0] + a[1] for a, b in zip(pieces, pieces[1:]))
    if len(pieces) == n or back_to_back:
        return None
    return record(Concat, (arena, tuple(pieces), size))
