"""The two baselines: no batching, and batching by depth (TensorFlow Fold's strategy).

Both are simple enough to compute for the whole graph at once with NumPy (a sort, for
depth), which keeps ``bv.explain`` of a 100k-node graph cheaper than building it."""
from __future__ import annotations

import numpy as np

from .base import FlatSchedule, PendingView, Schedule, Strategy, stable_argsort


class NoBatching(Strategy):
    """Every node is its own batch, in creation order (the paper's NoAuto)."""

    name = "none"
    trusted = True
    #: no batching at all: even a shared W's gradient is added node by node (as in DyNet
    #: without autobatching), not summed over all its uses in one GEMM
    batches_weight_gradients = False

    def schedule(self, view: PendingView) -> Schedule:
        return [[i] for i in view.nodes]

    def schedule_flat(self, view: PendingView) -> FlatSchedule:
        nodes = view.arrays().nodes
        return FlatSchedule(nodes, np.ones(len(nodes), dtype=np.int64))


class DepthBatching(Strategy):
    """Batch nodes of equal depth and equal signature (the paper's ByDepth).

    A node's depth is the longest path from a leaf to it, so nodes of one depth never depend
    on each other, and running depth after depth respects every dependency. It misses nodes
    that could batch but sit at different depths, such as the losses of sequences of
    different lengths (Figure 1)."""

    name = "depth"
    trusted = True

    def schedule(self, view: PendingView) -> Schedule:
        if view.is_small():  # a few nodes (a parser step): a dict costs less than NumPy calls
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
        return self.schedule_flat(view).batches()

    def schedule_flat(self, view: PendingView) -> FlatSchedule:
        """Batches in order of (depth, signature); inside a batch, creation order. One stable
        sort of the pending nodes by ``depth * number of signatures + signature``."""
        a = view.arrays()
        local = a.nodes - a.start
        if len(local) == 0:
            return FlatSchedule(local, np.zeros(0, dtype=np.int64))
        n_sigs = int(a.sig.max()) + 1
        key = a.depth[local] * n_sigs + a.sig[local]
        by_key = stable_argsort(key, (int(a.depth.max()) + 1) * n_sigs)
        key = key[by_key]
        cuts = np.flatnonzero(key[1:] != key[:-1]) + 1
        sizes = np.diff(np.concatenate(([0], cuts, [len(key)])))
        return FlatSchedule(a.nodes[by_key], sizes)
