"""Running a schedule: batched forward, then batched backward over the same batches.

Forward, for every batch of the schedule: gather each argument position into one block (a
view when possible, §3.3), call the op's kernel once for the whole batch (§3.3
"single -> batch node conversion": ``W @ h_1 ... W @ h_n`` becomes ``W @ H``), and write the
outputs into the batch's contiguous segment of the arena.

Backward walks the same batches in reverse: the gradient of a batch's outputs is one
contiguous segment of the gradient arena, the op's backward kernel runs once, and each
argument's gradient is added back where the argument lives (through the view, or scattered
through the gather's index).
"""
from __future__ import annotations

import time
from itertools import accumulate, chain
from operator import itemgetter

import numpy as np

from ..backend import scatter_add, state
from ..ops.base import BlockGradient
from ..ops.leaves import SparseRows
from ..ops.linalg import WeightGradient
from ..schedule import PendingView, validate_schedule
from .memory import COPY, POOL, SHARED, STRIDED, VIEW, Memory, rows_view, size_of, strided_view
from .stats import PassStats, RunStats, set_last


class BatchRecord:
    """One executed batch: what the backward pass and the traces need to know."""

    __slots__ = ("index", "sig", "op", "nodes", "attrs", "arena", "start", "stop", "ins",
                 "out", "sources", "needs", "requires_grad", "block_stride", "together",
                 "counts")

    def __repr__(self) -> str:
        kinds = ",".join(s[0] for s in self.sources)
        return f"<batch {self.index}: {self.op.name} x{len(self.nodes)} args[{kinds}]>"


def run_forward(graph) -> None:
    """Schedule the pending nodes of ``graph`` with its strategy and compute them."""
    t0 = time.perf_counter()
    view = PendingView(graph)
    batches = graph.strategy.schedule(view)
    if not getattr(graph.strategy, "trusted", False):
        batches = validate_schedule(view, batches)
    t1 = time.perf_counter()
    if graph.tracer is not None:
        graph.tracer.on_schedule(graph, view, batches)

    if graph.memory is None:
        graph.memory = Memory(graph)
    mem = graph.memory
    mem.grow(len(graph.ops))
    stats = PassStats(nodes=len(view.nodes), schedule_seconds=t1 - t0)

    out_sizes = _lay_out(graph, mem, batches)
    arena_index, base, arena = mem.new_arena(mem.pending_size)

    h2d, d2h = state.host_to_device, state.device_to_host
    for batch, sizes in zip(batches, out_sizes):
        _forward_batch(graph, mem, batch, sizes, arena_index, base, arena, stats)
    graph.n_evaluated = len(graph.ops)
    stats.host_to_device = state.host_to_device - h2d
    stats.device_to_host = state.device_to_host - d2h
    stats.seconds = time.perf_counter() - t0
    graph.last_stats = RunStats(graph.strategy.name, forward=stats)
    set_last(graph.last_stats)


def _lay_out(graph, mem, batches) -> list:
    """Lay the batches out one after another, each batch's outputs one segment (§3.3): set
    every node's address and batch, and return each batch's output sizes (one int when its
    nodes are all the same size, else one per node). A batch of nodes that keep several
    blocks (``Op.storage_blocks``) is laid out block by block: its values back to back,
    then its second blocks, and so on. The new arena's size is left in
    ``mem.pending_size``.

    This touches every node of the run, so nothing here loops over nodes in Python: a
    batch's shapes are read with one ``itemgetter`` call and its addresses are a ``range``,
    joined into flat lists, and the per-node lists are written with one NumPy scatter."""
    shapes, sigtab, sigs = graph.shapes, graph.sigtab, graph.sigs
    start = graph.n_evaluated
    next_free = first_free = mem.next_address
    out_sizes = []
    order, places, counts = [], [], []   # node after node, batch after batch
    for batch in batches:
        n = len(batch)
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
        order += batch
        counts.append(n)
        out_sizes.append(size)
    _set_per_node(mem, start, order, places, counts)
    mem.pending_size = next_free - first_free
    return out_sizes


