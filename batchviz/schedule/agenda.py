"""Agenda-based batching, the paper's ByAgenda (§3.2), in plain Python.

The *agenda* holds the pending nodes whose arguments are all computed, grouped by
signature. At each step one signature group on the agenda runs, as one batch; the users of
its nodes count down their unresolved arguments, and users that reach zero join the agenda.
:func:`run_agenda` is that loop; a :class:`~batchviz.schedule.decisions.Rule` decides which
group runs at each step.

The paper's rule (:class:`LowestAverageDepth`): the signature whose nodes have the lowest
*average depth* over the whole pending graph. Signatures that typically occur late (the
loss of every sequence) then wait until all their nodes are on the agenda, instead of
running as soon as the shortest sequence's loss is ready. Ties go to cheap (element-wise)
ops before heavy ones, then to the lower signature id.

This loop is the reference. On large graphs with large batches the agenda strategy runs its
vectorized twin (:mod:`batchviz.schedule.vectorized`), which gives the same batches in the
same order; while a trace records decisions, it always runs this loop.
"""
from __future__ import annotations

import numpy as np

from .base import FlatSchedule, Strategy, schedule
from .decisions import DecisionLog, Rule
from .vectorized import BestPriority, agenda_batches, best_priority_batches


class Agenda:
    """The agenda: ``ready[signature]`` lists its nodes whose arguments are all computed, in
    the order they got there; ``waiting`` counts the pending nodes still waiting."""

    def __init__(self, view):
        self.signature, self.start = view.signature, view.start
        self.unresolved, self.user_start, self.users = view.dependencies()
        self.ready: dict[int, list] = {}
        self.waiting = 0
        for i in view.nodes:
            if self.unresolved[i - self.start] == 0:
                self._join(i)
            else:
                self.waiting += 1

    def __bool__(self) -> bool:
        return bool(self.ready)

    def _join(self, node: int) -> None:
        nodes = self.ready.get(self.signature[node])
        if nodes is None:
            self.ready[self.signature[node]] = [node]
        else:
            nodes.append(node)

    def run(self, signature: int, nodes=None) -> tuple:
        """Take ``nodes`` (default: all) of ``signature`` off the agenda as the next batch and
        count down their users. Returns ``(batch, ready)``: the batch, and the users that
        joined the agenda, in the order they did."""
        if nodes is None:
            batch = self.ready.pop(signature)
        else:
            batch, taken = list(nodes), set(nodes)
            left = [i for i in self.ready[signature] if i not in taken]
            if left:
                self.ready[signature] = left
            else:
                del self.ready[signature]
        unresolved, user_start, users, start = (self.unresolved, self.user_start, self.users,
                                                self.start)
        signature, groups, ready = self.signature, self.ready, []
        for i in batch:
            k = i - start
            for u in users[user_start[k]:user_start[k + 1]]:
                left = unresolved[u - start] - 1
                unresolved[u - start] = left
                if left == 0:  # u joins the agenda (self._join, written out: every node)
                    group = groups.get(signature[u])
                    if group is None:
                        groups[signature[u]] = [u]
                    else:
                        group.append(u)
                    ready.append(u)
        self.waiting -= len(ready)
        return batch, ready


def run_agenda(view, rule: Rule, log=None) -> list:
    """The agenda loop: until the agenda is empty, run the group ``rule`` chooses. With a
    ``log`` (:class:`~batchviz.schedule.decisions.DecisionLog`), every step is recorded."""
    agenda = Agenda(view)
    batches = []
    while agenda:
        signature = rule.choose(agenda)
        nodes = rule.nodes(signature, agenda)
        if log is not None:
            log.record(agenda, rule, signature,
                       agenda.ready[signature] if nodes is None else nodes)
        batch, ready = agenda.run(signature, nodes)
        rule.ran(signature, batch, ready)
        batches.append(batch)
    return batches


