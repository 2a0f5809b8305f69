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
arguments); then the agenda loop (:func:`~batchviz.schedule.agenda.run_agenda`), where the
rule keeps, per signature, its waiting nodes' counts by level in one int64 array
(:class:`WaitingLevels`).
"""
from __future__ import annotations

from array import array
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
    batches (``latest_levels``: the same, per local id ``node - view.start``).
    """

    #: the largest ``nodes x signatures`` count array held at once; more signatures go in turns
    MAX_CELLS = 16_000_000

    def __init__(self, view: PendingView):
        a = view.arrays()
        self.nodes = view.nodes
        self._local = local = a.nodes - a.start
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


class WaitingLevels:
    """Per signature, how many of its nodes of each latest level still wait for arguments,
    and the earliest level with one still waiting.

    ``count[first[s] + level]``: the waiting nodes of signature ``s`` with that latest level
    (levels ``0 .. L_s``, one block of the array per signature); ``earliest[s]``: the lowest
    level of ``s`` with a node still waiting, :data:`NEVER` when none waits. Counts only go
    down, so ``earliest[s]`` only moves up: finding the next one is a step up the block, and
    all of them together cost one walk over the array."""

    def __init__(self, levels: "SignatureLevels", view):
        self.signature, self.start = view.signature, view.start
        self.latest = array("q", levels.latest_levels.tobytes())  # per local id
        n_signatures = len(view.graph.sigtab)
        self.first = array("q", bytes(8 * (n_signatures + 1)))
        for s in range(n_signatures):
            self.first[s + 1] = self.first[s] + levels.chain.get(s, 0) + 1
        self.count = array("q", bytes(8 * self.first[n_signatures]))
        self.earliest = array("q", [NEVER]) * n_signatures
        self.wait(view.nodes, view.dependencies()[0])

    def wait(self, nodes: list, unresolved) -> None:
        """Count those of ``nodes`` that wait for arguments: ``unresolved[node - start] > 0``."""
        signature, latest, count, first, earliest, start = (
            self.signature, self.latest, self.count, self.first, self.earliest, self.start)
        for i in nodes:
            if unresolved[i - start]:
                s, level = signature[i], latest[i - start]
                count[first[s] + level] += 1
                if level < earliest[s]:
                    earliest[s] = level

    def joined(self, nodes: list) -> None:
        """``nodes`` joined the agenda: they wait no more."""
        signature, latest, count, first, earliest, start = (
            self.signature, self.latest, self.count, self.first, self.earliest, self.start)
        for u in nodes:
            s, level = signature[u], latest[u - start]
            count[first[s] + level] -= 1
            if level == earliest[s] and count[first[s] + level] == 0:
                while level < first[s + 1] - first[s] and count[first[s] + level] == 0:
                    level += 1
                earliest[s] = level if level < first[s + 1] - first[s] else NEVER


class SafeFirst(Rule):
    """The lookahead's rule: the best *safe* signature on the agenda (lowest agenda
    priority), else the best one. ``waiting`` counts, per signature and latest level, the
    nodes that still wait for arguments (:class:`WaitingLevels`); ``runs[s]``: the batches
    ``s`` has had."""

    key_names = ("safe", "average depth", "cost")

    def __init__(self, levels: SignatureLevels, view, priority: dict):
        self.priority = priority
        self.waiting = WaitingLevels(levels, view)
        self.runs = array("q", bytes(8 * len(view.graph.sigtab)))

    def safe(self, s: int) -> bool:
        """No node of ``s`` due by its next batch (level ``runs[s] + 1``) still waits."""
        return self.waiting.earliest[s] > self.runs[s] + 1

    def choose(self, agenda) -> int:
        return min(agenda.ready, key=lambda s: (not self.safe(s), self.priority[s]))

    def key(self, signature, agenda) -> tuple:
        average, heavy, _ = self.priority[signature]
        return ("yes" if self.safe(signature) else "no", average, "heavy" if heavy else "cheap")

    def ran(self, signature, batch, ready) -> None:
        self.runs[signature] += 1
        self.waiting.joined(ready)


#: the earliest level of a signature none of whose nodes waits: beyond any count of batches
NEVER = 1 << 62


class LookaheadBatching(AgendaBatching):
    """Agenda batching that runs a signature only when none of its due nodes is still
    waiting (see the module docstring); falls back to the paper's priority otherwise."""

    name = "lookahead"
    trusted = True

    def rule(self, view) -> Rule:
        return SafeFirst(SignatureLevels(view), view, self.priority(view))
