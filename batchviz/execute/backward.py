"""The backward pass: the plans of the forward runs, walked in reverse.

The gradient of a batch's outputs is one segment of a gradient buffer laid out like the
arenas, so it is one slice. The op's backward kernel runs once for the whole batch, and
each argument position's gradient is added back where the arguments live, by the read
that brought them (:func:`add_gradient`): through the same view, or scattered through the
index of the same gather (App. B's "dense-to-sparse" copy). A batch runs only once the
loss reaches it, which its users' reads record as they add into it. Where no gradient has
reached a position's arguments yet, a kernel that can (``Op.writes_gradients``) writes the
position's gradient there itself, instead of making it apart to be added into zeros.
"""
from __future__ import annotations

from . import numerics
from ..backend import scatter_add
from ..ops.gradients import BlockGradient, RowSums, SparseRows, WeightGradient
from ..plan.reads import Concat, Copy, CopyFromArenas, Shared, Stack, Strided, View
from .memory import POOL, batch_outputs, rows_view, strided_view


def execute_backward(graph, loss: int, xp, keep: bool = False) -> tuple:
    """Add d(loss)/d(parameter) into every parameter's gradient. Returns ``(batches,
    scatters, kept)``: how many batches ran, how many reads' gradients went back through a
    copy's index or piece by piece, and with ``keep`` a copy of every node's gradient (one
    flat array laid out like the arenas, from the first arena's base), else None."""
    layout, runs = graph.layout, graph.batch_runs
    if layout.address[loss] < 0:
        return 0, 0, None
    buffer, grads = _gradient_arenas(layout)
    reached = bytearray(len(layout.batches))
    arena, offset = layout.where(loss)
    grads[arena][offset] = 1.0
    reached[layout.batch_of[loss]] = 1
    blocks = [None] * len(reached)  # per batch, its outputs' gradient array, once made
    weight_terms: dict[int, list] = {}  # a shared W's (or bias's) node -> its gradient terms
    defer = getattr(graph.strategy, "batches_weight_gradients", True)
    check = numerics.checking(graph)  # asked once per pass: nothing is paid per batch when off
    ran = scatters = 0
    for batch in reversed(layout.batches):
        if not reached[batch.index] or not batch.requires_grad:
            continue
        ran += 1
        run = runs[batch.index]
        into = None
        if batch.op.writes_gradients and batch.counts is None and not batch.together:
            into = _untouched_targets(layout.batches, batch, run, grads, reached, blocks, xp)
        g = _gradient_block(blocks, grads, layout.batches, batch.index, xp)
        arg_grads = backward_kernel(batch, run, g, xp, into)
        if check:
            numerics.check_backward(graph, batch, arg_grads, xp)
        # position by position, indexing the batch's tuples (compiled: in C, without a zip)
        reads, needs, origins, sources = batch.reads, batch.needs, batch.origins, batch.sources
        indices = run.indices
        for position in range(len(reads)):
            grad = arg_grads[position]
            if not needs[position] or grad is None:
                continue
            if into is not None and grad is into[position]:
                continue  # written in place (and its batch marked reached when handed out)
            read = reads[position]
            if defer and (type(grad) is WeightGradient or type(grad) is RowSums):
                terms = weight_terms.get(read.node)
                if terms is None:
                    weight_terms[read.node] = [grad]
                else:
                    terms.append(grad)
                continue
            for b in origins[position]:  # the batches that computed these arguments now
                if b >= 0:               # have a gradient
                    reached[b] = 1
            whole = _gradient_block(blocks, grads, layout.batches, sources[position], xp)
            scatters += add_gradient(graph, grads, read, grad, indices[position], xp, whole)
    for node, terms in weight_terms.items():
        _add_weight_gradient(xp, graph.param_of_node[node], terms)
    if check:
        numerics.check_parameters(graph, weight_terms, xp)
    kept = buffer.copy() if keep else None
    POOL.give(buffer)
    return ran, scatters, kept


def _gradient_arenas(layout) -> tuple:
    """One zeroed buffer laid out like the arenas, and each arena's slice of it (a parser's
    graph has an arena per forward run: thousands of small ones)."""
    first = layout.bases[0]
    buffer = POOL.take(layout.next_address - first)
    buffer.fill(0.0)
    ends = layout.bases[1:] + [layout.next_address]
    return buffer, [buffer[base - first:end - first] for base, end in zip(layout.bases, ends)]


