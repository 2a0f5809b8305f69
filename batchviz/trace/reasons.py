"""Why a strategy chose the signature it ran at each step, in words.

For the built-in strategies the reason is derived from their rule, and checked against it:
the agenda strategy picks the signature of lowest average depth (ties: cheap before heavy,
then the lower signature id); depth batching runs depth after depth; no batching runs nodes
in creation order. Any other strategy - including a subclass that changes the rule - gets
the honest "chosen by <name>": the trace cannot know its reasons.
"""
from __future__ import annotations

from ..schedule import AgendaBatching, DepthBatching, NoBatching


def _uses_builtin(strategy, cls, *methods) -> bool:
    return isinstance(strategy, cls) and all(
        getattr(type(strategy), m) is getattr(cls, m) for m in methods)


class Reasons:
    """Callable ``reasons(agenda, sig, batch) -> str`` for one strategy on one view.

    ``agenda`` maps each signature on the agenda to its number of nodes there."""

    def __init__(self, strategy, view, priority: dict):
        self.name = strategy.name
        self.depth = view.depth
        self.priority = priority  # signature -> average depth over the pending graph
        self.cheap = {s: view.is_cheap(s) for s in priority}
        if _uses_builtin(strategy, AgendaBatching, "schedule", "priority"):
            self.rule = self._agenda
        elif _uses_builtin(strategy, DepthBatching, "schedule"):
            self.rule = self._depth
        elif _uses_builtin(strategy, NoBatching, "schedule"):
            self.rule = self._creation_order
        else:
            self.rule = self._custom

    def __call__(self, agenda: dict, sig: int, batch: list) -> str:
        return self.rule(agenda, sig, batch)

    def _agenda(self, agenda, sig, batch) -> str:
        avg, cheap = self.priority, self.cheap
        key = (avg[sig], not cheap[sig], sig)
        others = [s for s in agenda if s != sig]
        if any((avg[s], not cheap[s], s) < key for s in others):
            return self._custom(agenda, sig, batch)  # not the rule: do not pretend it was
        if not others:
            return "lowest average depth (the only signature on the agenda)"
        tied = [s for s in others if avg[s] == avg[sig]]
        if not tied:
            return "lowest average depth"
        if all(cheap[s] != cheap[sig] for s in tied):
            return "tie on average depth broken cheap-before-heavy"
        return "tie on average depth and cost broken by the lower signature id"

    def _depth(self, agenda, sig, batch) -> str:
        return f"depth {self.depth[batch[0]]}"

    def _creation_order(self, agenda, sig, batch) -> str:
        return "creation order"

    def _custom(self, agenda, sig, batch) -> str:
        return f"chosen by {self.name}"
