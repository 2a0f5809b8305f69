"""The two baselines: no batching, and batching by depth (TensorFlow Fold's strategy).

Neither needs the agenda to decide: creation order and depth order are valid orders of
any graph. Their decisions, when a trace records them, are the agenda at every step with
the key each strategy goes by (:class:`CreationOrder`, :class:`LowestDepth`)."""
from __future__ import annotations

from array import array

from .base import Schedule, Strategy
from .decisions import Rule


class CreationOrder(Rule):
    """No batching's key: each group's first node in creation order."""

    key_names = ("first node",)

    def key(self, signature, agenda) -> tuple:
        return (min(agenda.ready[signature]),)

    def reason(self, chosen, other_keys) -> str:
        return "creation order"

    def waits(self, candidate, chosen) -> str:
        return f"waits: creation order (its first node #{candidate.key[0]} comes later)"


class LowestDepth(Rule):
    """Depth batching's key: the lowest depth of each group's nodes on the agenda."""

    key_names = ("depth",)

    def __init__(self, depth: list):
        self.depth = depth

    def key(self, signature, agenda) -> tuple:
        return (min(self.depth[i] for i in agenda.ready[signature]),)

    def reason(self, chosen, other_keys) -> str:
        return f"depth {chosen.key[0]}"

    def waits(self, candidate, chosen) -> str:
        if candidate.key[0] > chosen.key[0]:
            return f"waits: its nodes here are deeper (depth {candidate.key[0]} > {chosen.key[0]})"
        return f"waits: same depth {chosen.key[0]}, runs in a batch of its own"


class NoBatching(Strategy):
    """Every node is its own batch, in creation order (the paper's NoAuto)."""

    name = "none"
    trusted = True
    #: no batching at all: even a shared W's gradient is added node by node (as in DyNet
    #: without autobatching), not summed over all its uses in one GEMM
    batches_weight_gradients = False

    def schedule(self, view) -> Schedule:
        return [[i] for i in view.nodes]

    def describe(self, view) -> Rule:
        return CreationOrder()


class DepthBatching(Strategy):
    """Batch nodes of equal depth and equal signature (the paper's ByDepth).

    A node's depth is the longest path from a leaf to it, so nodes of one depth never depend
    on each other, and running depth after depth respects every dependency. It misses nodes
    that could batch but sit at different depths, such as the losses of sequences of
    different lengths (Figure 1)."""

    name = "depth"
    trusted = True

    def schedule(self, view) -> Schedule:
        """Group the pending nodes by (depth, signature), in creation order, and run the
        groups in that order."""
        return depth_batches(view.depth, view.signature, view.pending_mask(), view.start,
                             len(view.graph.sigtab))

    def describe(self, view) -> Rule:
        return LowestDepth(view.depth)


def depth_batches(depth: list, signature: list, pending: bytearray, start: int,
                  n_signatures: int) -> list:
    """The pending nodes (``start + k`` with ``pending[k]``) grouped by (depth, signature),
    each group in creation order, the groups in order of (depth, signature). The nodes are
    sorted by depth with a counting sort (which keeps creation order within a depth:
    ``level_start[d]`` is where depth ``d``'s nodes start in ``by_depth``); then, depth by
    depth, each goes into its signature's bucket (``group[s]``, emptied after each depth),
    and the buckets run in order of signature."""
    deepest = -1
    for k in range(len(pending)):
        if pending[k]:
            d = depth[start + k]
            if d > deepest:
                deepest = d
    level_start = array("q", bytes(8 * (deepest + 2)))
    for k in range(len(pending)):  # count the nodes of each depth ...
        if pending[k]:
            d = depth[start + k]
            level_start[d] += 1
    for d in range(deepest + 1):   # ... and sum the counts: where each depth ends
        level_start[d + 1] += level_start[d]
    by_depth = array("q", bytes(8 * level_start[deepest + 1]))  # local ids
    for k in range(len(pending) - 1, -1, -1):  # from the last node, each just before the end
        if pending[k]:                         # of its depth, which then ends one earlier
            d = depth[start + k]
            level_start[d] -= 1
            by_depth[level_start[d]] = k
    batches = []
    group: list = [None] * n_signatures
    for d in range(deepest + 1):
        present = []  # the signatures at this depth
        for j in range(level_start[d], level_start[d + 1]):
            node = start + by_depth[j]
            s = signature[node]
            if group[s] is None:
                group[s] = [node]
                present.append(s)
            else:
                group[s].append(node)
        present.sort()
        for s in present:
            batches.append(group[s])
            group[s] = None
    return batches
