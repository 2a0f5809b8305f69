"""Scheduling strategies and their registry.

``bv.Graph(strategy=...)`` accepts a registered name (``"none"``, ``"depth"``, ``"agenda"``,
...) or any :class:`Strategy` object. :func:`register_strategy` adds a name."""
from __future__ import annotations

from .agenda import (Agenda, AgendaBatching, AgendaStrategy, LowestAverageDepth, average_depths,
                     record_decisions, replayed, run_agenda)
from .arrays import PendingArrays
from .base import FlatSchedule, Schedule, Strategy, flat_schedule, schedule, validate_schedule
from ..errors import ScheduleError
from .decisions import Candidate, Decision, DecisionLog, Rule
from .layout import LayoutBatching
from .lookahead import LookaheadBatching
from .simple import DepthBatching, NoBatching
from .view import PendingView

#: registered name -> Strategy subclass or object; the built-in ones first
STRATEGIES: dict[str, type] = {cls.name: cls for cls in (
    NoBatching, DepthBatching, AgendaBatching, LookaheadBatching, LayoutBatching)}
BUILT_IN = frozenset(STRATEGIES)


def register_strategy(strategy, name: str | None = None, *, replace: bool = False):
    """Make ``strategy`` (a :class:`Strategy` subclass or object) available by name:
    ``bv.Graph(strategy=name)``, ``bv.explain(loss, strategies=[name])``. Usable as a
    decorator. ``name`` defaults to the strategy's ``name`` attribute.

    The built-in names (``"none"``, ``"depth"``, ``"agenda"``, ``"lookahead"``, ``"layout"``)
    are refused unless ``replace=True``: a student's strategy that happened to be called
    ``"agenda"`` would otherwise silently take the place of the one every notebook compares
    against.
    A name you registered yourself may be registered again (re-running a notebook cell)."""
    _refuse_a_rule(strategy, "register_strategy")
    _check_registration(strategy, name)
    key = strategy.name if name is None else name
    if key in BUILT_IN and not replace:
        raise ValueError(
            f"{key!r} is the name of a built-in strategy; give yours another name, or pass "
            f"replace=True to replace the built-in {key!r}")
    STRATEGIES[key] = strategy
    return strategy


def _check_registration(strategy, name) -> None:
    """TypeErrors that say which argument is which: ``register_strategy(strategy, name)``."""
    if isinstance(strategy, str):
        swapped = "" if name is None else (
            f" and {_describe(name)} second: call register_strategy({_name_of(name)}, "
            f"{strategy!r})")
        raise TypeError(
            "register_strategy(strategy, name) takes the strategy first and its name second; "
            f"got the string {strategy!r} first{swapped}")
    problem = _not_a_strategy(strategy)
    if problem:
        raise TypeError(f"register_strategy needs a bv.Strategy subclass or object: {problem}")
    own_name = getattr(strategy, "name", None)
    if name is None and not (isinstance(own_name, str) and own_name not in ("", "?")):
        raise TypeError(f"{_describe(strategy)} has no name: set name = \"...\" in the class, "
                        "or call register_strategy(strategy, \"my-name\")")
    if name is not None and not (isinstance(name, str) and name):
        raise TypeError(f"a strategy's name must be a non-empty string, got {_describe(name)}")


def _not_a_strategy(strategy) -> str:
    """What keeps ``strategy`` from being registered, or "" if nothing: a Strategy subclass
    that defines ``schedule``, or an object with a ``schedule`` method (strategies are
    duck-typed where they are used)."""
    if isinstance(strategy, type):
        if not issubclass(strategy, Strategy):
            return f"{_describe(strategy)} does not subclass bv.Strategy"
        if strategy.schedule is Strategy.schedule:
            return f"{_describe(strategy)} defines no schedule(self, view) method"
        return ""
    if isinstance(strategy, Strategy) and type(strategy).schedule is Strategy.schedule:
        return f"{_describe(strategy)} defines no schedule(self, view) method"
    if not callable(getattr(strategy, "schedule", None)):
        return f"{_describe(strategy)} has no schedule(view) method"
    return ""


def _name_of(value) -> str:
    """How the user's code probably spells ``value``: its class name."""
    return value.__name__ if isinstance(value, type) else f"{type(value).__name__}()"


def _describe(value) -> str:
    if isinstance(value, type):
        return f"the class {value.__name__}"
    return f"{type(value).__name__} {value!r}"


def _is_rule(value) -> bool:
    return isinstance(value, Rule) or (isinstance(value, type) and issubclass(value, Rule))


def _refuse_a_rule(value, where: str) -> None:
    """A :class:`Rule` given where a strategy is expected: a ScheduleError that shows how to
    wrap it. (A rule ranks the groups on the agenda; the agenda loop that asks it is an
    AgendaStrategy's, so a rule alone schedules nothing.)"""
    if not _is_rule(value):
        return
    rule = value.__name__ if isinstance(value, type) else type(value).__name__
    shown = rule if isinstance(value, type) else f"{rule}()"
    raise ScheduleError(
        f"{where}: the rule {shown} (a bv.Rule) was given where a strategy is expected; a "
        "rule chooses among the groups on the agenda, a strategy runs the agenda with it. "
        f"Wrap it in a bv.AgendaStrategy - `class My{rule}Strategy(bv.AgendaStrategy): "
        f"name = \"my-{rule.lower()}\"; def rule(self, view): return {rule}()` (a new rule "
        f"per schedule) - and pass My{rule}Strategy()")


def resolve_strategy(strategy) -> Strategy:
    """A Strategy object for a name, a Strategy subclass or a Strategy instance; a
    ScheduleError for a :class:`Rule` (saying how to wrap it), a TypeError otherwise."""
    _refuse_a_rule(strategy, "strategy")
    if isinstance(strategy, str):
        found = STRATEGIES.get(strategy)
        if found is None:
            raise ValueError(
                f"unknown strategy {strategy!r}; valid strategies are "
                + ", ".join(repr(k) for k in STRATEGIES)
                + " (or pass a bv.Strategy object)")
        return found() if isinstance(found, type) else found
    if isinstance(strategy, type) and issubclass(strategy, Strategy):
        return strategy()
    if isinstance(strategy, Strategy) or callable(getattr(strategy, "schedule", None)):
        return strategy
    raise TypeError(f"strategy must be a name or a bv.Strategy, got {_describe(strategy)}")


__all__ = ["Strategy", "PendingView", "PendingArrays", "Schedule", "FlatSchedule",
           "flat_schedule", "schedule", "validate_schedule", "register_strategy",
           "resolve_strategy", "STRATEGIES", "NoBatching", "DepthBatching", "AgendaBatching",
           "average_depths", "LookaheadBatching", "LayoutBatching", "AgendaStrategy", "Agenda", "Rule",
           "LowestAverageDepth", "Candidate", "Decision", "DecisionLog", "record_decisions",
           "replayed",
           "run_agenda"]
