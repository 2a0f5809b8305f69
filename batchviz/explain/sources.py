"""Why not batched, at the user's own lines.

When a signature takes more batches than its longest dependency chain needs (the chain is
what no strategy can beat, :mod:`batchviz.explain.bound`), something else split its nodes:
they became ready at different times, because the arguments they wait on are computed at
different times. If the graph recorded where each node was built (``record_source``), this
names the lines of the user's code whose nodes were split (more batches than the chain of
that line's own nodes needs), how many batches they took, and what they waited on, as
``torch._dynamo.explain`` names the lines that break a graph::

    tagger.py:41, `bv.tanh`: 2,560 nodes in 80 batches (their chain needs 1); they wait
    on `lstm_step·bilstm` at depths 3–121

"What they wait on" is, for every node of the line, its argument computed last (in the
latest batch): the signature most of those arguments have, and their depths.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ops import api as op_api
from ..schedule.chains import signature_chains
from ..sourcelines import where_text


@dataclass
class SplitNote:
    """The nodes one line of the user's code built for one signature, and what split them
    into more batches than they would need: "tagger.py:41, `bv.tanh`: 2,560 nodes in 80
    batches; they wait on `lstm_step` at depths 3–121"."""

    source: str               # ``tagger.py:41`` (the recorded ``path:line`` is ``path``)
    path: str
    call: str                 # what the line called: ``bv.tanh``, or the op's name
    signature: str            # the signature's short name
    nodes: int
    batches: int              # the batches those nodes ran in (the reference strategy's)
    chain_bound: int          # the longest dependency chain of these nodes
    waits_on: str             # the signature their latest argument has ("" for none)
    wait_depths: tuple        # the depths of those arguments (lowest, highest)


#: lines reported, the most batches first
TOP_LINES = 5


def split_notes(graph, a, flat, bounds: dict, batches_of: np.ndarray, names: dict,
                limit: int = TOP_LINES) -> list:
    """:class:`SplitNote` for the lines whose nodes took more batches than their own
    longest dependency chain needs, among the signatures that took more batches than theirs,
    in the schedule ``flat`` (a :class:`~batchviz.schedule.FlatSchedule`; ``batches_of``:
    its batches per signature). Empty when the graph did not record its nodes' lines.

    A line's own chain counts the nodes of that line and signature on one path: the
    ``h = o * tanh(c)`` of a Tree-LSTM needs a batch per level of the tree, and taking
    that many is no split, even where the signature's chain, through other lines' nodes
    too, is longer."""
    if graph.sources is None or len(flat) == 0:
        return []
    over = [s for s, bound in bounds.items() if batches_of[s] > bound]
    if not over:
        return []
    batch_of = np.full(a.n, -1, dtype=np.int64)
    batch_of[flat.order] = np.repeat(np.arange(len(flat), dtype=np.int64), flat.sizes)
    latest = _latest_arguments(a, batch_of)
    groups: dict = {}
    sources = graph.sources
    for i in np.flatnonzero(np.isin(a.sig, over) & ~a.is_param).tolist():
        groups.setdefault((sources[i], int(a.sig[i])), []).append(i)
    line_chains = _line_chains(a, list(groups.values()))
    notes = []
    for k, ((source, sig), members) in enumerate(groups.items(), 1):
        members = np.asarray(members, dtype=np.int64)
        batches = len(np.unique(batch_of[members]))
        if batches > line_chains[k]:
            notes.append(_note(graph, a, source, sig, members, batches, line_chains[k],
                               latest[members], names))
    notes.sort(key=lambda note: (-note.batches, -note.nodes, note.path))
    return notes[:limit]


def _line_chains(a, groups: list) -> dict:
    """``{k: longest chain of the nodes of groups[k - 1]}``: the signature chains
    (:func:`~batchviz.schedule.chains.signature_chains`) with each group as a signature of
    its own (and every other node in group 0)."""
    label = np.zeros(a.n, dtype=np.int64)
    for k, members in enumerate(groups, 1):
        label[members] = k
    return signature_chains(a.scheduled, label, a.depth, a.edge_ptr, a.edge_arg).longest


def _note(graph, a, source: str, sig: int, members, batches: int, bound: int, latest,
          names: dict) -> SplitNote:
    op = graph.sigtab[sig].op.name
    waits_on, depths = "", ()
    latest = latest[latest >= 0]
    if len(latest):
        their_sigs = a.sig[latest]
        common = int(np.bincount(their_sigs).argmax())
        waited = latest[their_sigs == common]
        waits_on = names[common]
        depths = (int(a.depth[waited].min()), int(a.depth[waited].max()))
    return SplitNote(source=where_text(source), path=source,
                     call=_call_of(graph, op, names[sig]),
                     signature=names[sig], nodes=len(members), batches=batches,
                     chain_bound=bound, waits_on=waits_on, wait_depths=depths)


def _call_of(graph, op: str, name: str) -> str:
    """What the user's line called: ``bv.tanh``; in a DyNet program, the op as DyNet writes
    it (``dy.cmult``, or the signature's name, ``V * x``), never a batchviz call the
    program did not make."""
    if getattr(graph, "names_ops_as", None) == "dynet":
        return f"dy.{name}" if name.isidentifier() else name
    return f"bv.{op}" if callable(getattr(op_api, op, None)) else op


def _latest_arguments(a, batch_of: np.ndarray) -> np.ndarray:
    """Per node, its scheduled argument computed in the latest batch (-1: none)."""
    latest = np.full(a.n, -1, dtype=np.int64)
    counts = np.diff(a.edge_ptr)
    has = np.flatnonzero(counts > 0)
    if len(has) == 0:
        return latest
    keys = batch_of[a.edge_arg] * a.n + a.edge_arg  # the latest batch wins; ties: a node id
    latest[has] = np.maximum.reduceat(keys, a.edge_ptr[has]) % a.n
    return latest


def split_lines(e) -> list:
    """The report's lines for the split notes of explanation ``e``: per strategy that split
    something, a heading and one line per line of the user's code."""
    out = []
    for name, notes in e.split.items():
        if notes:
            out.append(f"{name}: the lines of your code whose nodes took more batches than "
                       "their chain needs")
            out += [f"  - {note_text(note)}" for note in notes]
    return out


def note_text(note) -> str:
    """``tagger.py:41, `bv.tanh`: 2,560 nodes in 80 batches (their chain needs 1); they wait
    on `lstm_step·bilstm` at depths 3–121`` (the signature's name follows the call when it
    says more: ``bv.matmul (matmul·U)``)."""
    called = note.call.removeprefix("bv.").removeprefix("dy.")
    text = (f"{note.source}, `{note.call}`"
            + ("" if note.signature == called else f" ({note.signature})")
            + f": {note.nodes:,} nodes in {note.batches:,} batches (their chain needs "
            f"{note.chain_bound})")
    if note.waits_on:
        lo, hi = note.wait_depths
        text += (f"; they wait on `{note.waits_on}` at depth"
                 + (f" {lo}" if lo == hi else f"s {lo}\u2013{hi}"))
    return text
