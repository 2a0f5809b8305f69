"""Floating-point work per node, for the cost model: the same for every strategy, since
batching changes how many kernels run, not how much arithmetic they do."""
from __future__ import annotations

import numpy as np

from ..plan.arrays import GraphArrays

#: ops whose work is matrix products ``W @ x``: the first argument position holding a ``W``
#: and the stride to the next one (each ``W`` is followed by its ``x``)
_PRODUCT_POSITIONS = {"matmul": (0, 1), "affine": (1, 2)}


def total_flops(graph, a: GraphArrays) -> float:
    """Matrix products count 2 flops per multiply-add (``2 * |W| * columns of x``);
    every other node one per element it reads or writes."""
    scheduled = ~a.is_param
    infos = graph.sigtab.infos
    is_product = np.zeros(a.n, dtype=bool)
    products, product_reads = 0, 0
    for op_name, (first, stride) in _PRODUCT_POSITIONS.items():
        sigs = [s for s, info in enumerate(infos) if info.op.name == op_name]
        if not sigs:
            continue
        mine = np.isin(a.sig, sigs) & scheduled
        is_product |= mine
        for p, users, entry in a.by_position(np.flatnonzero(mine)):
            product_reads += int(a.size[a.arg_flat[entry]].sum())
            if p >= first and (p - first) % stride == 0:
                has_x = a.arity[users] > p + 1
                w, x = a.arg_flat[entry[has_x]], a.arg_flat[entry[has_x] + 1]
                products += int((2 * a.size[w] * (a.size[x] // np.maximum(a.rows[x], 1))).sum())
    # every other node: its own elements and its arguments' (each node's size times the
    # number of times it is read, minus the reads of the products)
    reads = int(a.size @ np.bincount(a.arg_flat, minlength=a.n)) - product_reads
    return float(products) + float(int(a.size[scheduled & ~is_product].sum()) + reads)