def _set_per_node(mem, start: int, order: list, places: list, counts: list) -> None:
    """Record the address (``places``, in ``order``) and the batch of every node of this run:
    the nodes of the next new batch are the next ``counts[k]`` of ``order``. Every other
    node from ``start`` on is a parameter of this run, whose entries stay -1, so the new
    tails of the per-node lists are written whole, without reading the old ones."""
    first_batch = len(mem.records)
    if len(order) < 64:
        batch_of = [b for b, n in enumerate(counts, first_batch) for _ in range(n)]
        for i, address, b in zip(order, places, batch_of):
            mem.address[i] = address
            mem.batch_of[i] = b
        return
    local = np.array(order, dtype=np.int64)
    local -= start
    width = len(mem.address) - start
    tail = np.full(width, -1, dtype=np.int64)
    tail[local] = places
    mem.address[start:] = tail.tolist()
    tail.fill(-1)
    tail[local] = np.repeat(np.arange(first_batch, first_batch + len(counts)), counts)
    mem.batch_of[start:] = tail.tolist()


def _forward_batch(graph, mem, batch, out_sizes, arena_index, base, arena, stats) -> None:
    xp = state.xp
    first = batch[0]
    info = graph.sigtab[graph.sigs[first]]
    op = info.op
    n = len(batch)
    shapes, records = graph.shapes, mem.records

    rec = BatchRecord()
    rec.index = len(records)
    rec.sig, rec.op, rec.nodes = graph.sigs[first], op, tuple(batch)  # (as argument positions are)
    if n == 1:
        rec.attrs = [graph.attrs[first]]
        args = (graph.args[first],)
    else:  # one C call per batch instead of a Python loop over its nodes
        rec.attrs = list(itemgetter(*batch)(graph.attrs))
        args = itemgetter(*batch)(graph.args)
    elementwise = op.elementwise
    rec.together = op.one_gather and isinstance(out_sizes, int)
    rec.counts = None
    if rec.together:
        ins, sources, needs, rec.counts = _read_together(graph, mem, args, out_sizes, stats)
    else:
        ins, sources, needs = _read_positions(graph, mem, info, args, out_sizes, stats)
    requires_grad = bool(info.shared) or any(needs) or graph.keep_gradients

    start = mem.address[first] - base
    total = n * out_sizes if isinstance(out_sizes, int) else sum(out_sizes)
    shape = (n,) + shapes[first]
    if info.blocks != 1:  # block by block: (blocks, n) + shape
        rec.block_stride = total
        total *= info.blocks
        shape = (info.blocks,) + shape
    else:
        rec.block_stride = 0
    out = arena[start:start + total]
    if op.writes_output:  # the kernel writes straight into the batch's segment
        op.forward(xp, ins, rec.attrs, n, out=out.reshape(shape))
    else:
        if rec.counts is not None:  # nodes of different numbers of arguments
            result = op.forward_segments(xp, ins[0], rec.counts, rec.attrs, n)
        elif rec.together:
            result = op.forward_together(xp, ins[0], rec.attrs, n)
        else:
            result = op.forward(xp, ins, rec.attrs, n)
        out.reshape(result.shape)[...] = result  # one copy, whatever the result's memory order
    rec.arena, rec.start, rec.stop = arena_index, start, start + total
    rec.ins, rec.sources, rec.needs = ins, sources, needs
    rec.out = out if elementwise else out.reshape(shape)
    rec.requires_grad = requires_grad
    records.append(rec)
    stats.batches += 1
    if graph.tracer is not None:
        graph.tracer.on_batch(graph, rec)


def _read_positions(graph, mem, info, args: tuple, out_sizes, stats) -> tuple:
    """``(ins, sources, needs)``: every argument position of a batch (``args``: each node's
    argument ids) read on its own: a shared argument once, the others gathered (a view
    when they lie right, §3.3); ``needs``: whether gradients must flow back there."""
    n = len(args)
    positions = [(a,) for a in args[0]] if n == 1 else list(zip(*args))  # per position: its nodes
    elementwise, shapes = info.op.elementwise, graph.shapes
    ins, sources, needs = [], [], []
    shared, reads = info.shared, info.reads
    for j, nodes in enumerate(positions):
        if j in shared:
            node = nodes[0]
            ins.append(graph.param_of_node[node]._array)
            sources.append((SHARED, node))
            needs.append(True)
            continue
        arg_shape = shapes[nodes[0]]
        sizes = out_sizes if elementwise else size_of(arg_shape)
        read = reads.get(j, 0) if reads else 0  # which block of what the nodes keep
        if n == 1:  # one node reads its argument where it lives
            block, source = mem.gather_one(graph, nodes[0], sizes, stats, read)
        else:
            block, source = mem.gather(graph, nodes, sizes, stats, not elementwise, read)
        source, need = _with_origin(mem, nodes, source)
        ins.append(block if elementwise else block.reshape((n,) + arg_shape))
        sources.append(source)
        needs.append(need)
    return ins, sources, needs


