# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled twins of the plan's steps per batch (:mod:`batchviz.plan`; see
:mod:`batchviz.twins`).

Planning a run touches every argument of every node: each batch's attributes and
arguments are gathered, each argument position's nodes are looked up in the layout, and
the rule of :func:`batchviz.plan.reads.read_at` decides how the position is read. The
readable versions do that with one C call per step (``itemgetter``, ``zip``, ``map``)
and a few Python calls per argument position; here the loops over nodes are C loops over
the graph's lists, and the common reads (a whole earlier batch, arguments back to back or
evenly spaced in one arena, a gather) are decided in C. The rare cases (parameters among
the arguments, arguments in several arenas or of several sizes, a batch that reads all its
arguments at once) call the readable helpers, so those steps exist once.

Change :func:`batchviz.plan.layout.place_batches` or
:func:`batchviz.plan.planner.plan_batch` (or the read rule), change its twin here:
``tests/test_compiled_twins.py`` compares the plans of both on random graphs.
"""
from cpython.list cimport PyList_GET_ITEM, PyList_SET_ITEM
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.set cimport PySet_Add
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport int64_t

import numpy as np

cdef object BatchPlan = None   # what the plan's modules define, imported on first use
cdef object Shared, View, Strided, Copy, size_of
cdef object read_at, whole_batches, read_together, close_region


cdef inline plan_names():
    global BatchPlan, Shared, View, Strided, Copy, size_of
    global read_at, whole_batches, read_together, close_region
    if BatchPlan is not None:
        return
    from batchviz.plan.layout import _close_region
    from batchviz.plan.planner import BatchPlan as batch_plan, _read_together
    from batchviz.plan.reads import Copy, Shared, Strided, View, _whole_batches, read_at
    from batchviz.signature import size_of
    whole_batches, read_together, close_region = _whole_batches, _read_together, _close_region
    BatchPlan = batch_plan


# --- batchviz/plan/layout.py -----------------------------------------------------------

def place_batches(graph, batches, layout, Py_ssize_t start):
    """Twin of :func:`batchviz.plan.layout.place_batches`: the same segments, with every
    node's address and batch written as it is placed."""
    plan_names()
    cdef list shapes = graph.shapes, sigs = graph.sigs, sigtab = graph.sigtab.infos
    layout.grow(len(shapes))
    cdef list address = layout.address, batch_of = layout.batch_of
    cdef Py_ssize_t next_free = layout.next_address, first_free = next_free
    cdef Py_ssize_t first_batch = len(layout.batches), k = 0, n, i, size, node, total = 0
    cdef list sizes = [], strides = [0] * len(batches)
    cdef list region = None   # [its first address, planes, batches], as the readable one
    for batch in batches:
        total += len(batch)
    if total >= 64:   # the readable version writes the per-node lists' tails whole
        minus_one = -1
        for i in range(start, len(address)):
            set_item(address, i, minus_one)
            set_item(batch_of, i, minus_one)
    for batch in batches:
        n = len(batch)
        info = sigtab[<Py_ssize_t>sigs[<Py_ssize_t>batch[0]]]
        blocks = info.blocks
        batch_number = first_batch + k
        if blocks != 1:   # nodes that keep more than their value (Op.storage_blocks)
            if region is None:
                region = [next_free, blocks, []]
            region[1] = max(region[1], blocks)
            region[2].append(k)
            size = size_of(shapes[<Py_ssize_t>batch[0]])
            next_free = place_evenly(batch, n, size, next_free, address, batch_of, batch_number)
            sizes.append(size)
            k += 1
            continue
        if region is not None:
            next_free = close_region(region, next_free, strides)
            region = None
        if n == 1:
            size = size_of(shapes[<Py_ssize_t>batch[0]])
            next_free = place_evenly(batch, 1, size, next_free, address, batch_of, batch_number)
            sizes.append(size)
        elif info.op.elementwise and not same_shapes(batch, n, shapes):
            several = several_sizes(batch, n, shapes)
            if several is None:   # shapes differ, sizes do not
                size = size_of(shapes[<Py_ssize_t>batch[0]])
                next_free = place_evenly(batch, n, size, next_free, address, batch_of,
                                         batch_number)
                sizes.append(size)
            else:   # element-wise, of several sizes
                for i in range(n):
                    node = batch[i]
                    set_item(address, node, next_free)
                    set_item(batch_of, node, batch_number)
                    next_free += <Py_ssize_t>several[i]
                sizes.append(several)
        else:
            size = size_of(shapes[<Py_ssize_t>batch[0]])
            next_free = place_evenly(batch, n, size, next_free, address, batch_of, batch_number)
            sizes.append(size)
        k += 1
    if region is not None:
        next_free = close_region(region, next_free, strides)
    arena = layout.new_arena(next_free - first_free)
    return arena, sizes, strides


cdef inline void set_item(list values, Py_ssize_t i, value):
    """``values[i] = value``."""
    old = <object>PyList_GET_ITEM(values, i)
    Py_INCREF(value)
    PyList_SET_ITEM(values, i, value)
    Py_DECREF(old)


