"""Colours: one fill per node state, one outline colour per signature.

State fills are light enough for black text; the batch of the current step is the one
strong colour in the picture. Signature colours come from a qualitative palette assigned
in signature order, so a graph's colours are the same in every picture of it.
"""
from __future__ import annotations

from ..trace.timeline import AGENDA, BATCH, DONE, WAITING

STATE_FILL = {
    DONE: "#d9d9d9",     # grey: computed
    BATCH: "#ff9f43",    # orange: computed by this step's batch
    AGENDA: "#fff3b0",   # pale yellow: all arguments computed, on the agenda
    WAITING: "#ffffff",  # white: an argument is not computed yet
}
STATE_TEXT = {DONE: "#6b6b6b", BATCH: "#000000", AGENDA: "#000000", WAITING: "#000000"}
STATE_LABEL = {DONE: "done", BATCH: "in this step's batch", AGENDA: "on the agenda",
               WAITING: "waiting"}

# Tableau-like qualitative colours, dark enough to read as outlines on every fill
# (no grey: grey means "done")
_PALETTE = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
            "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
            "#31a354", "#e6550d"]


def signature_colours(signatures) -> dict:
    """``{signature: colour}`` for the signatures in the given order (cycling the palette)."""
    return {s: _PALETTE[k % len(_PALETTE)] for k, s in enumerate(signatures)}


def tint(colour: str, amount: float = 0.75) -> str:
    """``colour`` mixed with white (``amount`` of white): a light fill for a signature."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * amount) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)