def _gradient_block(blocks: list, grads, batches, b: int, xp):
    """The gradient of the outputs of batch number ``b`` (None for -1): its segment of the
    gradient arenas in the shape its kernel wrote them (as
    :func:`~batchviz.execute.memory.batch_outputs` cuts it), made once a pass and kept in
    ``blocks``, where the reads of all of its outputs (``BatchPlan.sources``) find it."""
    if b < 0:
        return None
    g = blocks[b]
    if g is None:
        batch = batches[b]
        g = blocks[b] = batch_outputs(xp, grads[batch.arena], batch)
    return g


def backward_kernel(batch, run, g, xp, into=None) -> list:
    """The gradients of one batch's argument positions, from its outputs' gradient ``g``
    (``into``: where the kernel may write them, see ``_untouched_targets``)."""
    op, n, attrs = batch.op, len(batch.nodes), batch.attrs
    if batch.counts is not None:  # nodes of different numbers of arguments
        return [op.backward_segments(xp, run.ins[0], batch.counts, run.out, g, attrs, n)]
    if batch.together:  # one read of every position: one gradient, node after node
        return [op.backward_together(xp, run.ins[0], run.out, g, attrs, n)]
    if into is not None:
        return op.backward(xp, run.ins, run.out, g, attrs, n, batch.needs, into)
    return op.backward(xp, run.ins, run.out, g, attrs, n, batch.needs)


def _untouched_targets(batches, batch, run, grads, reached, gradients, xp) -> list:
    """Per argument position, where its gradient goes if no gradient has reached there yet,
    else None: a view read of arguments that one batch computed, a batch that nothing has
    added to so far (its gradient is zeros), shaped like the kernel's block (that batch's
    own gradient array, ``_gradient_block``, where the read takes all of its outputs).
    Handing one out marks that batch reached: another position of the same batch (which
    the kernel may not write) then finds it taken and adds, as every read does."""
    reads, needs, origins, blocks = batch.reads, batch.needs, batch.origins, run.ins
    sources = batch.sources
    into = [None] * len(reads)
    for position in range(len(reads)):
        read = reads[position]
        if type(read) is not View or not needs[position]:
            continue
        origin = origins[position]
        if len(origin) != 1:
            continue
        b = origin[0]
        if b < 0 or reached[b]:
            continue
        reached[b] = 1
        if sources[position] >= 0:  # (then b is that batch)
            into[position] = _gradient_block(gradients, grads, batches, b, xp)
            continue
        start = read.start
        target = grads[read.arena][start:start + read.length]
        block = blocks[position]
        into[position] = target if block.ndim == 1 else target.reshape(block.shape)
    return into


def add_gradient(graph, grads, read, grad, index, xp, whole=None) -> bool:
    """Add one argument position's gradient to where its arguments live, as ``read`` read
    them (``index``: what a copy gathered with; ``whole``: the gradient array of the batch
    whose outputs it read whole, see ``_gradient_block``, else None). The kinds are
    told apart as :func:`~batchviz.execute.forward.read_block` tells them. Returns whether
    the gradient went back through a copy's index or piece by piece (the reads that
    copied forward)."""
    kind = type(read)
    if kind is View:
        target = whole
        if target is None or target.shape != grad.shape:
            start = read.start  # (fields by name: unpacking a NamedTuple iterates over it)
            target = grads[read.arena][start:start + read.length]
            if type(grad) is BlockGradient:
                target = target.reshape(grad.shape)
            elif grad.ndim > 1:  # (flat: a view where it can be, as reshape(-1), in fewer steps)
                grad = grad.ravel()
        if type(grad) is BlockGradient:  # only its band of rows
            target[:, grad.lo:grad.hi] += grad.values
        else:
            target += grad
        return False
    if kind is Shared:
        _add_to_parameter(graph.param_of_node[read.node], grad, xp)
        return False
    if kind is Strided:
        arena, start, n, size, step = read
        target = strided_view(xp, grads[arena], start, n, size, step)
        if type(grad) is BlockGradient:
            target.reshape(grad.shape)[:, grad.lo:grad.hi] += grad.values
        else:
            target += grad.reshape(n, size)
        return False
    if kind is Copy:
        _scatter(grads[read.arena], index, _dense(grad, xp), read.unique)
    elif kind is Concat:
        flat, at = _dense(grad, xp).reshape(-1), 0
        for start, length in read.pieces:  # slice by slice: a batch read twice adds twice
            grads[read.arena][start:start + length] += flat[at:at + length]
            at += length
    elif kind is CopyFromArenas:
        rows = _dense(grad, xp).reshape(read.n, -1)
        for (arena, _, _), (at, arena_index, width) in zip(read.groups, index):
            _scatter(grads[arena], (arena_index, width), rows[at], read.unique)
    elif kind is Stack:
        _add_to_pieces(graph, grads, read.pieces, _dense(grad, xp).reshape(-1))
    else:
        return False
    return True