cdef Py_ssize_t place_evenly(batch, Py_ssize_t n, Py_ssize_t size, Py_ssize_t next_free,
                             list address, list batch_of, batch_number) except -1:
    """Lay ``batch``'s ``n`` nodes of ``size`` elements out back to back from ``next_free``;
    returns the first address after them."""
    cdef Py_ssize_t i
    for i in range(n):
        node = batch[i]
        set_item(address, node, next_free)
        set_item(batch_of, node, batch_number)
        next_free += size
    return next_free


cdef bint same_shapes(batch, Py_ssize_t n, list shapes) except -1:
    """Whether every node of ``batch`` has the first node's shape (``count`` in the readable
    version: equal objects or equal tuples)."""
    cdef Py_ssize_t i
    shape = shapes[<Py_ssize_t>batch[0]]
    for i in range(1, n):
        other = shapes[<Py_ssize_t>batch[i]]
        if other is not shape and other != shape:
            return False
    return True


cdef object several_sizes(batch, Py_ssize_t n, list shapes):
    """Each node's size, or None when they are all the same size."""
    sizes = [size_of(shapes[<Py_ssize_t>batch[i]]) for i in range(n)]
    first = sizes[0]
    for size in sizes:
        if size != first:
            return sizes
    return None


# --- batchviz/plan/planner.py ----------------------------------------------------------

def plan_batch(graph, layout, batch, sizes, block_stride, bint every_gradient=False):
    """Twin of :func:`batchviz.plan.planner.plan_batch`."""
    plan_names()
    cdef tuple nodes = tuple(batch)
    cdef Py_ssize_t n = len(nodes), j, arity
    cdef list all_args = graph.args, shapes = graph.shapes
    first = nodes[0]
    sig = graph.sigs[first]
    info = graph.sigtab[sig]
    op = info.op
    cdef tuple attrs = gather(graph.attrs, nodes, n), args = gather(all_args, nodes, n)
    cdef bint is_int = isinstance(sizes, int)
    cdef bint together = op.one_gather and is_int
    cdef list positions, reads, in_shapes
    if together:
        positions = [all_of(args, n)]
        reads, in_shapes, counts = read_together(layout, args, positions[0], sizes)
    else:
        arity = min_arity(args, n)
        positions = [position(args, n, j) for j in range(arity)]
        reads = read_positions(graph, layout, info, positions, sizes)
        counts = None
        in_shapes = kernel_shapes(shapes, info, args, reads, sizes, is_int, n)
    cdef list batches = layout.batches, batch_of = layout.batch_of
    origins = tuple([origin(batch_of, read, p) for read, p in zip(reads, positions)])
    needs = tuple([type(read) is Shared or needs_gradient(batches, o)
                   for read, o in zip(reads, origins)])
    arena, start = layout.where(first)
    length = n * sizes if is_int else sum(sizes)
    out_shape = (length,) if op.elementwise else (n,) + shapes[first]
    if info.blocks != 1:   # laid out block by block: (blocks, n) + shape, block_stride apart
        out_shape = (info.blocks,) + out_shape
    return BatchPlan(len(batches), sig, op, nodes, attrs, arena, start, length, sizes,
                     out_shape, block_stride, tuple(reads), tuple(in_shapes), needs, origins,
                     bool(info.shared) or any(needs) or every_gradient, together, counts)


cdef tuple gather(list values, tuple nodes, Py_ssize_t n):
    """``tuple(values[node] for node in nodes)``."""
    cdef tuple out = PyTuple_New(n)
    cdef Py_ssize_t i
    for i in range(n):
        value = values[<Py_ssize_t>nodes[i]]
        Py_INCREF(value)
        PyTuple_SET_ITEM(out, i, value)
    return out


cdef Py_ssize_t min_arity(tuple args, Py_ssize_t n) except -1:
    """The fewest arguments of a node (where the readable version's ``zip`` stops)."""
    cdef Py_ssize_t i, arity = len(args[0])
    for i in range(1, n):
        arity = min(arity, len(args[i]))
    return arity


cdef tuple position(tuple args, Py_ssize_t n, Py_ssize_t j):
    """The nodes' arguments at position ``j``, in batch order."""
    cdef tuple out = PyTuple_New(n)
    cdef Py_ssize_t i
    for i in range(n):
        value = args[i][j]
        Py_INCREF(value)
        PyTuple_SET_ITEM(out, i, value)
    return out


cdef tuple all_of(tuple args, Py_ssize_t n):
    """Every argument of every node, node after node."""
    out = []
    cdef Py_ssize_t i
    for i in range(n):
        out.extend(args[i])
    return tuple(out)


cdef list read_positions(graph, layout, info, list positions, sizes):
    """Twin of :func:`batchviz.plan.planner._read_positions`."""
    cdef bint elementwise = info.op.elementwise
    cdef list shapes = graph.shapes, reads = []
    shared, block_of = info.shared, info.reads
    cdef Py_ssize_t j
    for j in range(len(positions)):
        nodes = <tuple>positions[j]
        if j in shared:
            reads.append(Shared(nodes[0]))
            continue
        size = sizes if elementwise else size_of(shapes[<Py_ssize_t>nodes[0]])
        block = block_of.get(j, 0) if block_of else 0
        reads.append(read_of(layout, nodes, size, not elementwise, block))
    return reads


