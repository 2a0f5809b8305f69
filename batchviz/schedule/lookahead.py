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

Cost. The look-ahead is one sweep up the pending graph that keeps, per node, a count for
every signature (a ``nodes x signatures`` integer array), vectorized per depth level with
NumPy (:mod:`batchviz.schedule.chains`, the lower bound's count run over users instead of
arguments); then the agenda loop. Like the agenda, the loop runs node by node on small
graphs and a batch at a time with NumPy on large ones, with the same result.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from .agenda import AgendaBatching
from .base import PendingView
from .chains import signature_chains
from .decisions import Rule


class SignatureLevels:
    """Per-signature levels of the pending nodes (see the module docstring).

    ``nodes``: the pending node ids (creation order); ``chain[s]`` is ``L_s``, the most nodes
    of signature ``s`` on one dependency path; ``latest[node]`` is the last batch of its
    signature (1-based) that the node can join if its signature is to need only ``L_s``
    batches (``latest_levels``: the same, per local id ``node - view.start``);
    ``n_pending_args[k]``: how many arguments of ``nodes[k]`` are pending.
    """

    #: the largest ``nodes x signatures`` count array held at once; more signatures go in turns
    MAX_CELLS = 16_000_000

    def __init__(self, view: PendingView):
        a = view.arrays()
        self.nodes = view.nodes
        self._local = local = a.nodes - a.start
        self.n_pending_args = np.diff(a.edge_ptr)[local].tolist()
        # below(v), the chain *starting* at v: count over users, deepest level first
        user_start, users = view.user_arrays()
        chains = signature_chains(local, a.sig, -a.depth, user_start, users, self.MAX_CELLS)
        self.chain = chains.longest
        longest = np.zeros(int(a.sig.max()) + 1 if len(a.sig) else 0, dtype=np.int64)
        longest[list(self.chain)] = list(self.chain.values())
        self.latest_levels = np.zeros(len(a.sig), dtype=np.int64)
        self.latest_levels[local] = longest[a.sig[local]] - chains.own + 1

    @cached_property
    def latest(self) -> dict:
        return dict(zip(self.nodes, self.latest_levels[self._local].tolist()))

    def lower_bound(self) -> int:
        """``sum_s L_s``: no schedule of these nodes has fewer batches."""
        return sum(self.chain.values())


def batch_lower_bound(view: PendingView) -> int:
    """The fewest batches any valid schedule of ``view`` can have: for every signature, the
    most nodes of that signature on one dependency path, summed over signatures."""
    return SignatureLevels(view).lower_bound()


class SafeFirst(Rule):
    """The lookahead's rule: the best *safe* signature on the agenda (lowest agenda
    priority), else the best one. ``waiting[s][level]`` counts the nodes of ``s`` with that
    latest level that still wait for arguments, ``earliest[s]`` is the lowest such level
    with a node still waiting; ``runs[s]``: the batches ``s`` has had."""

    key_names = ("safe", "average depth", "cost")

    def __init__(self, levels: SignatureLevels, view, priority: dict):
        self.priority, self.latest = priority, levels.latest
        self.signature = view.signature
        self.waiting: dict[int, dict] = {}
        for i, count in zip(view.nodes, levels.n_pending_args):
            if count:
                per = self.waiting.setdefault(self.signature[i], {})
                per[self.latest[i]] = per.get(self.latest[i], 0) + 1
        self.earliest = {s: min(per) for s, per in self.waiting.items()}
        self.runs = dict.fromkeys(priority, 0)

    def safe(self, s: int) -> bool:
        """No node of ``s`` due by its next batch (level ``runs[s] + 1``) still waits."""
        return self.earliest.get(s, _NEVER) > self.runs[s] + 1

    def choose(self, agenda) -> int:
        return min(agenda.ready, key=lambda s: (not self.safe(s), self.priority[s]))

    def key(self, signature, agenda) -> tuple:
        average, heavy, _ = self.priority[signature]
        return ("yes" if self.safe(signature) else "no", average, "heavy" if heavy else "cheap")

    def ran(self, signature, batch, ready) -> None:
        self.runs[signature] += 1
        for u in ready:
            s, level = self.signature[u], self.latest[u]
            per = self.waiting[s]
            per[level] -= 1
            if per[level] == 0 and level == self.earliest[s]:  # the next level still waiting
                self.earliest[s] = min((lv for lv, count in per.items() if count),
                                       default=_NEVER)


#: the earliest level of a signature none of whose nodes waits
_NEVER = float("inf")


class LookaheadBatching(AgendaBatching):
    """Agenda batching that runs a signature only when none of its due nodes is still
    waiting (see the module docstring); falls back to the paper's priority otherwise."""

    name = "lookahead"
    trusted = True

    def rule(self, view) -> Rule:
        return SafeFirst(SignatureLevels(view), view, self.priority(view))

    def vectorized_choice(self, view):
        return _SafeFirst(SignatureLevels(view), view, self.ranks(view))


class _SafeFirst:
    """:class:`SafeFirst` in the form of :func:`~batchviz.schedule.vectorized.agenda_batches`: the best safe
    signature on the agenda, else the best one. ``waiting[r, level]`` counts the nodes of
    rank ``r`` with that latest level that still wait for arguments; ``runs[r]``: the
    batches rank ``r`` has had."""

    def __init__(self, levels: SignatureLevels, view: PendingView, rank: np.ndarray):
        a = view.arrays()
        local = a.nodes - a.start
        waits = local[np.diff(a.edge_ptr)[local] > 0]  # nodes with a pending argument
        rank = rank[a.sig]  # per node: its signature's rank
        self.rank, self.latest = rank, levels.latest_levels
        self.width = int(self.latest.max()) + 2   # levels 1..L, and the next one
        n_ranks = int(rank.max()) + 1
        keys = rank[waits] * self.width + self.latest[waits]
        self.waiting = np.bincount(keys, minlength=n_ranks * self.width).reshape(n_ranks, self.width)
        self.runs = [0] * n_ranks

    def safe(self, r: int) -> bool:
        """No node of rank ``r`` due by its next batch (level ``runs[r] + 1``) still waits."""
        return not self.waiting[r, :self.runs[r] + 2].any()

    def pick(self, agenda) -> int:
        for r in sorted(agenda.heap):
            if self.safe(r):
                return r
        return agenda.heap[0]

    def ran(self, r: int, ready: np.ndarray) -> None:
        self.runs[r] += 1
        if len(ready):
            np.subtract.at(self.waiting.reshape(-1), self.rank[ready] * self.width + self.latest[ready], 1)
