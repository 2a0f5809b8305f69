"""Which arguments a schedule copies: the executor's memory layout, simulated.

The executor gives every batch one contiguous segment of memory, batches one after another
in schedule order (§3.3), and a later batch reads an argument position as a *view* when its
argument nodes lie back to back in batch order (or, for a kernel with a batch axis or for
scalars, evenly spaced: a strided view), else it copies them with one gather kernel.
Here the same layout is computed from addresses alone - no arrays - and every argument
position is classified by :func:`batchviz.execute.memory.gather_kind`, the very function the
executor decides with, so a trace reports exactly the copies a run from scratch makes.
"""
from __future__ import annotations

from ..execute.memory import COPY, STACK, STRIDED, VIEW, gather_kind, size_of
from .data import ArgumentRead


def _one_arena(address: int) -> int:
    return 0  # a run from scratch allocates one arena for the whole schedule


def argument_reads(graph, batches: list, itemsize: int) -> list:
    """Per batch, the list of :class:`ArgumentRead`: one per argument position, or one for
    them all where the op reads its arguments with one gather (``Op.one_gather``)."""
    shapes, args, sigs, sigtab = graph.shapes, graph.args, graph.sigs, graph.sigtab
    address = [-1] * len(shapes)  # parameters stay at -1: they live in the model
    block_stride = {}             # nodes that keep several blocks: their batch's values' size
    next_free = 0
    for batch in batches:
        first = next_free
        for i in batch:
            address[i] = next_free
            next_free += size_of(shapes[i])
        blocks = sigtab[sigs[batch[0]]].blocks  # laid out block by block (Op.storage_blocks)
        if blocks != 1:
            block_stride.update(dict.fromkeys(batch, next_free - first))
            next_free += (blocks - 1) * (next_free - first)

    result = []
    for batch in batches:
        first = batch[0]
        info = sigtab[sigs[first]]
        elementwise = info.op.elementwise
        out_sizes = None
        if elementwise:  # the executor's rule: element-wise kernels read flat blocks
            out_sizes = [size_of(shapes[i]) for i in batch]
            if all(s == out_sizes[0] for s in out_sizes):
                out_sizes = out_sizes[0]
        if info.op.one_gather and isinstance(out_sizes, int):  # one read of every position
            nodes = [a for i in batch for a in args[i]]
            result.append([_read(graph, 0, nodes, out_sizes, [address[a] for a in nodes], False,
                                 address, itemsize,
                                 positions=max(len(args[i]) for i in batch))])
            continue
        reads = []
        for j in range(len(args[first])):
            if j in info.shared:
                reads.append(ArgumentRead(j, "shared", 0, f"{_name(graph, args[first][j])} read once"))
                continue
            nodes = [args[i][j] for i in batch]
            read = info.reads.get(j, 0)  # which block of what the arguments keep: their value, or another
            sizes = out_sizes if elementwise else size_of(shapes[nodes[0]])
            locs = [address[a] + read * block_stride.get(a, 0) for a in nodes]
            reads.append(_read(graph, j, nodes, sizes, locs, not elementwise, address, itemsize))
        result.append(reads)
    return result


def _read(graph, position: int, nodes: list, sizes, locs: list, batch_axis: bool, address: list,
          itemsize: int, positions: int = 1) -> ArgumentRead:
    """How the executor reads ``nodes`` (at addresses ``locs``, ``sizes`` long): the
    argument ``position`` of a batch (or, with ``positions``, that many positions at once)."""
    kind = gather_kind(locs, sizes, _one_arena, batch_axis)
    if kind == VIEW:
        return ArgumentRead(position, "view", positions=positions)
    if kind == STRIDED:
        return ArgumentRead(position, "view", 0, "strided: evenly spaced, no copy", positions)
    if kind == COPY:
        total = len(nodes) * sizes if isinstance(sizes, int) else sum(sizes)
        return ArgumentRead(position, "copy", total * itemsize, "gather", positions)
    assert kind == STACK
    total = sum(size_of(graph.shapes[a]) for a in nodes)
    params = sorted({_name(graph, a) for a in nodes if address[a] < 0})
    return ArgumentRead(position, "copy", total * itemsize,
                        "stacked node by node: parameter " + ", ".join(params)
                        + " among the arguments", positions)


def _name(graph, node: int) -> str:
    param = graph.param_of_node.get(node)
    if param is not None and getattr(param, "name", None):
        return f"{param.name}#{node}"
    return f"node {node}"
