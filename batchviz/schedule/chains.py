"""Longest chains of each signature through a graph, counted one depth level at a time.

Two nodes of one signature can share a batch only if neither depends on the other, so the
nodes of a signature ``s`` that lie on one dependency path need one batch each. Two tools
count them:

* ``bv.explain``'s lower bound counts the chain *ending* at a node: ``[sig(i) == s]`` plus
  the most over its arguments (:mod:`batchviz.explain.bound`);
* the lookahead strategy counts the chain *starting* at a node: ``[sig(i) == s]`` plus the
  most over its users (:mod:`batchviz.schedule.lookahead`).

It is one computation over different edges: every node takes the most of its
*predecessors* (the arguments, or the users) and adds one in its own signature's column.
It runs for all signatures at once (a ``nodes x signatures`` matrix), level after level,
where a node's predecessors all sit on earlier levels (arguments are shallower than their
users, so depth orders the first case and reversed depth the second).

The matrix rows are the nodes sorted by level, so that a level is a block of consecutive
rows, and inside a level by decreasing number of predecessors, so that the nodes with a
``p``-th predecessor are the first rows of the block. A level is then a few NumPy
operations on slices: ``block[:c_p] = max(block[:c_p], chain[p-th predecessors])`` for
``p = 0, 1, ...`` (most nodes have one or two), then ``+1`` in each node's own column.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: largest chain matrix (nodes x signatures) held at once; more signatures go in turns
MAX_CELLS = 32_000_000


@dataclass
class Chains:
    """``longest[s]``: the most nodes of signature ``s`` on one path; ``own[k]``: the most
    nodes of its own signature on one path through ``nodes[k]`` in the counted direction
    (ending there, or starting there), ``nodes[k]`` included."""

    longest: dict
    own: np.ndarray


def signature_chains(nodes: np.ndarray, sig: np.ndarray, level: np.ndarray,
                     pred_ptr: np.ndarray, pred: np.ndarray, max_cells: int = MAX_CELLS) -> Chains:
    """The :class:`Chains` of ``nodes`` (ids into the per-id arrays ``sig`` and ``level``),
    where id ``i``'s predecessors are ``pred[pred_ptr[i]:pred_ptr[i + 1]]`` and sit on lower
    levels than ``i``. Every predecessor must be one of ``nodes``."""
    own = np.ones(len(nodes), dtype=np.int64)
    if len(nodes) == 0:
        return Chains({}, own)
    node_sig, node_level = sig[nodes], level[nodes]
    sigs = np.flatnonzero(np.bincount(node_sig))
    longest = dict.fromkeys(sigs.tolist(), 1)
    # a chain needs strictly increasing levels: signatures on one level only have chains of 1
    lowest = np.full(int(sigs[-1]) + 1, np.iinfo(np.int64).max)
    highest = np.full(int(sigs[-1]) + 1, np.iinfo(np.int64).min)
    np.minimum.at(lowest, node_sig, node_level)
    np.maximum.at(highest, node_sig, node_level)
    candidates = sigs[highest[sigs] > lowest[sigs]]
    if len(candidates) == 0:
        return Chains(longest, own)

    sweep = _LevelSweep(nodes, level, pred_ptr, pred)
    dtype = _chain_dtype(node_sig, node_level, candidates, len(sweep.level_start))
    own_sig = sig[sweep.order]
    position = np.empty(len(sig), dtype=np.int64)
    position[nodes] = np.arange(len(nodes))
    row_position = position[sweep.order]               # row -> position in nodes
    per_turn = max(1, max_cells // len(nodes))
    for c0 in range(0, len(candidates), per_turn):
        cols = candidates[c0:c0 + per_turn]
        column = np.full(int(sigs[-1]) + 1, -1, dtype=np.int64)
        column[cols] = np.arange(len(cols))
        chain = sweep.chains(column[own_sig], len(cols), dtype)
        longest.update(zip(cols.tolist(), chain.max(axis=0).tolist()))
        counted = np.flatnonzero(column[own_sig] >= 0)  # rows of this turn's signatures
        own[row_position[counted]] = chain[counted, column[own_sig[counted]]]
    return Chains(longest, own)


def _chain_dtype(node_sig: np.ndarray, node_level: np.ndarray, candidates: np.ndarray,
                 n_levels: int):
    """The smallest integer type that holds every chain length (the chain matrix is the
    largest array here). A chain of signature ``s`` has strictly increasing levels, so it is
    no longer than the number of distinct levels of the nodes of ``s``."""
    level = node_level - node_level.min()
    width = int(level.max()) + 1
    cells = (int(node_sig.max()) + 1) * width
    if cells <= 4 * len(node_sig):   # a signatures x levels table is small: count exactly
        table = np.bincount(node_sig * width + level, minlength=cells)
        longest = int(np.count_nonzero(table.reshape(-1, width), axis=1)[candidates].max())
    else:
        longest = n_levels
    for dtype in (np.uint8, np.int16, np.int32):
        if longest <= np.iinfo(dtype).max:
            return dtype
    return np.int64


class _LevelSweep:
    """The row order, and per level the predecessor rows that the sweep reads."""

    def __init__(self, nodes: np.ndarray, level: np.ndarray, pred_ptr: np.ndarray,
                 pred: np.ndarray):
        n_pred = np.diff(pred_ptr)
        most = int(n_pred[nodes].max())
        # row order: by level, then by decreasing number of predecessors
        node_level = level[nodes] - int(level[nodes].min())
        key = node_level * (most + 1) + (most - n_pred[nodes])
        by_row = np.argsort(key, kind="stable")
        key = key[by_row]
        index = np.int32 if len(level) < np.iinfo(np.int32).max else np.int64  # (less memory)
        self.order = nodes[by_row].astype(index)         # row -> node
        self.row = np.empty(len(level), dtype=index)     # node -> row
        self.row[self.order] = np.arange(len(nodes), dtype=index)
        row_level = node_level[by_row]
        self.level_start = np.flatnonzero(np.r_[True, row_level[1:] != row_level[:-1]])
        level_key = row_level[self.level_start] * (most + 1)
        # per level: for p = 0, 1, ...: the rows of the p-th predecessors of the level's
        # nodes that have one (those nodes are the level's first rows)
        self.reads = [[] for _ in self.level_start]
        users, p = np.flatnonzero(n_pred[self.order] > 0), 0   # rows
        while len(users):
            preds = self.row[pred[pred_ptr[self.order[users]] + p]]
            # a level's nodes with more than p predecessors: keys below level_key + most - p
            per_level = np.searchsorted(key, level_key + (most - p)) - self.level_start
            offset = np.cumsum(per_level) - per_level
            for k in np.flatnonzero(per_level).tolist():
                self.reads[k].append(preds[offset[k]:offset[k] + per_level[k]])
            p += 1
            users = users[n_pred[self.order[users]] > p]

    def chains(self, own_column: np.ndarray, n_columns: int, dtype) -> np.ndarray:
        """The chain matrix, rows in row order; ``own_column[row]``: the column of the row's
        own signature, -1 when it is not counted in this turn."""
        chain = np.zeros((len(self.order), n_columns), dtype=dtype)
        # the cells that add one: a node's own column, in row order, cut by level
        own_rows = np.flatnonzero(own_column >= 0)
        own_cells = own_rows * n_columns + own_column[own_rows]
        own_cuts = np.searchsorted(own_rows, np.r_[self.level_start, len(self.order)]).tolist()
        cells = chain.reshape(-1)
        for k, lo in enumerate(self.level_start.tolist()):
            for p, preds in enumerate(self.reads[k]):
                block = chain[lo:lo + len(preds)]
                # (mode="clip": the rows are valid, and "raise" would copy through a buffer)
                if p == 0:
                    np.take(chain, preds, axis=0, out=block, mode="clip")
                else:
                    np.maximum(block, np.take(chain, preds, axis=0, mode="clip"), out=block)
            cells[own_cells[own_cuts[k]:own_cuts[k + 1]]] += 1
        return chain
