"""Agenda-based batching, the paper's ByAgenda (§3.2).

The agenda holds the nodes whose arguments are all computed. At each step it picks one
signature present on the agenda and runs *all* agenda nodes of that signature as one batch;
their users' counts of unresolved arguments drop, and users that reach zero join the agenda.

Which signature first? The one whose nodes have the lowest *average depth* over the whole
pending graph. Signatures that typically occur late (the loss of every sequence) then wait
until all their nodes are on the agenda, instead of running as soon as the shortest
sequence's loss is ready. Ties go to cheap (element-wise) ops before heavy ones.
"""
from __future__ import annotations

import heapq

from .base import PendingView, Schedule, Strategy


def average_depths(view: PendingView) -> dict:
    """``{signature: average depth of its pending nodes}``: the agenda's priority."""
    total: dict[int, int] = {}
    count: dict[int, int] = {}
    sig, depth = view.signature, view.depth
    for i in view.nodes:
        s = sig[i]
        if s in count:
            total[s] += depth[i]
            count[s] += 1
        else:
            total[s] = depth[i]
            count[s] = 1
    return {s: total[s] / count[s] for s in count}


class AgendaBatching(Strategy):
    name = "agenda"
    trusted = True

    def priority(self, view: PendingView) -> dict:
        """Sort key of each signature: (average depth, heavy after cheap, signature id)."""
        avg = average_depths(view)
        return {s: (d, not view.is_cheap(s), s) for s, d in avg.items()}

    def schedule(self, view: PendingView) -> Schedule:
        sig, start = view.signature, view.start
        priority = self.priority(view)
        unresolved, user_start, users = view.dependencies()

        ready: dict[int, list] = {}    # signature -> agenda nodes of that signature
        for i in view.nodes:
            if unresolved[i - start] == 0:
                s = sig[i]
                lst = ready.get(s)
                if lst is None:
                    ready[s] = [i]
                else:
                    lst.append(i)

        heap = [(priority[s], s) for s in ready]
        heapq.heapify(heap)
        batches = []
        while heap:
            _, s = heapq.heappop(heap)
            batch = ready.pop(s)
            batches.append(batch)
            for i in batch:
                k = i - start
                for u in users[user_start[k]:user_start[k + 1]]:
                    left = unresolved[u - start] - 1
                    unresolved[u - start] = left
                    if left == 0:
                        su = sig[u]
                        lst = ready.get(su)
                        if lst is None:
                            ready[su] = [u]
                            heapq.heappush(heap, (priority[su], su))
                        else:
                            lst.append(u)
        return batches
