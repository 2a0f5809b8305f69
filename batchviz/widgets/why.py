"""Why a signature on the agenda did *not* run at a step, in words.

The trace says why the chosen signature ran (``Step.reason``). A student stepping through a
schedule asks the other question too: why does that group of loss nodes sit on the agenda
instead of running now? For the built-in rules the answer follows from the rule:

* agenda batching runs the signature of lowest average depth (ties: cheap before heavy,
  then the lower signature id), so the others wait because their average depth is higher;
* depth batching runs depth after depth, so the others wait because their nodes are deeper;
* no batching runs nodes in creation order.

For any other strategy we do not guess: "not chosen by <name>".
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

AGENDA_RULE, DEPTH_RULE, CREATION_RULE, CUSTOM_RULE = "agenda", "depth", "none", "custom"


def rule_of(trace, step) -> str:
    """Which built-in rule made this step's choice, judged from the trace's own reason
    (the trace writes "chosen by <name>" whenever it cannot vouch for a built-in rule)."""
    if step.reason.startswith("chosen by"):
        return CUSTOM_RULE
    if trace.strategy in (AGENDA_RULE, DEPTH_RULE, CREATION_RULE):
        return trace.strategy
    return CUSTOM_RULE


@dataclass
class GroupFacts:
    """What the agenda holds of one signature at one step."""

    depth_min: int
    depth_max: int
    first_node: int   # the earliest-created node of this signature on the agenda


class AgendaFacts:
    """Per step and signature: the depths and first node of its nodes on the agenda
    (the nodes whose arguments are all computed, this step's batch included)."""

    def __init__(self, trace):
        self.timeline = trace.timeline()
        self.sig = np.fromiter((n.signature for n in trace.nodes), dtype=np.int64,
                               count=len(trace.nodes))
        self.depth = np.fromiter((n.depth for n in trace.nodes), dtype=np.int64,
                                 count=len(trace.nodes))

    def at(self, step: int) -> dict:
        """``{signature: GroupFacts}`` just before ``step`` runs."""
        codes = self.timeline.state_codes(step)
        on_agenda = np.flatnonzero((codes == 1) | (codes == 2))  # "batch" or "agenda"
        out = {}
        for s in np.unique(self.sig[on_agenda]).tolist():
            members = on_agenda[self.sig[on_agenda] == s]
            d = self.depth[members]
            out[s] = GroupFacts(int(d.min()), int(d.max()), int(members.min()))
        return out


def why_waiting(rule: str, strategy: str, group, chosen, facts: dict, cheap: dict,
                batch_depth: int) -> str:
    """Why agenda group ``group`` (an :class:`~batchviz.trace.AgendaGroup`) did not run
    while ``chosen`` (the chosen signature's group) did."""
    if rule == AGENDA_RULE:
        if group.priority > chosen.priority:
            return (f"waits: higher average depth ({group.priority:.2f} > "
                    f"{chosen.priority:.2f})")
        if cheap.get(group.signature) != cheap.get(chosen.signature):
            return "waits: same average depth; heavy ops run after cheap ones"
        return "waits: same average depth and cost; the lower signature id runs first"
    if rule == DEPTH_RULE:
        mine = facts.get(group.signature)
        if mine is not None and mine.depth_min > batch_depth:
            return f"waits: its nodes here are deeper (depth {mine.depth_min} > {batch_depth})"
        return f"waits: same depth {batch_depth}, runs in a batch of its own"
    if rule == CREATION_RULE:
        mine = facts.get(group.signature)
        if mine is not None:
            return f"waits: creation order (its first node #{mine.first_node} comes later)"
        return "waits: creation order"
    return f"not chosen by {strategy}"