class GivenOrder(Rule):
    """The batches of a schedule made some other way, one after another, described by
    ``describing``'s key and words (a strategy's :meth:`~batchviz.schedule.base.Strategy.
    describe`; None: no key, "chosen by ``name``")."""

    def __init__(self, batches: list, describing: "Rule | None", name: str):
        self.batches, self.describing, self.name, self.step = batches, describing, name, 0
        self.key_names = describing.key_names if describing is not None else ()

    def choose(self, agenda) -> int:
        return agenda.signature[self.batches[self.step][0]]

    def nodes(self, signature, agenda):
        return self.batches[self.step]

    def ran(self, signature, batch, ready) -> None:
        self.step += 1

    def key(self, signature, agenda) -> tuple:
        return self.describing.key(signature, agenda) if self.describing is not None else ()

    def reason(self, chosen, other_keys) -> str:
        if self.describing is None:
            return f"chosen by {self.name}"
        return self.describing.reason(chosen, other_keys)

    def waits(self, candidate, chosen) -> str:
        if self.describing is None:
            return f"not chosen by {self.name}"
        return self.describing.waits(candidate, chosen)


def replay(view, batches: list, strategy) -> None:
    """Record, in ``view.decisions``, the agenda at every step of ``batches`` (``strategy``'s
    schedule of ``view``) with the strategy's own description of its choices."""
    run_agenda(view, GivenOrder(batches, strategy.describe(view), strategy.name), view.decisions)


def replayed(view, batches: list, strategy) -> DecisionLog:
    """The decisions of ``batches``, a schedule of ``view`` that ``strategy`` made (a run's):
    the agenda at every step, as the loop finds it walking those batches, in the strategy's
    words (:func:`replay`)."""
    view.decisions = log = DecisionLog()
    try:
        replay(view, batches, strategy)
    finally:
        view.decisions = None
    return log


def record_decisions(strategy, view) -> tuple:
    """``(batches, log)``: ``strategy``'s schedule of ``view``, checked as the runtime checks
    it, and its decisions (a :class:`~batchviz.schedule.decisions.DecisionLog`) as the
    strategy recorded them while it scheduled, or, for a strategy that does not schedule with
    the agenda loop, as the loop records them walking its batches (``replay``)."""
    view.decisions = log = DecisionLog()
    try:
        batches = schedule(strategy, view)
    finally:
        view.decisions = None
    if not log.decisions:
        log = replayed(view, batches, strategy)
    return batches, log


class AgendaStrategy(Strategy):
    """A strategy that is a rule over the agenda: write :meth:`~batchviz.AgendaStrategy.rule`;
    the loop, the counting down and the recording of decisions for traces are the agenda's
    (:func:`~batchviz.schedule.run_agenda`)."""

    def rule(self, view) -> Rule:
        """The :class:`~batchviz.Rule` that chooses this strategy's batches on ``view`` (a new
        one per schedule: a rule may keep counts)."""
        raise NotImplementedError(f"{type(self).__name__}: an AgendaStrategy returns its Rule "
                                  "from rule(view)")

    def schedule(self, view):
        return run_agenda(view, self.rule(view), view.decisions)

    def describe(self, view) -> Rule:
        """Its rule: the key and the words of a step rebuilt from a run's batches are the
        ones the rule gave when it chose them."""
        return self.rule(view)


def average_depths(view) -> dict:
    """``{signature: average depth of its pending nodes}``, in the order of each signature's
    first pending node. (Large views are summed with NumPy: the sums are exact, and dividing
    them gives the same floats as Python's ``total / count``.)"""
    if view.is_small():
        total: dict[int, int] = {}
        count: dict[int, int] = {}
        sig, depth = view.signature, view.depth
        for i in view.nodes:
            s = sig[i]
            total[s] = total.get(s, 0) + depth[i]
            count[s] = count.get(s, 0) + 1
        return {s: total[s] / count[s] for s in count}
    a = view.arrays()
    sig, depth = a.sig[a.pending], a.depth[a.pending]
    if len(sig) == 0:
        return {}
    counts = np.bincount(sig)
    totals = np.bincount(sig, weights=depth)
    first = np.full(len(counts), len(sig))
    np.minimum.at(first, sig, np.arange(len(sig)))
    present = np.flatnonzero(counts)
    present = present[np.argsort(first[present])]
    return dict(zip(present.tolist(), (totals[present] / counts[present]).tolist()))