def _read_together(graph, mem, args: tuple, size: int, stats) -> tuple:
    """``(ins, sources, needs, counts)`` of a batch of a ``one_gather`` op whose values are
    all ``size`` long: all arguments of all nodes in one gather, node after node, one input,
    one source. The input is the block shaped ``(n, k, size)`` when every node has ``k``
    arguments (``counts`` None), else ``(rows, size)`` with ``counts``, each node's number
    of arguments (an ``Op.any_arity`` op)."""
    n, k = len(args), len(args[0])
    nodes = tuple(chain.from_iterable(args))
    block, source = mem.gather(graph, nodes, size, stats)
    source, need = _with_origin(mem, nodes, source)
    if len(nodes) == n * k and (n == 1 or all(len(a) == k for a in args)):
        return [block.reshape(n, k, size)], [source], [need], None
    return [block.reshape(len(nodes), size)], [source], [need], list(map(len, args))


def _with_origin(mem, nodes, source) -> tuple:
    """``source`` with the batches that computed ``nodes`` appended, and whether any of
    them needs a gradient (a parameter, or a batch that requires one)."""
    batch_of, records = mem.batch_of, mem.records
    if source[0] == VIEW:
        # consecutive addresses may run across the end of one batch's segment into the
        # next one's: batches are laid out in order, so the sources are a range
        origin = tuple(range(batch_of[nodes[0]], batch_of[nodes[-1]] + 1))
    else:
        origin = tuple(set(map(batch_of.__getitem__, nodes)))
    need = any(b < 0 or records[b].requires_grad for b in origin)
    return source + (origin,), need


def run_backward(graph, loss: int) -> None:
    """Accumulate d(loss)/d(parameter) into every parameter's gradient."""
    t0 = time.perf_counter()
    xp = state.xp
    mem = graph.memory
    stats = PassStats(nodes=len(graph.ops))
    h2d, d2h = state.host_to_device, state.device_to_host
    if mem.address[loss] < 0:
        return  # the "loss" is a parameter: nothing to propagate
    # one zeroed buffer laid out like the address space: each arena's gradient is a slice
    # (a parser's graph has an arena per forward run: thousands of them)
    first_base = mem.arenas[0][0]
    all_grads = POOL.take(mem.next_address - first_base)
    all_grads.fill(0.0)
    grads = [all_grads[base - first_base:base - first_base + arena.size] for base, arena in mem.arenas]
    records = mem.records
    reached = bytearray(len(records))
    # parameter node -> its WeightGradients, summed at the end in one GEMM per parameter
    weight_grads: dict[int, list] = {}
    defer_weight_grads = getattr(graph.strategy, "batches_weight_gradients", True)
    k = mem.arena_of(mem.address[loss])
    grads[k][mem.address[loss] - mem.arenas[k][0]] = 1.0
    reached[mem.batch_of[loss]] = 1

    for rec in reversed(records):
        if not reached[rec.index] or not rec.requires_grad:
            continue
        g = grads[rec.arena][rec.start:rec.stop]
        if not rec.op.elementwise:
            g = g.reshape(rec.out.shape)
        if rec.counts is not None:  # nodes of different numbers of arguments
            arg_grads = [rec.op.backward_segments(xp, rec.ins[0], rec.counts, rec.out, g,
                                                  rec.attrs, len(rec.nodes))]
        elif rec.together:  # one gather read every position: one gradient, node after node
            arg_grads = [rec.op.backward_together(xp, rec.ins[0], rec.out, g, rec.attrs, len(rec.nodes))]
        else:
            arg_grads = rec.op.backward(xp, rec.ins, rec.out, g, rec.attrs, len(rec.nodes), rec.needs)
        stats.batches += 1
        for source, need, grad in zip(rec.sources, rec.needs, arg_grads):
            if not need or grad is None:
                continue
            if type(grad) is WeightGradient and defer_weight_grads:
                weight_grads.setdefault(source[1], []).append(grad)
                continue
            _accumulate(graph, mem, grads, reached, source, grad, stats)
    for node, terms in weight_grads.items():
        _add_weight_gradient(xp, graph.param_of_node[node].grad_array(), terms)
    if graph.keep_gradients:  # every node's gradient, for whoever asked (batchviz.dynet)
        graph.gradients = (first_base, all_grads.copy())
    POOL.give(all_grads)
    stats.host_to_device = state.host_to_device - h2d
    stats.device_to_host = state.device_to_host - d2h
    stats.seconds = time.perf_counter() - t0
    if graph.last_stats is None:
        graph.last_stats = RunStats(graph.strategy.name)
    graph.last_stats.backward = stats
    set_last(graph.last_stats)


