"""``plan(graph, batches, layout) -> Plan``: everything the executor needs, decided once.

A strategy's schedule says *which* nodes run together and in what order. The plan says
*how*: where each batch's outputs live (:mod:`~batchviz.plan.layout`), and for each argument
position of each batch one read (:mod:`~batchviz.plan.reads`): a view, a strided view, a
copy, ... It is plain, immutable data, made once per run; the executor carries it out
forward and backward, and the traces, ``bv.explain`` and the widgets read it as it is.
"""
from __future__ import annotations

from itertools import chain
from typing import NamedTuple

from ..signature import size_of
from .batch import BatchPlan
from .layout import Layout, place_batches
from .reads import COPIES, Shared, Strided, View, elements_copied, read_of, shared_read


class Plan(NamedTuple):
    """The batches of one forward run, in execution order, and their arena."""

    arena: int
    arena_size: int
    batches: tuple

    def copy_counts(self) -> tuple:
        """``(copies, copies avoided, elements copied)``: reads that copy (one kernel each),
        reads of arguments in place (views), and how much the copies move."""
        return copy_counts(self.batches)


def copy_counts(batches: tuple) -> tuple:
    """:meth:`Plan.copy_counts` of ``batches`` (a function, so that compiled its loop is C:
    every run counts its reads for its statistics)."""
    copies = avoided = elements = 0
    for batch in batches:
        for read in batch.reads:
            kind = type(read)
            if kind is View or kind is Strided:
                avoided += 1
            elif kind is not Shared and kind in COPIES:  # (most reads are shared: no search)
                copies += 1
                elements += elements_copied(read)
    return copies, avoided, elements


def plan(graph, batches: list, layout: Layout, start: int, every_gradient: bool = False) -> Plan:
    """The plan of ``batches``, the schedule of the nodes of ``graph`` from ``start`` on,
    laid out in a new arena after what ``layout`` holds (which is extended). With
    ``every_gradient``, every batch takes part in the backward pass, constants' too (so
    that every node's gradient can be read, DyNet's ``backward(full=True)``)."""
    arena, sizes, strides = place_batches(graph, batches, layout, start)
    first = len(layout.batches)
    for batch, size, stride in zip(batches, sizes, strides):
        layout.batches.append(plan_batch(graph, layout, batch, size, stride, every_gradient))
    size = layout.next_address - layout.bases[arena]
    return Plan(arena, size, tuple(layout.batches[first:]))


def plan_batch(graph, layout: Layout, batch: list, sizes, block_stride: int,
               every_gradient: bool = False) -> BatchPlan:
    """One batch's plan (its nodes already placed by
    :func:`~batchviz.plan.layout.place_batches`, which gave ``sizes`` and
    ``block_stride``). What the planner asks of the batch's signature and op is read once
    here and handed to the steps below: a graph of a few hundred nodes plans a batch in
    microseconds, of which each attribute lookup is a share."""
    nodes = tuple(batch)
    first = nodes[0]
    signature = graph.sigs[first]
    info = graph.sigtab.infos[signature]
    op, shared, blocks = info.op, info.shared, info.blocks
    elementwise = op.elementwise
    n = len(nodes)
    all_attrs, all_args = graph.attrs, graph.args
    attrs = tuple([all_attrs[node] for node in nodes])
    together = op.one_gather and isinstance(sizes, int)
    if together:  # one read: every argument of every node, node after node
        args = [all_args[node] for node in nodes]
        positions = [tuple(chain.from_iterable(args))]
        reads, in_shapes, counts = _read_together(layout, args, positions[0], sizes)
    else:
        positions = _argument_nodes(all_args, nodes)  # per read, its argument nodes
        reads = _read_positions(graph.shapes, layout, positions, sizes, elementwise, shared,
                                info.reads)
        in_shapes = _kernel_shapes(graph.shapes, all_args[first], n, reads, sizes, elementwise)
        counts = None
    origins, needs, sources = [], [], []
    takes_gradient = bool(shared) or bool(every_gradient)
    for j in range(len(reads)):
        origin = _origin(layout, reads[j], positions[j])
        need = type(reads[j]) is Shared or _takes_gradient(layout, origin)
        origins.append(origin)
        needs.append(need)
        sources.append(_source(layout, reads[j], origin, in_shapes[j]))
        takes_gradient = takes_gradient or need
    arena, start = layout.where(first)
    length = n * sizes if isinstance(sizes, int) else sum(sizes)
    out_shape = (length,) if elementwise else (n,) + graph.shapes[first]
    if blocks != 1:  # laid out block by block: (blocks, n) + shape, block_stride apart
        out_shape = (blocks,) + out_shape
    return BatchPlan(len(layout.batches), signature, op, nodes, attrs, arena, start, length,
                     sizes, out_shape, block_stride, tuple(reads), tuple(in_shapes),
                     tuple(needs), tuple(origins), tuple(sources), takes_gradient, together,
                     counts)


