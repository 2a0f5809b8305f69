"""Lookahead batching: agenda batching that looks down the graph before it runs a batch.

Why the agenda loses batches. The paper's agenda (§3.2) runs, at every step, *all* ready
nodes of one signature, choosing the signature by the average depth of its nodes over the
whole graph. That average is one number per signature, so it cannot tell apart two uses of
one op that sit at different places of a model. In a Tree-LSTM ``cmult`` is used for
``i*u``, ``f_l*c_l``, ``f_r*c_r`` and ``o*tanh(c)``; in a BiLSTM parser ``tanh`` is an LSTM
gate, the cell's squashing, the MLP's hidden layer and the arc composition. The agenda then
runs a ``cmult`` batch while half of the ``cmult`` nodes of the same tree level wait one
``tanh`` away, and pays a second ``cmult`` batch for them (Tree-LSTM: 260 batches where 195
suffice; the parser: 529 where 491 suffice).

What we look at instead: *levels* per signature. For a signature ``s``, two ``s`` nodes on
one dependency path can never share a batch, so if the longest path carries ``L_s`` nodes
of signature ``s``, any schedule needs at least ``L_s`` batches of ``s`` - and at least
``sum_s L_s`` batches in all (:func:`batch_lower_bound`). Looking *down* from a node ``v``
of signature ``s``, let ``below(v)`` be the most ``s`` nodes on one path starting at ``v``
(``v`` included). Then ``v`` must run in one of the first ``L_s - below(v) + 1`` batches of
``s``, or ``s`` will need more than ``L_s`` batches: that is ``v``'s *latest level*.

The rule. Keep the agenda, and count the batches each signature has had. The next batch of
``s`` would be its level ``k``; running it now is *safe* if no node of ``s`` whose latest
level is ``k`` or earlier is still waiting for its arguments (it would miss the batch that
it had to be in). Among signatures on the agenda, run a safe one (lowest agenda priority
first); only when none is safe fall back to the paper's priority.

Why it wins. A safe batch of level ``k`` contains every node whose latest level is ``k``, so
if the strategy never falls back, every signature ``s`` finishes in exactly ``L_s`` batches
and the schedule meets the lower bound: it is optimal. On the Figure 1 RNN, on random
Tree-LSTM minibatches and on the transition-parser graphs of the tutorials it never falls
back; on random graphs of mixed ops it falls back sometimes and still needs fewer batches
than the agenda (``tests/test_lookahead.py`` measures this).

Cost. The look-ahead is one backward pass over the pending graph that keeps, per node, a
count for every signature (a ``nodes x signatures`` integer array), vectorized per depth
level with NumPy; then the agenda loop as usual, with O(1) bookkeeping per node.
"""
from __future__ import annotations

import itertools

import numpy as np

from .agenda import average_depths
from .base import PendingView, Schedule, Strategy


def pending_edges(view: PendingView):
    """``(src, dst)``: one pair of positions in ``view.nodes`` per pending argument of a
    pending node (``view.nodes[src[e]]`` is an argument of ``view.nodes[dst[e]]``)."""
    nodes, args, start = view.nodes, view.args, view.start
    n = len(nodes)
    position = np.full(view.end - start, -1, dtype=np.int64)  # parameters stay -1
    position[np.asarray(nodes, dtype=np.int64) - start] = np.arange(n)
    arity = np.fromiter((len(args[i]) for i in nodes), dtype=np.int64, count=n)
    flat = np.fromiter(itertools.chain.from_iterable(args[i] for i in nodes), dtype=np.int64,
                       count=int(arity.sum()))
    dst = np.repeat(np.arange(n), arity)
    keep = flat >= start
    src = position[flat[keep] - start]
    dst = dst[keep]
    pending = src >= 0
    return src[pending], dst[pending]


def _count_below(depth, src, dst, node_column, n_columns: int):
    """``below[k, c]``: the most nodes of signature column ``c`` on one path that starts at
    pending node ``k`` and follows its users (``k`` itself included). ``node_column[k]`` is
    node ``k``'s column, or -1 if its signature is not counted in this turn."""
    n = len(depth)
    below = np.zeros((n, n_columns), dtype=np.int32)
    # Users are deeper than their arguments, so walking depth levels from the deepest up
    # visits every user before its arguments: one vectorized step per level.
    node_order = np.argsort(-depth, kind="stable")
    node_cuts = np.flatnonzero(np.diff(depth[node_order])) + 1
    edge_order = np.argsort(-depth[dst], kind="stable")
    src, dst = src[edge_order], dst[edge_order]
    negative_edge_levels = -depth[dst]
    for level_nodes in np.split(node_order, node_cuts):
        counted = level_nodes[node_column[level_nodes] >= 0]
        below[counted, node_column[counted]] += 1
        level = -depth[level_nodes[0]]
        lo = np.searchsorted(negative_edge_levels, level, side="left")
        hi = np.searchsorted(negative_edge_levels, level, side="right")
        if hi > lo:
            np.maximum.at(below, src[lo:hi], below[dst[lo:hi]])
    return below


