"""The forward pass: carry a plan out, one kernel per batch.

For every batch of the plan, in order: obtain each argument position's block as the plan
says (a slice of an arena, a strided view, one gather, ...), call the op's kernel once for
the whole batch (§3.3 "single -> batch node conversion": ``W @ h_1 ... W @ h_n`` becomes
``W @ H``), and write the outputs into the batch's segment of the arena. What the backward
pass needs of each batch - the blocks its kernel read, its outputs, the indices of its
copies - is kept in a :class:`BatchRun`.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import numerics
from ..backend import to_device_index
from ..plan.reads import Concat, Copy, CopyFromArenas, Shared, Stack, Strided, View
from .memory import batch_outputs, copy_index, gather, segment, strided_view


@dataclass(frozen=True)
class BatchRun:
    """What a batch's forward run leaves for its backward run (compiled: C fields,
    ``forward.pxd``).

    ``indices`` is a tuple, not a list: a graph's runs keep one per batch until the graph
    is finished, and every container made and kept counts towards the next pass of
    CPython's cycle collector (one per 700 more made than freed), which then visits all
    of them, while small tuples come from the interpreter's free lists, uncounted."""

    ins: list       # the blocks its kernel read, one per read, in the kernel's shapes
    out: object     # its outputs: its segment of the arena, in the plan's ``out_shape``
    indices: tuple  # per read: what a copy gathered with (to scatter gradients back)


def execute_forward(graph, plan, arenas, xp) -> None:
    """Run every batch of ``plan`` (a :class:`~batchviz.plan.Plan`) on the arrays of
    ``arenas``, in a new arena; appends one :class:`BatchRun` per batch to the graph's
    ``batch_runs`` (where later batches find the output arrays of those they read whole)."""
    arena = arenas.new(plan.arena_size)
    check = numerics.checking(graph)  # asked once per run: nothing is paid per batch when off
    arrays = arenas.arrays  # (the list itself: indexing it costs less than a method call)
    runs = graph.batch_runs
    for batch in plan.batches:
        runs.append(run_batch(graph, runs, arrays, arena, batch, xp, check))


def run_batch(graph, runs, arenas, arena, batch, xp, check: bool = False) -> BatchRun:
    """Read the batch's arguments, run its kernel once, write its outputs (``runs``: the
    :class:`BatchRun` of every earlier batch, by number; ``arenas``: the arena arrays, by
    number; ``check``: stop if they are not finite, :func:`~batchviz.check_numerics`).
    An argument position that reads all of an earlier batch's outputs, in their shape
    (``batch.sources``), takes that batch's output array itself."""
    reads, shapes, sources = batch.reads, batch.in_shapes, batch.sources
    ins, indices = [], []
    for j in range(len(reads)):  # (by position: compiled, a C loop without a zip object)
        source = sources[j]
        if source >= 0:
            earlier = runs[source]
            ins.append(earlier.out)
            indices.append(None)
            continue
        block, index = read_block(graph, arenas, reads[j], xp, shapes[j])
        ins.append(block)
        indices.append(index)
    out = batch_outputs(xp, arena, batch)
    run_kernel(batch, ins, out, xp)
    if check:
        numerics.check_forward(graph, batch, arena, xp)
    return BatchRun(ins, out, tuple(indices))


def run_kernel(batch, ins: list, out, xp) -> None:
    """The batch's kernel, once, on the blocks it read (``ins``); its outputs written in
    ``out``, the batch's segment of the arena."""
    op, n, attrs = batch.op, len(batch.nodes), batch.attrs
    if op.writes_output:  # the kernel writes straight into the batch's segment
        op.forward(xp, ins, attrs, n, out=out)
        return
    if batch.counts is not None:  # nodes of different numbers of arguments
        result = op.forward_segments(xp, ins[0], batch.counts, attrs, n)
    elif batch.together:
        result = op.forward_together(xp, ins[0], attrs, n)
    else:
        result = op.forward(xp, ins, attrs, n)
    if result.shape != out.shape:  # (the same elements, seen in the result's shape)
        out = out.reshape(result.shape)
    out[...] = result  # one copy, whatever the result's memory order


def read_block(graph, arenas, read, xp, shape=None) -> tuple:
    """``(block, index)``: the arguments of one read as one array in the kernel's ``shape``
    (None, or one axis: as read, flat, or ``(n, size)`` for a strided view; a shared
    argument is its own array), and what a copy gathered with (None for the other kinds).
    ``arenas``: the arena arrays, by number.

    The kinds are told apart by ``type(read) is``, most common first, rather than by a
    ``match`` statement: compiled, a class pattern checks the pattern's attribute names on
    every match, which costs more than reading a view does."""
    kind = type(read)
    if kind is View:  # cut out in its shape: one view
        return segment(xp, arenas[read.arena], read.start, read.length, shape), None
    if kind is Shared:
        return graph.param_of_node[read.node].array, None
    block, index = _copied_or_strided(graph, arenas, read, xp)
    return (block if shape is None or len(shape) == 1 else block.reshape(shape)), index


def _copied_or_strided(graph, arenas, read, xp) -> tuple:
    """:func:`read_block` of the kinds but a view and a shared argument, as read."""
    kind = type(read)
    if kind is Strided:
        arena, start, n, size, step = read
        block = strided_view(xp, arenas[arena], start, n, size, step)
        return (block[:, 0] if size == 1 else block), None  # scalars: a flat block
    if kind is Copy:
        index, width = copy_index(read.starts, read.size)
        return gather(arenas[read.arena], index, width), (index, width)
    if kind is Concat:
        flat = arenas[read.arena]
        return xp.concatenate([flat[s:s + length] for s, length in read.pieces]), None
    if kind is CopyFromArenas:
        return _gather_from_arenas(arenas, read.groups, read.n, read.size, xp)
    if kind is Stack:
        return xp.concatenate([_piece(graph, arenas, piece) for piece in read.pieces]), None
    raise TypeError(f"unknown read {read!r}")


def _gather_from_arenas(arenas, groups, n: int, size: int, xp) -> tuple:
    """One gather per arena into one ``(n, size)`` block; the indices, per arena."""
    out = xp.empty((n, size), dtype=arenas[groups[0][0]].dtype)
    indices = []
    for arena, rows, starts in groups:
        index, width = copy_index(starts, size)
        rows = to_device_index(rows)
        out[rows] = gather(arenas[arena], index, width).reshape(-1, size)
        indices.append((rows, index, width))
    return out.reshape(-1), indices


def _piece(graph, arenas, piece):
    """The flat values of one piece of a :class:`Stack`: a parameter's, or an arena's."""
    arena, start, size = piece
    if arena is None:
        return graph.param_of_node[start].array.reshape(-1)
    return arenas[arena][start:start + size]