def _dense(grad, xp):
    return grad.dense(xp) if type(grad) is BlockGradient else grad


def _scatter(target, gathered, values, unique: bool) -> None:
    """``target[index] += values`` through a copy's ``(index, width)`` (whole rows when
    ``width > 1``), ``values`` the gradient block in any shape (reshaped once, here, to
    what the index addresses)."""
    index, width = gathered
    if width > 1:
        target, flat = rows_view(target, width), values.reshape(-1, width)
    else:
        flat = values.reshape(-1)
    if unique:
        target[index] += flat
    else:
        scatter_add(target, index, flat)


def _add_to_pieces(graph, grads, pieces, flat) -> None:
    """A :class:`Stack`'s gradient, piece by piece (a parameter's into its gradient)."""
    at = 0
    for arena, start, size in pieces:
        piece = flat[at:at + size]
        at += size
        if arena is None:
            param = graph.param_of_node[start]
            target = param.grad_array()
            target += piece.reshape(param.shape)
        else:
            grads[arena][start:start + size] += piece


def _add_to_parameter(param, grad, xp) -> None:
    """A parameter's gradient: a few rows of a lookup table (which remembers them), or the
    whole array (written, where it is the parameter's first of the step)."""
    if type(grad) is SparseRows:
        param.add_to_rows(grad.rows, grad.values)
        return
    target, new = param.grad_to_write()
    if type(grad) is WeightGradient or type(grad) is RowSums:
        if new:  # the product written where it belongs: no array made only to be copied
            grad.value(xp, out=target)
            return
        grad = grad.value(xp)
    if new:
        target[...] = grad
    else:
        target += grad


def _add_weight_gradient(xp, param, terms) -> None:
    """``grad += sum_k g_k^T x_k`` for ``param`` as one product over the stacked rows of
    every term, and ``grad += sum_k rowsum(g_k)`` for a bias (``RowSums``) as one sum
    over them (written straight into the gradient where it is the parameter's first of
    the step)."""
    target, new = param.grad_to_write()
    for kind in (WeightGradient, RowSums):  # (a parameter may be a W and a bias at once)
        same = [t for t in terms if type(t) is kind]
        if same:
            _add_terms(xp, target, new, same)
            new = False


def _add_terms(xp, target, new: bool, terms) -> None:
    """The sum of ``terms`` (all of one kind) added into ``target`` (written, when ``new``)."""
    if len(terms) == 1:
        if new:
            terms[0].value(xp, out=target)
        else:
            target += terms[0].value(xp)
        return
    g = _stacked(xp, [t.g for t in terms])
    if type(terms[0]) is RowSums:
        if new:
            g.sum(axis=0, out=target)  # (the array's method: xp.sum is Python around it)
        else:
            target += g.sum(axis=0)
        POOL.give(g)
        return
    x = _stacked(xp, [t.x for t in terms])
    if new:
        xp.matmul(g.T, x, out=target)
    else:
        target += g.T @ x
    POOL.give(g)
    POOL.give(x)


def _stacked(xp, blocks: list):
    """``xp.concatenate(blocks)`` in memory from the arena pool (given back by the caller):
    the stacks of an LSTM's weight gradients are megabytes, and fresh ones would fault
    their pages in on every backward pass."""
    rows = 0
    for block in blocks:
        rows += len(block)  # (its first axis, without making its shape's tuple)
    first = blocks[0]
    shape = (rows,) + first.shape[1:]
    out = POOL.take(rows * (first.size // len(first))).reshape(shape)
    return xp.concatenate(blocks, out=out)
