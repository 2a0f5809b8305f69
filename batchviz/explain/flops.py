"""Floating-point work per node, for the cost model: the same for every strategy, since
batching changes how many kernels run, not how much arithmetic they do."""
from __future__ import annotations

import numpy as np

from .arrays import GraphArrays

#: ops whose work is matrix products ``W @ x``, and which argument positions hold a ``W``
#: (each followed by its ``x``)
_PRODUCT_POSITIONS = {"matmul": lambda pos: pos == 0, "affine": lambda pos: pos % 2 == 1}


def total_flops(graph, a: GraphArrays) -> float:
    """Matrix products count 2 flops per multiply-add (``2 * |W| * columns of x``);
    every other node one per element it reads or writes."""
    scheduled = ~a.is_param
    touched = a.size + np.bincount(a.arg_user, weights=a.size[a.arg_flat], minlength=a.n)
    infos = graph.sigtab.infos
    is_product = np.zeros(a.n, dtype=bool)
    total = 0.0
    for op_name, is_w in _PRODUCT_POSITIONS.items():
        sigs = [s for s, info in enumerate(infos) if info.op.name == op_name]
        if not sigs:
            continue
        mine = np.isin(a.sig, sigs) & scheduled
        is_product |= mine
        w_entries = np.flatnonzero(mine[a.arg_user] & is_w(a.arg_pos))
        w, x = a.arg_flat[w_entries], a.arg_flat[w_entries + 1]
        rows_of_x = np.fromiter((graph.shapes[i][0] for i in x.tolist()), dtype=np.int64,
                                count=len(x))
        total += float((2.0 * a.size[w] * (a.size[x] // np.maximum(rows_of_x, 1))).sum())
    return total + float(touched[scheduled & ~is_product].sum())