class LowestAverageDepth(Rule):
    """The paper's rule. ``priority[s]`` is ``(average depth, heavy, s)``: the key."""

    key_names = ("average depth", "cost")

    def __init__(self, priority: dict):
        self.priority = priority

    def choose(self, agenda) -> int:
        return min(agenda.ready, key=self.priority.__getitem__)

    def key(self, signature, agenda) -> tuple:
        average, heavy, _ = self.priority[signature]
        return (average, "heavy" if heavy else "cheap")

    def reason(self, chosen, other_keys) -> str:
        if not other_keys:
            return "the only signature on the agenda"
        runner_up = min(other_keys)
        if chosen.key[0] != runner_up[0]:
            return "lowest average depth"
        if chosen.key[1] != runner_up[1]:
            return "tie on average depth broken cheap-before-heavy"
        return "tie on average depth and cost broken by the lower signature id"

    def waits(self, candidate, chosen) -> str:
        if candidate.key[0] != chosen.key[0]:
            return (f"waits: higher average depth ({candidate.key[0]:.2f} > "
                    f"{chosen.key[0]:.2f})")
        if candidate.key[1] != chosen.key[1]:
            return "waits: same average depth; heavy ops run after cheap ones"
        return "waits: same average depth and cost; the lower signature id runs first"


class AgendaBatching(AgendaStrategy):
    """The paper's agenda batching: :class:`LowestAverageDepth` over the agenda."""

    name = "agenda"
    trusted = True

    #: the vectorized twin runs on graphs of at least this many nodes whose batches will
    #: hold at least this many nodes on average; smaller batches cost less node by node
    #: than the NumPy calls of a batch (a few dozen microseconds) cost
    BATCHED_MIN_NODES = 2000
    BATCHED_MIN_BATCH = 32

    def priority(self, view) -> dict:
        """The sort key of each signature: (average depth, heavy after cheap, signature id).
        Written once: the rule, its vectorized twin and the traces all read it."""
        avg = average_depths(view)
        return {s: (d, not view.is_cheap(s), s) for s, d in avg.items()}

    def rule(self, view) -> Rule:
        return LowestAverageDepth(self.priority(view))

    def schedule(self, view):
        if view.decisions is None and self.large_batches(view):
            return self.batch_at_a_time(view).batches()
        return run_agenda(view, self.rule(view), view.decisions)

    def schedule_flat(self, view) -> FlatSchedule:
        if self.large_batches(view):
            return self.batch_at_a_time(view)
        return FlatSchedule.of(run_agenda(view, self.rule(view)))

    def batch_at_a_time(self, view) -> FlatSchedule:
        """The schedule by the vectorized twin of the agenda loop (for large batches)."""
        choice = self.vectorized_choice(view)
        if type(choice) is BestPriority:
            return best_priority_batches(view, self.ranks(view))
        return agenda_batches(view, self.ranks(view), choice)

    def vectorized_choice(self, view):
        """The rule in the form the vectorized loop takes (see :func:`agenda_batches`)."""
        return BestPriority()

    def ranks(self, view) -> np.ndarray:
        """Per signature id: its place in the priority order; -1 where it has no node."""
        priority = self.priority(view)
        ranks = np.full(len(view.graph.sigtab), -1, dtype=np.int64)
        order = sorted(priority, key=priority.__getitem__)
        ranks[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
        a = view.arrays()
        unranked = a.sig[a.nodes - a.start][ranks[a.sig[a.nodes - a.start]] < 0]
        if len(unranked):  # as the readable loop fails on a missing priority
            raise KeyError(f"{type(self).__name__}.priority() has no key for signature "
                           f"{int(unranked[0])}")
        return ranks

    def large_batches(self, view) -> bool:
        """Whether batches will be large enough for the vectorized twin to pay off. The
        estimate is the depth schedule's average batch: nodes per distinct (depth,
        signature) pair (the agenda's batches are usually within a factor of two of it)."""
        if view.end - view.start < self.BATCHED_MIN_NODES:
            return False  # too few nodes, pending or not: no need to build the arrays
        a = view.arrays()
        n = len(a.nodes)
        if n < self.BATCHED_MIN_NODES:
            return False
        local = a.nodes - a.start
        pairs = a.depth[local] * (int(a.sig.max()) + 1) + a.sig[local]
        if int(pairs.max()) < 4 * n:
            distinct = np.count_nonzero(np.bincount(pairs))
        else:
            distinct = len(np.unique(pairs))
        return n >= self.BATCHED_MIN_BATCH * distinct
