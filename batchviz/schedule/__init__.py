"""Scheduling strategies and their registry.

``bv.Graph(strategy=...)`` accepts a registered name (``"none"``, ``"depth"``, ``"agenda"``,
...) or any :class:`Strategy` object. :func:`register_strategy` adds a name."""
from __future__ import annotations

from .agenda import (Agenda, AgendaBatching, AgendaStrategy, LowestAverageDepth, average_depths,
                     record_decisions, run_agenda)
from .arrays import PendingArrays
from .base import FlatSchedule, Schedule, Strategy, flat_schedule, schedule, validate_schedule
from .decisions import Candidate, Decision, DecisionLog, Rule
from .lookahead import LookaheadBatching
from .simple import DepthBatching, NoBatching
from .view import PendingView

STRATEGIES: dict[str, type] = {}


def register_strategy(cls_or_obj, name: str | None = None):
    """Make a strategy available by name (``bv.Graph(strategy=name)``). Usable as a decorator."""
    key = name or cls_or_obj.name
    STRATEGIES[key] = cls_or_obj
    return cls_or_obj


for _cls in (NoBatching, DepthBatching, AgendaBatching, LookaheadBatching):
    register_strategy(_cls)


def resolve_strategy(strategy) -> Strategy:
    """A Strategy object for a name, a Strategy subclass or a Strategy instance."""
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
    raise TypeError(f"strategy must be a name or a bv.Strategy, got {type(strategy).__name__}")


__all__ = ["Strategy", "PendingView", "PendingArrays", "Schedule", "FlatSchedule",
           "flat_schedule", "schedule", "validate_schedule", "register_strategy",
           "resolve_strategy", "STRATEGIES", "NoBatching", "DepthBatching", "AgendaBatching",
           "average_depths", "LookaheadBatching", "AgendaStrategy", "Agenda", "Rule",
           "LowestAverageDepth", "Candidate", "Decision", "DecisionLog", "record_decisions",
           "run_agenda"]
