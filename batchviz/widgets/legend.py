"""The picture's keys as HTML, above the window of the picture.

A step shows only a window of its picture (``viewport.py``), so the keys that Graphviz
draws at the top of a picture (``bv.render``) would be out of view at most steps. The
widgets leave them out of the picture (``legend=False``) and show them here instead, as
page text: the state fills, the signatures' outline colours and, for a collapsed picture,
what a box stands for. The step's caption is the widget's header and counts.
"""
from __future__ import annotations

from html import escape

from ..trace.timeline import STATES, WAITING
from ..viz.palette import STATE_FILL, STATE_LABEL


def _key(fill: str, outline: str, name: str, title: str = "") -> str:
    hover = f' title="{escape(title)}"' if title else ""
    return (f'<span class="bv-key"{hover}><span class="bv-swatch" style="background:{fill};'
            f'border-color:{outline}"></span>{escape(name)}</span>')


def legend_html(scene) -> str:
    """The keys of pictures of ``scene`` (a ``batchviz.viz.scene.Scene``)."""
    states = " ".join(_key(STATE_FILL[s], "#999999" if s == WAITING else STATE_FILL[s],
                           STATE_LABEL[s]) for s in STATES)
    sigs = " ".join(_key("#ffffff", scene.colours[s], scene.names[s]) for s in scene.legend)
    more = f" and {scene.legend_more} more" if scene.legend_more else ""
    note = f'<div class="bv-legend-note">{escape(scene.note)}</div>' if scene.note else ""
    return (f'<div class="bv-legend"><div><b>fill</b>: {states}</div>'
            f"<div><b>outline</b>: {sigs}{more}</div>{note}</div>")
