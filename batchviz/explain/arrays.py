"""A graph's node lists as NumPy arrays, so that a 100k-node graph is analysed in C loops.

``explain`` looks at every node several times (three schedules' memory layouts, the lower
bound, the flop count); doing that in Python would cost more than building the graph did.
The arrays are a read-only copy: the graph is never changed.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from ..execute.memory import size_of


@dataclass
class GraphArrays:
    n: int
    sig: np.ndarray          # signature per node
    depth: np.ndarray        # depth per node
    size: np.ndarray         # number of elements per node
    is_param: np.ndarray     # parameters are never scheduled (done from the start)
    elementwise: np.ndarray  # per node: its op reads flat blocks (the executor's sizes rule)
    arg_ptr: np.ndarray      # node i's arguments are arg_flat[arg_ptr[i]:arg_ptr[i + 1]]
    arg_flat: np.ndarray     # argument node ids, node after node
    arg_user: np.ndarray     # per entry of arg_flat: the node using it
    arg_pos: np.ndarray      # per entry: its argument position
    arg_shared: np.ndarray   # per entry: a shared position of its user's signature (not gathered)

    @property
    def scheduled(self) -> np.ndarray:
        return np.flatnonzero(~self.is_param)


def graph_arrays(graph) -> GraphArrays:
    n = len(graph.ops)
    args = graph.args
    lens = np.fromiter(map(len, args), dtype=np.int64, count=n)
    arg_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=arg_ptr[1:])
    n_entries = int(arg_ptr[-1])
    arg_flat = np.fromiter(chain.from_iterable(args), dtype=np.int64, count=n_entries)
    arg_user = np.repeat(np.arange(n, dtype=np.int64), lens)
    arg_pos = np.arange(n_entries, dtype=np.int64) - np.repeat(arg_ptr[:-1], lens)

    sig = np.fromiter(graph.sigs, dtype=np.int64, count=n)
    infos = graph.sigtab.infos
    sig_elementwise = np.array([bool(info.op.elementwise) for info in infos], dtype=bool)
    # shared argument positions, encoded as signature * width + position
    width = int(arg_pos.max()) + 1 if n_entries else 1
    shared_codes = [s * width + p for s, info in enumerate(infos) for p in info.shared if p < width]
    arg_shared = np.isin(sig[arg_user] * width + arg_pos, np.asarray(shared_codes, dtype=np.int64))

    is_param = np.zeros(n, dtype=bool)
    if graph.param_of_node:
        is_param[np.fromiter(graph.param_of_node, dtype=np.int64)] = True
    return GraphArrays(
        n=n, sig=sig, depth=np.fromiter(graph.depths, dtype=np.int64, count=n),
        size=np.fromiter(map(size_of, graph.shapes), dtype=np.int64, count=n),
        is_param=is_param, elementwise=sig_elementwise[sig], arg_ptr=arg_ptr,
        arg_flat=arg_flat, arg_user=arg_user, arg_pos=arg_pos, arg_shared=arg_shared)
