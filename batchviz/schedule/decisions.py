"""A strategy's decisions, as it makes them: what was on the agenda, what it chose, and why.

A strategy that schedules with the agenda (§3.2) decides, at every step, which signature
group on the agenda runs next. A :class:`Rule` is that decision written as a *key*: the
group with the lowest key runs (the paper's rule: the lowest average depth, cheap ops
before heavy ones). The same key says why, in a trace: each group's key values are the
columns of the agenda table, and the rule's words say why the chosen group runs and why
each other one waits.

Decisions are recorded only when a trace asks for them (``view.decisions`` is a
:class:`DecisionLog`); otherwise nothing here runs. A strategy that does not schedule with
the agenda loop has its batches walked through the agenda afterwards
(:func:`~batchviz.schedule.agenda.replay`), which records the agenda at every step and the
strategy's own key where it gives one (:meth:`~batchviz.schedule.base.Strategy.describe`).
"""
from __future__ import annotations

from typing import NamedTuple

from ..errors import ScheduleError


class Candidate(NamedTuple):
    """One signature group on the agenda at one step."""

    signature: int
    size: int      # its nodes on the agenda
    key: tuple     # the values the rule ranks by (the rule's ``key_names``); lowest first
    note: str      # why it runs now, or why it waits, in the rule's words


class Decision(NamedTuple):
    """One step: the agenda's groups, best first by the rule, and the batch that ran."""

    candidates: tuple  # Candidates: the chosen one first, then the others by the rule's key
    chosen: int        # the batch's signature
    batch: tuple       # its nodes, in batch order
    waiting: int       # pending nodes still waiting for an argument


class DecisionLog:
    """Where a strategy's decisions go while a trace records them: ``key_names`` (the
    columns of the rule's key) and one :class:`Decision` per batch."""

    def __init__(self):
        self.key_names: tuple = ()
        self.decisions: list = []

    def record(self, agenda, rule, signature: int, batch) -> None:
        """The agenda just before ``batch`` (of ``signature``) runs, as ``rule`` sees it."""
        self.key_names = tuple(rule.key_names)
        keys = {s: checked_key(rule, s, agenda) for s in agenda.ready}
        # the chosen group first, then the others by the rule's key
        order = [signature] + sorted((s for s in keys if s != signature),
                                     key=lambda s: (keys[s], s))
        chosen = Candidate(signature, len(agenda.ready[signature]), keys[signature], "")
        candidates = []
        for s in order:
            c = Candidate(s, len(agenda.ready[s]), keys[s], "")
            note = rule.reason(c, [keys[t] for t in order if t != s]) if s == signature \
                else rule.waits(c, chosen)
            candidates.append(c._replace(note=note))
        self.decisions.append(Decision(tuple(candidates), signature, tuple(batch),
                                       agenda.waiting))


class Rule:
    """How a strategy on the agenda chooses the next batch, and says why.

    Subclasses give ``key_names`` and :meth:`~batchviz.Rule.key`; the group with the lowest key runs
    (ties: the lower signature id), all its agenda nodes unless :meth:`~batchviz.Rule.nodes`
    takes fewer.
    :meth:`~batchviz.Rule.ran` is told every batch and the nodes it made ready, for rules that keep
    counts. :meth:`~batchviz.Rule.reason` and :meth:`~batchviz.Rule.waits` put the key in words; their defaults name the
    key's first column that differs."""

    key_names: tuple = ()

    def key(self, signature: int, agenda) -> tuple:
        """What the rule ranks the group of ``signature`` on ``agenda`` by: a tuple, one value
        per ``key_names`` entry; the lowest runs first (see :meth:`~batchviz.Rule.choose`)."""
        raise NotImplementedError(f"{type(self).__name__} must define key(signature, agenda)")

    def choose(self, agenda) -> int:
        """The signature of the next batch: the lowest key on the agenda. Each key is
        checked (``checked_key``), so that a key the recording of decisions could not
        read fails here too, in a run as in a trace."""
        return min(agenda.ready, key=lambda s: (checked_key(self, s, agenda), s))

    def nodes(self, signature: int, agenda):
        """Which agenda nodes of ``signature`` run (None: all of them, the paper's rule)."""
        return None

    def ran(self, signature: int, batch: list, ready: list) -> None:
        """Told after each batch: its signature and nodes, and the nodes it made ready."""

    def reason(self, chosen: Candidate, other_keys: list) -> str:
        """Why ``chosen`` runs, given the keys of the other groups on the agenda."""
        if not other_keys:
            return "the only signature on the agenda"
        if not self.key_names:
            return "chosen"
        runner_up = min(other_keys)
        for name, mine, theirs in zip(self.key_names, chosen.key, runner_up):
            if mine != theirs:
                return f"lowest {name}"
        return "tie on every key broken by the lower signature id"

    def waits(self, candidate: Candidate, chosen: Candidate) -> str:
        """Why ``candidate`` waits while ``chosen`` runs."""
        for name, mine, theirs in zip(self.key_names, candidate.key, chosen.key):
            if mine != theirs:
                return f"waits: higher {name} ({_text(mine)} > {_text(theirs)})"
        return "waits: same key; the lower signature id runs first"


def checked_key(rule, signature: int, agenda) -> tuple:
    """``rule.key(signature, agenda)`` as a tuple, or a ScheduleError naming the rule and what
    its key was. Without this check a key of None ranks silently in a run (None ties with
    None) and fails only when a trace records it, deep in the recording."""
    key = rule.key(signature, agenda)
    if isinstance(key, tuple):
        return key
    if isinstance(key, list):
        return tuple(key)
    missing = " - is a `return` missing?" if key is None else ""
    raise ScheduleError(
        f"rule {type(rule).__name__}: key(signature {signature}, agenda) returned {key!r}; a "
        f"rule's key must be a tuple, one value per key_names entry {tuple(rule.key_names)!r} "
        f"(the group with the lowest key runs){missing}")


def _text(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)
