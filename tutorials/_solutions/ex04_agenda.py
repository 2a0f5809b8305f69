"""Reference solution of exercise 4 (agenda-based batching)."""
import heapq

import batchviz as bv


def average_depths(view):
    total, count = {}, {}
    for node in view.nodes:
        s = view.signature[node]
        total[s] = total.get(s, 0) + view.depth[node]
        count[s] = count.get(s, 0) + 1
    return {s: total[s] / count[s] for s in total}


def priority(view, sig, average_depth):
    return (average_depth, not view.is_cheap(sig), sig)


class AgendaStrategy(bv.Strategy):
    name = "student-agenda"

    def schedule(self, view):
        sig = view.signature
        avg = average_depths(view)
        users = view.users()
        unresolved = {}
        agenda = {}                        # signature -> ready nodes, in arrival order
        for node in view.nodes:
            count = len(view.pending_args(node))
            if count:
                unresolved[node] = count
            else:
                agenda.setdefault(sig[node], []).append(node)
        heap = [priority(view, s, avg[s]) for s in agenda]
        heapq.heapify(heap)
        batches = []
        while heap:
            s = heapq.heappop(heap)[-1]
            batch = agenda.pop(s)
            batches.append(batch)
            for node in batch:
                for user in users.get(node, ()):
                    unresolved[user] -= 1
                    if unresolved[user] == 0:
                        su = sig[user]
                        if su not in agenda:
                            agenda[su] = []
                            heapq.heappush(heap, priority(view, su, avg[su]))
                        agenda[su].append(user)
        return batches
