"""The lower bound on the number of batches of any schedule.

Two nodes of one signature can share a batch only if neither depends on the other. So for
each signature, the longest dependency chain counted in nodes *of that signature* (other
nodes may sit between them) needs that many batches, whatever the strategy; nodes of
different signatures never share a batch, so the bound is the sum over signatures. (By
Mirsky's theorem the chain length is also enough for one signature alone; together the
signatures can interfere, so the bound may be out of reach.)

The chain length of signature ``s`` ending at node ``i`` is
``[sig(i) == s] + max over arguments a of chain_s(a)``. It is computed for all signatures
at once (a ``nodes x signatures`` matrix), depth level after depth level: arguments are
shallower than their users, so a level's arguments are final when the level is reached.

The matrix rows are the nodes sorted by depth, so that a level is a block of consecutive
rows, and inside a level by decreasing number of arguments, so that the nodes with a
``p``-th (scheduled) argument are the first rows of the block. A level is then a few NumPy
operations on slices: ``block[:c_p] = max(block[:c_p], chain[p-th arguments])`` for
``p = 0, 1, ...`` (most nodes have one or two), then ``+1`` in each node's own column.
"""
from __future__ import annotations

import numpy as np

from .arrays import GraphArrays

#: largest chain matrix (nodes x signatures) held at once; more signatures go in chunks
_MAX_CELLS = 32_000_000


def chain_bounds(a: GraphArrays) -> dict:
    """``{signature: longest dependency chain of its nodes}`` over the scheduled nodes."""
    nodes = a.scheduled
    if len(nodes) == 0:
        return {}
    node_sig, node_depth = a.sig[nodes], a.depth[nodes]
    sigs = np.flatnonzero(np.bincount(node_sig))
    bounds = dict.fromkeys(sigs.tolist(), 1)
    # a chain needs strictly increasing depths: signatures at one depth only have bound 1
    lowest = np.full(int(sigs[-1]) + 1, np.iinfo(np.int64).max)
    highest = np.full(int(sigs[-1]) + 1, -1)
    np.minimum.at(lowest, node_sig, node_depth)
    np.maximum.at(highest, node_sig, node_depth)
    candidates = sigs[highest[sigs] > lowest[sigs]]
    if len(candidates) == 0:
        return bounds

    levels = _Levels(a, nodes)
    dtype = _chain_dtype(a, nodes, candidates, len(levels.level_start))
    chunk = max(1, _MAX_CELLS // len(nodes))
    for c0 in range(0, len(candidates), chunk):
        cols = candidates[c0:c0 + chunk]
        column = np.full(int(a.sig.max()) + 1, -1, dtype=np.int64)
        column[cols] = np.arange(len(cols))
        bounds.update(zip(cols.tolist(), levels.longest_chains(column, len(cols), dtype).tolist()))
    return bounds


def _chain_dtype(a: GraphArrays, nodes: np.ndarray, candidates: np.ndarray, n_levels: int):
    """The smallest integer type that holds every chain length (the chain matrix is the
    analysis's largest array). A chain of signature ``s`` has strictly increasing depths,
    so it is no longer than the number of distinct depths of the nodes of ``s``."""
    width = int(a.depth.max()) + 1
    cells = (int(a.sig.max()) + 1) * width
    if cells <= 4 * len(nodes):   # a signatures x depths table is small: count exactly
        table = np.bincount(a.sig[nodes] * width + a.depth[nodes], minlength=cells)
        longest = int(np.count_nonzero(table.reshape(-1, width), axis=1)[candidates].max())
    else:
        longest = n_levels
    for dtype in (np.uint8, np.int16, np.int32):
        if longest <= np.iinfo(dtype).max:
            return dtype
    return np.int64


class _Levels:
    """The row order, and per level the argument rows that the pass reads."""

    def __init__(self, a: GraphArrays, nodes: np.ndarray):
        self.a = a
        n_args = np.diff(a.edge_ptr)   # scheduled arguments per node
        most = int(n_args.max())
        # row order: by depth, then by decreasing number of arguments
        key = a.depth[nodes] * (most + 1) + (most - n_args[nodes])
        by_row = np.argsort(key, kind="stable")
        key = key[by_row]
        index = np.int32 if a.n < np.iinfo(np.int32).max else np.int64  # (less memory)
        self.order = nodes[by_row].astype(index)         # row -> node
        self.row = np.empty(a.n, dtype=index)            # node -> row
        self.row[self.order] = np.arange(len(nodes), dtype=index)
        depth = a.depth[self.order]
        self.level_start = np.flatnonzero(np.r_[True, depth[1:] != depth[:-1]])
        level_key = depth[self.level_start] * (most + 1)
        # per level: for p = 0, 1, ...: the rows of the p-th arguments of the level's nodes
        # that have one (those nodes are the level's first rows)
        self.reads = [[] for _ in self.level_start]
        users, p = np.flatnonzero(n_args[self.order] > 0), 0   # rows
        while len(users):
            args = self.row[a.edge_arg[a.edge_ptr[self.order[users]] + p]]
            # a level's nodes with more than p arguments: keys below depth * (most + 1) + most - p
            per_level = np.searchsorted(key, level_key + (most - p)) - self.level_start
            offset = np.cumsum(per_level) - per_level
            for k in np.flatnonzero(per_level).tolist():
                self.reads[k].append(args[offset[k]:offset[k] + per_level[k]])
            p += 1
            users = users[n_args[self.order[users]] > p]
    def longest_chains(self, column: np.ndarray, n_columns: int, dtype) -> np.ndarray:
        """Per column: the longest chain of its signature (``column[s]``: the column of
        signature ``s``, -1 when it is not counted in this turn)."""
        chain = np.zeros((len(self.order), n_columns), dtype=dtype)
        # the cells that add one: a node's own column, in row order, cut by level
        own_column = column[self.a.sig[self.order]]
        own_rows = np.flatnonzero(own_column >= 0)
        own_cells = own_rows * n_columns + own_column[own_rows]
        own_cuts = np.searchsorted(own_rows, np.r_[self.level_start, len(self.order)]).tolist()
        cells = chain.reshape(-1)
        for k, lo in enumerate(self.level_start.tolist()):
            for p, args in enumerate(self.reads[k]):
                block = chain[lo:lo + len(args)]
                # (mode="clip": the rows are valid, and "raise" would copy through a buffer)
                if p == 0:
                    np.take(chain, args, axis=0, out=block, mode="clip")
                else:
                    np.maximum(block, np.take(chain, args, axis=0, mode="clip"), out=block)
            cells[own_cells[own_cuts[k]:own_cuts[k + 1]]] += 1
        # a node's value in a column is that of some node of the column's signature (or
        # 0), so the longest chain is the column's maximum over all nodes
        return chain.max(axis=0)