cdef list kernel_shapes(list shapes, info, tuple args, list reads, sizes, bint is_int,
                        Py_ssize_t n):
    """Twin of :func:`batchviz.plan.planner._kernel_shapes`."""
    if info.op.elementwise:
        flat = (n * sizes if is_int else sum(sizes),)
        return [None if type(read) is Shared else flat for read in reads]
    return [None if type(read) is Shared else (n,) + shapes[<Py_ssize_t>a]
            for read, a in zip(reads, args[0])]


cdef tuple origin(list batch_of, read, tuple nodes):
    """Twin of :func:`batchviz.plan.planner._origin`."""
    kind = type(read)
    if kind is Shared:
        return ()
    if kind is View:
        last = nodes[len(nodes) - 1]
        return tuple(range(batch_of[<Py_ssize_t>nodes[0]], batch_of[<Py_ssize_t>last] + 1))
    owners = set()   # filled in the nodes' order, as set(map(...)) is
    cdef Py_ssize_t i
    for i in range(len(nodes)):
        PySet_Add(owners, batch_of[<Py_ssize_t>nodes[i]])
    return tuple(owners)


cdef bint needs_gradient(list batches, tuple origin) except -1:
    """Whether a batch among ``origin`` (or a parameter, -1) takes a gradient."""
    for b in origin:
        if b < 0 or batches[<Py_ssize_t>b].requires_grad:
            return True
    return False


# --- batchviz/plan/reads.py ------------------------------------------------------------

cdef object read_of(layout, tuple nodes, sizes, bint batch_axis, block):
    """:func:`batchviz.plan.reads.read_of`: the same shortcuts, then the rule."""
    cdef Py_ssize_t n = len(nodes)
    if n == 1:
        arena, start = layout.where(nodes[0], block)
        if arena is None:   # a parameter
            from batchviz.plan.reads import read_of as readable
            return readable(layout, nodes, sizes, batch_axis, block)
        return View(arena, start, sizes if isinstance(sizes, int) else sizes[0])
    cdef list batch_of = layout.batch_of
    owner = batch_of[<Py_ssize_t>nodes[0]]
    if owner >= 0:
        batch = layout.batches[owner]
        if batch.nodes == nodes:   # usually: a whole earlier batch, in its own order
            wanted = len(nodes) * sizes if isinstance(sizes, int) else sum(sizes)
            if wanted == batch.length:
                return View(batch.arena, batch.start + block * batch.block_stride,
                            batch.length)
        elif isinstance(sizes, int) and len(batch.nodes) < n:
            read = whole_batches(layout, nodes, sizes, block)
            if read is not None:
                return read
    if block or not isinstance(sizes, int):
        return read_at(layout, nodes, layout.addresses_of(nodes, block), sizes, batch_axis)
    return read_values(layout, nodes, n, sizes, batch_axis)


cdef object read_values(layout, tuple nodes, Py_ssize_t n, Py_ssize_t size,
                        bint batch_axis):
    """:func:`batchviz.plan.reads.read_at` for the values (block 0) of ``n`` >= 2 nodes of
    one size: the view, strided view or gather in C; the readable rule where a parameter is
    among them or they lie in several arenas."""
    cdef list address = layout.address, bases = layout.bases
    cdef Py_ssize_t *at = <Py_ssize_t *>PyMem_Malloc(n * sizeof(Py_ssize_t))
    cdef Py_ssize_t i, lowest, highest, step, first, base, arena
    cdef bint even
    if at == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            at[i] = address[<Py_ssize_t>nodes[i]]
        lowest = highest = at[0]
        for i in range(1, n):
            if at[i] < lowest:
                lowest = at[i]
            elif at[i] > highest:
                highest = at[i]
        if lowest >= 0:
            arena = layout.arena_of(lowest)
            if arena + 1 < len(bases) and highest >= <Py_ssize_t>bases[arena + 1]:
                lowest = -1   # in several arenas: the readable rule
        if lowest < 0:
            return read_at(layout, nodes, layout.addresses_of(nodes), size, batch_axis)
        base, first = bases[arena], at[0]
        step = at[1] - first
        even = step > 0
        for i in range(2, n):
            if not even:
                break
            even = at[i] == first + i * step
        if even:
            if step == size:
                return View(arena, first - base, n * size)
            if step > size and (batch_axis or size == 1):
                return Strided(arena, first - base, n, size, step)
        starts = np.empty(n, dtype=np.int64)
        fill(starts, at, n, base)
        return Copy(arena, starts, size, len(set(nodes)) == n)
    finally:
        PyMem_Free(at)


cdef void fill(int64_t[::1] starts, Py_ssize_t *at, Py_ssize_t n, Py_ssize_t base):
    cdef Py_ssize_t i
    for i in range(n):
        starts[i] = at[i] - base


TWINS = {
    "batchviz.plan.layout.place_batches": place_batches,
    "batchviz.plan.planner.plan_batch": plan_batch,
}
