"""Reference solution of exercise 6: lookahead batching, in plain Python.

The library ships the same rule as ``bv.Graph(strategy="lookahead")``
(``batchviz/schedule/lookahead.py``, whose docstring tells the whole story).

1. Levels. For a signature ``s``, two ``s`` nodes on one dependency path never share a
   batch. Let ``below(v)`` be the most ``s`` nodes on one path from node ``v`` (of signature
   ``s``) down to the graph's end, and ``L_s`` the most on any path: ``s`` needs at least
   ``L_s`` batches, and ``v`` must run in one of the first ``L_s - below(v) + 1`` of them
   (its *latest level*), or ``s`` will need more.
2. The agenda, with one change: the next batch of ``s`` is its level ``k`` (``s`` batches so
   far + 1). Running ``s`` now is *safe* when no node of ``s`` due by level ``k`` is still
   waiting for its arguments. Run a safe signature (lowest agenda priority first); only when
   none is safe, take the paper's choice.

If it never has to fall back, every signature ``s`` runs in exactly ``L_s`` batches: the
schedule meets the lower bound ``sum_s L_s`` and no schedule has fewer batches.
"""
import batchviz as bv
from batchviz.schedule.agenda import average_depths


def latest_levels(view):
    """``({node: latest level}, {signature: L_s})`` over the pending nodes."""
    sig, users = view.signature, view.users()
    by_sig, depths = {}, {}
    for node in view.nodes:
        by_sig.setdefault(sig[node], []).append(node)
        depths.setdefault(sig[node], set()).add(view.depth[node])
    latest, chain = {}, {}
    for s, nodes in by_sig.items():
        if len(depths[s]) == 1:        # a path has strictly increasing depths: no s-chain
            chain[s] = 1
            latest.update(dict.fromkeys(nodes, 1))
            continue
        below = {}
        for node in reversed(view.nodes):   # users come after their arguments
            best = 0
            for user in users.get(node, ()):
                if below[user] > best:
                    best = below[user]
            below[node] = best + (sig[node] == s)
        chain[s] = max(below[node] for node in nodes)
        for node in nodes:
            latest[node] = chain[s] - below[node] + 1
    return latest, chain


def lower_bound(view):
    """No schedule of ``view`` has fewer batches than this."""
    return sum(latest_levels(view)[1].values())


class MyStrategy(bv.Strategy):
    """Lookahead batching: run a signature only when none of its due nodes still waits."""

    name = "student-lookahead"

    def schedule(self, view):
        sig, users = view.signature, view.users()
        latest, _ = latest_levels(view)
        avg = average_depths(view)
        priority = {s: (d, not view.is_cheap(s), s) for s, d in avg.items()}
        unresolved, agenda, waiting = {}, {}, {}
        for node in view.nodes:
            count = len(view.pending_args(node))
            if count:
                unresolved[node] = count
                levels = waiting.setdefault(sig[node], {})
                levels[latest[node]] = levels.get(latest[node], 0) + 1
            else:
                agenda.setdefault(sig[node], []).append(node)
        runs = dict.fromkeys(avg, 0)

        def safe(s):
            due = runs[s] + 1
            return not any(count for level, count in waiting.get(s, {}).items() if level <= due)

        batches = []
        while agenda:
            s = min(agenda, key=lambda s: (not safe(s), priority[s]))
            batch = agenda.pop(s)
            batches.append(batch)
            runs[s] += 1
            for node in batch:
                for user in users.get(node, ()):
                    unresolved[user] -= 1
                    if unresolved[user] == 0:
                        su = sig[user]
                        waiting[su][latest[user]] -= 1
                        agenda.setdefault(su, []).append(user)
        return batches
