"""The lower bound on the number of batches of any schedule.

Two nodes of one signature can share a batch only if neither depends on the other. So for
each signature, the longest dependency chain counted in nodes *of that signature* (other
nodes may sit between them) needs that many batches, whatever the strategy; nodes of
different signatures never share a batch, so the bound is the sum over signatures. (By
Mirsky's theorem the chain length is also enough for one signature alone; together the
signatures can interfere, so the bound may be out of reach.)

The chain length of signature ``s`` ending at node ``i`` is
``[sig(i) == s] + max over arguments a of chain_s(a)``. It is computed for all signatures
at once, depth level after depth level, each level as a few NumPy operations.
"""
from __future__ import annotations

import numpy as np

from .arrays import GraphArrays

#: largest chain matrix (nodes x signatures) held at once; more signatures go in chunks
_MAX_CELLS = 16_000_000


def chain_bounds(a: GraphArrays) -> dict:
    """``{signature: longest dependency chain of its nodes}`` over the scheduled nodes."""
    nodes = a.scheduled
    if len(nodes) == 0:
        return {}
    sigs, counts = np.unique(a.sig[nodes], return_counts=True)
    bounds = {int(s): 1 for s in sigs}
    # a chain needs strictly increasing depths: signatures at one depth only have bound 1
    pairs = np.unique(a.sig[nodes] * (int(a.depth.max()) + 1) + a.depth[nodes])
    depth_counts = np.bincount(pairs // (int(a.depth.max()) + 1), minlength=int(sigs.max()) + 1)
    candidates = sigs[(counts >= 2) & (depth_counts[sigs] >= 2)]
    if len(candidates) == 0:
        return bounds

    # edges between scheduled nodes, grouped by the user's depth, then by user
    keep = ~a.is_param[a.arg_flat]
    e_user, e_arg = a.arg_user[keep], a.arg_flat[keep]
    order = np.lexsort((e_user, a.depth[e_user]))
    e_user, e_arg = e_user[order], e_arg[order]
    e_depth = a.depth[e_user]
    node_order = nodes[np.argsort(a.depth[nodes], kind="stable")]
    n_depth = a.depth[node_order]
    levels = np.unique(n_depth)
    edge_cut = np.searchsorted(e_depth, levels, side="left"), np.searchsorted(e_depth, levels, side="right")
    node_cut = np.searchsorted(n_depth, levels, side="left"), np.searchsorted(n_depth, levels, side="right")

    chunk = max(1, _MAX_CELLS // max(a.n, 1))
    for c0 in range(0, len(candidates), chunk):
        cols = candidates[c0:c0 + chunk]
        column = np.full(int(a.sig.max()) + 1, -1, dtype=np.int64)
        column[cols] = np.arange(len(cols))
        chain = np.zeros((a.n, len(cols)), dtype=np.int32)
        for k in range(len(levels)):
            e0, e1 = edge_cut[0][k], edge_cut[1][k]
            if e1 > e0:
                users = e_user[e0:e1]
                starts = np.flatnonzero(np.r_[True, users[1:] != users[:-1]])
                chain[users[starts]] = np.maximum.reduceat(chain[e_arg[e0:e1]], starts, axis=0)
            level_nodes = node_order[node_cut[0][k]:node_cut[1][k]]
            col = column[a.sig[level_nodes]]
            mine = col >= 0
            chain[level_nodes[mine], col[mine]] += 1
        members = nodes[column[a.sig[nodes]] >= 0]
        best = np.zeros(len(cols), dtype=np.int64)
        np.maximum.at(best, column[a.sig[members]], chain[members, column[a.sig[members]]])
        for s, b in zip(cols, best):
            bounds[int(s)] = int(b)
    return bounds
