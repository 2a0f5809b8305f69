"""Floating-point work per node, for the cost model: the same for every strategy, since
batching changes how many kernels run, not how much arithmetic they do."""
from __future__ import annotations

import numpy as np

from ..execute.memory import size_of
from .arrays import GraphArrays

#: ops whose work is matrix products: 2 * |W| * columns per ``W @ x`` term
_PRODUCT_TERMS = {"matmul": lambda args: [(args[0], args[1])],
                  "affine": lambda args: [(args[i], args[i + 1]) for i in range(1, len(args), 2)]}


def total_flops(graph, a: GraphArrays) -> float:
    """Matrix products count 2 flops per multiply-add; everything else one per element read
    or written."""
    scheduled = ~a.is_param
    touched = a.size.astype(np.float64)
    np.add.at(touched, a.arg_user, a.size[a.arg_flat].astype(np.float64))
    product_sigs = [s for s, info in enumerate(graph.sigtab.infos) if info.op.name in _PRODUCT_TERMS]
    is_product = np.isin(a.sig, product_sigs) & scheduled
    total = float(touched[scheduled & ~is_product].sum())
    shapes, ops, args = graph.shapes, graph.ops, graph.args
    for i in np.flatnonzero(is_product).tolist():
        for w, x in _PRODUCT_TERMS[ops[i].name](args[i]):
            columns = size_of(shapes[x]) // max(shapes[x][0], 1)
            total += 2.0 * size_of(shapes[w]) * columns
    return total
