"""The two baselines: no batching, and batching by depth (TensorFlow Fold's strategy)."""
from __future__ import annotations

from .base import PendingView, Schedule, Strategy


class NoBatching(Strategy):
    """Every node is its own batch, in creation order (the paper's NoAuto)."""

    name = "none"
    trusted = True

    def schedule(self, view: PendingView) -> Schedule:
        return [[i] for i in view.nodes]


class DepthBatching(Strategy):
    """Batch nodes of equal depth and equal signature (the paper's ByDepth).

    A node's depth is the longest path from a leaf to it, so nodes of one depth never depend
    on each other, and running depth after depth respects every dependency. It misses nodes
    that could batch but sit at different depths, such as the losses of sequences of
    different lengths (Figure 1)."""

    name = "depth"
    trusted = True

    def schedule(self, view: PendingView) -> Schedule:
        sig, depth = view.signature, view.depth
        groups: dict[tuple, list] = {}
        for i in view.nodes:
            key = (depth[i], sig[i])
            group = groups.get(key)
            if group is None:
                groups[key] = [i]
            else:
                group.append(i)
        return [groups[key] for key in sorted(groups)]
