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

This loop is the only form of the agenda: a run, a trace and every strategy written as a
rule (:class:`AgendaStrategy`) go through it, and what makes it fast on a 100k-node graph is
that it is compiled as written (:mod:`batchviz.compiled`; ``agenda.pxd`` gives the C types
of its counters). For that the agenda keeps its per-node counts in int64 arrays, and finds
a signature's group by an index into a list, not by a dict lookup.
"""
from __future__ import annotations

from array import array

from .base import Strategy, schedule
from .decisions import DecisionLog, Rule


class Agenda:
    """The agenda: ``ready[signature]`` lists its nodes whose arguments are all computed, in
    the order they got there; ``waiting`` counts the pending nodes still waiting.

    Per pending node (by local id, ``node - start``) it keeps ``unresolved``, how many of
    its arguments are not computed yet, and its users, the arrays of
    :meth:`~batchviz.PendingView.dependencies`. ``group[s]`` is the list
    ``ready[s]`` (None while ``s`` has no node on the agenda), so that a node joins its group
    by indexing a list by its signature."""

    def __init__(self, view):
        self.signature, self.start = view.signature, view.start
        self.unresolved, self.user_start, self.users = view.dependencies()
        self.ready = {}
        self.group = [None] * len(view.graph.sigtab)
        self.waiting = 0
        self._join_ready(view.pending_mask())

    def __bool__(self) -> bool:
        return len(self.ready) > 0

    def _join_ready(self, pending: bytearray) -> None:
        """Put the pending nodes (``pending[node - start]``) whose arguments are all computed
        on the agenda, in creation order; count the others as waiting."""
        unresolved, start = self.unresolved, self.start
        for k in range(len(pending)):
            if pending[k]:
                if unresolved[k] == 0:
                    self._join(start + k)
                else:
                    self.waiting += 1

    def _join(self, node: int) -> None:
        """Put ``node`` on the agenda, last of its signature's group."""
        s = self.signature[node]
        nodes = self.group[s]
        if nodes is None:
            self.group[s] = self.ready[s] = [node]
        else:
            nodes.append(node)

    def run(self, signature: int, nodes=None) -> tuple:
        """Take ``nodes`` (default: all) of ``signature`` off the agenda as the next batch and
        count down their users. Returns ``(batch, ready)``: the batch, and the users that
        joined the agenda, in the order they did."""
        if nodes is None:
            batch = self.ready.pop(signature)
            self.group[signature] = None
        else:
            batch, taken = list(nodes), set(nodes)
            left = [i for i in self.ready[signature] if i not in taken]
            if left:
                self.ready[signature] = self.group[signature] = left
            else:
                del self.ready[signature]
                self.group[signature] = None
        unresolved, user_start, users, start = (self.unresolved, self.user_start, self.users,
                                                self.start)
        ready = []
        for i in batch:
            k = i - start
            for e in range(user_start[k], user_start[k + 1]):
                u = users[e]
                unresolved[u - start] -= 1
                if unresolved[u - start] == 0:
                    ready.append(u)
        for node in ready:
            self._join(node)
        self.waiting -= len(ready)
        return batch, ready


def run_agenda(view, rule: Rule, log=None) -> list:
    """The agenda loop: until the agenda is empty, run the group ``rule`` chooses. With a
    ``log`` (:class:`~batchviz.schedule.decisions.DecisionLog`), every step is recorded."""
    agenda = Agenda(view)
    batches = []
    # the rule's methods, looked up once, not at every step
    choose, take, ran = rule.choose, rule.nodes, rule.ran
    while agenda:
        signature = choose(agenda)
        nodes = take(signature, agenda)
        if log is not None:
            log.record(agenda, rule, signature,
                       agenda.ready[signature] if nodes is None else nodes)
        batch, ready = agenda.run(signature, nodes)
        ran(signature, batch, ready)
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
    first pending node. (The sums are kept per signature id in int64 arrays; dividing them
    gives the same floats as Python's ``total / count``.)"""
    return depth_averages(view.signature, view.depth, view.pending_mask(), view.start,
                          len(view.graph.sigtab))


def depth_averages(signature: list, depth: list, pending: bytearray, start: int,
                   n_signatures: int) -> dict:
    """:func:`average_depths` of the nodes ``start + k`` with ``pending[k]``."""
    total = array("q", bytes(8 * n_signatures))
    count = array("q", bytes(8 * n_signatures))
    order = []
    for k in range(len(pending)):
        if pending[k]:
            s = signature[start + k]
            if count[s] == 0:
                order.append(s)
            total[s] += depth[start + k]
            count[s] += 1
    return {s: total[s] / count[s] for s in order}


class LowestAverageDepth(Rule):
    """The paper's rule. ``priority[s]`` is ``(average depth, heavy, s)``: the key."""

    key_names = ("average depth", "cost")

    def __init__(self, priority: dict):
        self.priority = priority
        # each signature's place in the order of its key, by signature id, asked for by
        # ``choose`` at every step: comparing two numbers costs less than comparing two
        # keys (the keys differ, since each ends with its signature, so the lowest place is
        # the lowest key)
        ranked = sorted(priority, key=priority.__getitem__)
        self.place = [len(ranked)] * (max(ranked) + 1 if ranked else 0)
        for k in range(len(ranked)):
            self.place[ranked[k]] = k

    def choose(self, agenda) -> int:
        return lowest_place(agenda.ready, self.place)

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


def lowest_place(ready: dict, place: list) -> int:
    """The signature among ``ready`` whose ``place`` is the lowest (a loop, not ``min`` with
    a key function: compiled, it reads each place without a call)."""
    chosen, lowest = -1, len(place) + 1
    for s in ready:
        here = place[s]
        if here < lowest:
            chosen, lowest = s, here
    return chosen


class AgendaBatching(AgendaStrategy):
    """The paper's agenda batching: :class:`LowestAverageDepth` over the agenda."""

    name = "agenda"
    trusted = True

    def priority(self, view) -> dict:
        """The sort key of each signature: (average depth, heavy after cheap, signature id).
        Written once: the rule and the traces read it."""
        avg = average_depths(view)
        return {s: (d, not view.is_cheap(s), s) for s, d in avg.items()}

    def rule(self, view) -> Rule:
        return LowestAverageDepth(self.priority(view))