def _takes_gradient(layout: Layout, origin: tuple) -> bool:
    """Whether a batch among ``origin`` (or a parameter, -1) takes a gradient."""
    for b in origin:
        if b < 0:
            return True
        batch = layout.batches[b]
        if batch.requires_grad:
            return True
    return False


def _source(layout: Layout, read, origin: tuple, shape) -> int:
    """The batch whose outputs ``read`` reads, all of them and in the shape its kernel wrote
    them (``shape``: the shape the reading kernel takes), or -1. With one instance a graph,
    batches are small and many reads are such: the executor then hands the reader that
    batch's own output array (forward) and gradient array (backward), instead of making
    another NumPy view of the same elements for every read."""
    if type(read) is not View or len(origin) != 1 or origin[0] < 0:
        return -1
    batch = layout.batches[origin[0]]
    if batch.block_stride or batch.out_shape != shape:
        return -1
    # (one comparison of the records' fields, in C, rather than three looked up by name)
    return batch.index if read == (batch.arena, batch.start, batch.length) else -1


def _read_positions(shapes: list, layout: Layout, positions: list, sizes, elementwise: bool,
                    shared: tuple, block_of: dict) -> list:
    """Every argument position (``positions``: each one's nodes) read on its own: a shared
    argument (its position among ``shared``) once, the others with the read that the
    layout allows (a view when they lie right, §3.3); ``block_of``: the positions that read
    another block of their nodes than the value (``SignatureInfo.reads``)."""
    reads = []
    for j in range(len(positions)):
        nodes = positions[j]
        if j in shared:
            reads.append(shared_read(nodes[0]))
            continue
        size = sizes if elementwise else size_of(shapes[nodes[0]])
        block = block_of.get(j, 0) if block_of else 0  # which block of what the nodes keep
        reads.append(read_of(layout, nodes, size, not elementwise, block))
    return reads


def _kernel_shapes(shapes: list, first: tuple, n: int, reads: list, sizes,
                   elementwise: bool) -> list:
    """Per read, the shape the kernel takes its block in (``first``: the first node's
    arguments; ``n`` nodes): flat for an element-wise op, ``(n,) + argument shape`` for the
    others; None for a shared argument (its own array)."""
    if elementwise:
        flat = (n * sizes if isinstance(sizes, int) else sum(sizes),)
        return [None if type(read) is Shared else flat for read in reads]
    return [None if type(reads[j]) is Shared else (n,) + shapes[first[j]]
            for j in range(len(reads))]


def _read_together(layout: Layout, args: list, nodes: tuple, size: int) -> tuple:
    """All arguments of all nodes (``nodes``, node after node) in one read: the block is
    ``(n, k, size)`` when every node has ``k`` arguments (counts None), else
    ``(rows, size)`` with each node's number of arguments (an ``Op.any_arity`` op)."""
    n, k = len(args), len(args[0])
    read = read_of(layout, nodes, size, False)
    if len(nodes) == n * k and (n == 1 or all(len(a) == k for a in args)):
        return [read], [(n, k, size)], None
    return [read], [(len(nodes), size)], list(map(len, args))


def _argument_nodes(args: list, nodes: tuple) -> list:
    """Per argument position, the argument nodes of ``nodes`` there (in batch order;
    ``args``: every node's arguments, the graph's). (Position by position rather than
    ``zip(*args)``, which makes an iterator for each of a batch's hundreds of nodes before
    it yields the first position.)"""
    return [tuple([args[node][j] for node in nodes]) for j in range(len(args[nodes[0]]))]


def _origin(layout: Layout, read, nodes: tuple) -> tuple:
    """The batches that computed ``nodes`` (-1 for a parameter): the backward pass reaches
    them through this read. A view's arguments are consecutive, and batches are laid out in
    order, so its batches are a range."""
    if type(read) is Shared:
        return ()
    batch_of = layout.batch_of
    if type(read) is View:
        head, tail = nodes[0], nodes[len(nodes) - 1]
        first, last = batch_of[head], batch_of[tail]
        return tuple([b for b in range(first, last + 1)])  # (compiled: a C loop, no range)
    batches = set()
    for node in nodes:
        batches.add(batch_of[node])
    return tuple(batches)