def _add_weight_gradient(xp, target, terms) -> None:
    """``target += sum_k g_k^T x_k`` as one GEMM over the stacked rows of every term."""
    if len(terms) == 1:
        target += terms[0].value(xp)
        return
    g = _stacked(xp, [t.g for t in terms])
    x = _stacked(xp, [t.x for t in terms])
    target += g.T @ x
    POOL.give(g)
    POOL.give(x)


def _stacked(xp, blocks: list):
    """``xp.concatenate(blocks)`` in memory from the arena pool (given back by the caller):
    the stacks of an LSTM's weight gradients are megabytes, and fresh ones would fault
    their pages in on every backward pass."""
    rows = sum(b.shape[0] for b in blocks)
    width = blocks[0].shape[1]
    out = POOL.take(rows * width).reshape(rows, width)
    return xp.concatenate(blocks, out=out)


def _accumulate(graph, mem, grads, reached, source, grad, stats) -> None:
    """Add one argument position's gradient to where the arguments live."""
    kind = source[0]
    if kind == SHARED:
        target = graph.param_of_node[source[1]].grad_array()
        if type(grad) is WeightGradient:
            grad = grad.value(state.xp)
        if isinstance(grad, SparseRows):
            scatter_add(target, grad.rows, grad.values)
        else:
            target += grad
        return
    for b in source[-1]:  # the batches that computed these arguments now have a gradient
        if b >= 0:
            reached[b] = 1
    if kind == STRIDED:  # add where the arguments live, through the same strided view
        _, k, start, n, size, step, _ = source
        target = strided_view(state.xp, grads[k], start, n, size, step)
        if type(grad) is BlockGradient:
            target.reshape(grad.shape)[:, grad.lo:grad.hi] += grad.values
        else:
            target += grad.reshape(n, size)
        return
    if type(grad) is BlockGradient:
        if kind == VIEW:  # add into the block's rows where the argument lives
            _, k, start, length, _ = source
            grads[k][start:start + length].reshape(grad.shape)[:, grad.lo:grad.hi] += grad.values
            return
        grad = grad.dense(state.xp)
    flat = grad.reshape(-1)
    if kind == VIEW:
        _, k, start, length, _ = source
        grads[k][start:start + length] += flat
        return
    if kind == COPY:
        _, k, index, width, unique, _ = source
        target = grads[k]
        if width > 1:  # whole rows (see memory.rows_view)
            target, flat = rows_view(target, width), flat.reshape(-1, width)
        if unique:
            target[index] += flat
        else:
            scatter_add(target, index, flat)
        stats.copies += 1
        return
    _, nodes, sizes, block, groups = source[:5]
    if groups is not None:  # nodes of several runs, read arena by arena: added back the same way
        rows = flat.reshape(len(nodes), -1)
        unique = len(set(nodes)) == len(nodes)
        for k, at, index in groups:
            values = rows[at].reshape(-1)
            if unique:
                grads[k][index] += values
            else:
                scatter_add(grads[k], index, values)
        stats.copies += 1
        return
    # STACK: node by node (parameters among the arguments)
    offset = 0
    for j, node in enumerate(nodes):
        size = sizes if isinstance(sizes, int) else sizes[j]
        piece = flat[offset:offset + size]
        offset += size
        address = mem.block_address(node, block)
        if address < 0:
            param = graph.param_of_node[node]
            param.grad_array()[...] += piece.reshape(param.shape)
        else:
            k = mem.arena_of(address)
            start = address - mem.arenas[k][0]
            grads[k][start:start + size] += piece
    stats.copies += 1