class SignatureLevels:
    """Per-signature levels of the pending nodes (see the module docstring).

    ``nodes``: the pending node ids (creation order); ``chain[s]`` is ``L_s``, the most nodes
    of signature ``s`` on one dependency path; ``latest[node]`` is the last batch of its
    signature (1-based) that the node can join if its signature is to need only ``L_s``
    batches; ``n_pending_args[k]``: how many arguments of ``nodes[k]`` are pending.
    """

    #: the largest ``nodes x signatures`` count array held at once; more signatures go in turns
    MAX_CELLS = 16_000_000

    def __init__(self, view: PendingView):
        nodes = view.nodes
        self.nodes = nodes
        n = len(nodes)
        sig = view.signature
        node_sigs = np.fromiter((sig[i] for i in nodes), dtype=np.int64, count=n)
        sigs, col = np.unique(node_sigs, return_inverse=True)
        depth = np.fromiter((view.depth[i] for i in nodes), dtype=np.int64, count=n)
        src, dst = pending_edges(view)
        self.n_pending_args = np.bincount(dst, minlength=n).tolist()

        # Nodes on one path have strictly increasing depths, so a signature whose nodes all
        # share one depth has no chain: L_s = 1 and every node's latest level is 1.
        own = np.ones(n, dtype=np.int64)          # below(v) for v's own signature
        longest = np.ones(len(sigs), dtype=np.int64)
        if n:
            lowest = np.full(len(sigs), np.iinfo(np.int64).max)
            highest = np.full(len(sigs), -1)
            np.minimum.at(lowest, col, depth)
            np.maximum.at(highest, col, depth)
            chained = np.flatnonzero(highest > lowest)
            per_turn = max(1, self.MAX_CELLS // n)
            for k in range(0, len(chained), per_turn):
                turn = chained[k:k + per_turn]
                column = np.full(len(sigs), -1, dtype=np.int64)
                column[turn] = np.arange(len(turn))
                node_column = column[col]
                below = _count_below(depth, src, dst, node_column, len(turn))
                mine = node_column >= 0
                own[mine] = below[mine, node_column[mine]]
                longest[turn] = below.max(axis=0)
        self.chain = {int(s): int(c) for s, c in zip(sigs, longest)}
        latest = longest[col] - own + 1
        self.latest = dict(zip(nodes, latest.tolist()))

    def lower_bound(self) -> int:
        """``sum_s L_s``: no schedule of these nodes has fewer batches."""
        return sum(self.chain.values())


def batch_lower_bound(view: PendingView) -> int:
    """The fewest batches any valid schedule of ``view`` can have: for every signature, the
    most nodes of that signature on one dependency path, summed over signatures."""
    return SignatureLevels(view).lower_bound()


class LookaheadBatching(Strategy):
    """Agenda batching that runs a signature only when none of its due nodes is still
    waiting (see the module docstring); falls back to the paper's priority otherwise."""

    name = "lookahead"
    trusted = True

    def schedule(self, view: PendingView) -> Schedule:
        sig = view.signature
        levels = SignatureLevels(view)
        latest = levels.latest
        priority = {s: (d, not view.is_cheap(s), s) for s, d in average_depths(view).items()}
        users = view.users()

        # Per signature: how many of its nodes still wait for arguments, by latest level,
        # and those levels in increasing order with a cursor past the exhausted ones.
        unresolved: dict[int, int] = {}
        ready: dict[int, list] = {}
        waiting: dict[int, dict] = {}        # s -> {latest level: nodes still waiting}
        for i, count in zip(view.nodes, levels.n_pending_args):
            s = sig[i]
            if count:
                unresolved[i] = count
                per = waiting.setdefault(s, {})
                per[latest[i]] = per.get(latest[i], 0) + 1
            else:
                ready.setdefault(s, []).append(i)
        due_levels = {s: sorted(per) for s, per in waiting.items()}
        cursor = dict.fromkeys(due_levels, 0)
        batches_run = dict.fromkeys(priority, 0)

        def safe(s: int) -> bool:
            """No node of ``s`` that is due by its next batch still waits for arguments."""
            levels_s = due_levels.get(s)
            if levels_s is None:
                return True
            per, k = waiting[s], cursor[s]
            while k < len(levels_s) and per[levels_s[k]] == 0:
                k += 1
            cursor[s] = k
            return k == len(levels_s) or levels_s[k] > batches_run[s] + 1

        batches = []
        while ready:
            best_key, best = None, None
            for s in ready:
                key = (not safe(s), priority[s])
                if best_key is None or key < best_key:
                    best_key, best = key, s
            batch = ready.pop(best)
            batches.append(batch)
            batches_run[best] += 1
            for i in batch:
                for u in users.get(i, ()):
                    left = unresolved[u] - 1
                    unresolved[u] = left
                    if left == 0:
                        su = sig[u]
                        waiting[su][latest[u]] -= 1
                        lst = ready.get(su)
                        if lst is None:
                            ready[su] = [u]
                        else:
                            lst.append(u)
        return batches
