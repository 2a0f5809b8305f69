"""Pictures of traces: ``bv.render(trace, step=k)`` -> a ``graphviz.Digraph``.

Nodes are filled by their state at step ``k`` (done, in this step's batch, on the agenda,
waiting) and outlined in their signature's colour, with a legend. Every step of one trace
has the same DOT structure, so the layout never moves between steps. Large graphs are drawn
collapsed, one box per signature and depth; ``expand=dict(depth=(a, b))`` or
``expand=dict(signature="tanh")`` draws a region node by node. Without Graphviz's ``dot``
program the picture is drawn by a pure-Python fallback.
"""
from __future__ import annotations

from ..trace import Trace
from ..trace import trace as make_trace
from ..words import counted, step_label
from .dot import to_digraph
from .scene import DEFAULT_MAX_BOXES, DEFAULT_MAX_NODES, build_scene, paint_step
from .table import table_from_trace

__all__ = ["render", "captions", "fit_caption_width"]


def captions(trace) -> list:
    """Per step (and one for the end), the caption: three lines (``dot.CAPTION_LINES``: the
    step and its batch, the reason, the counts), each step named as everywhere else
    (:func:`~batchviz.words.step_label`)."""
    n = len(trace.steps)
    out = []
    for s in trace.steps:
        out.append(f"{step_label(s.index, n)}: {len(s.batch)} \u00d7 "
                   f"{trace.display_name(s.signature)}\nwhy: {s.reason}\n{s.done} done, "
                   f"{s.on_agenda} on the agenda, {s.waiting} waiting")
    out.append(f"{step_label(n, n)}: all {counted(trace.scheduled_nodes, 'node')} done" if n
               else "nothing to schedule")
    return out


def fit_caption_width(captions) -> int:
    """Width of the caption cell (points) that fits the longest line of these captions."""
    return 20 + 6 * max(len(line) for c in captions for line in c.split("\n"))


def render(trace, step: int = 0, *, expand=None, collapse=None, parameters: bool = False,
           clusters: bool = False, max_nodes: int = DEFAULT_MAX_NODES,
           max_boxes: int = DEFAULT_MAX_BOXES, strategy="agenda", caption_width: int | None = None,
           legend: bool = True):
    """Draw ``trace`` just before step ``step`` runs (``step=len(trace)``: after the last).

    ``trace`` may also be an expression or a graph, traced first with ``strategy``.
    ``collapse``: None (automatic above ``max_nodes`` drawn nodes), True or False.
    ``expand``: a region drawn node by node in a collapsed picture, ``dict(depth=(a, b))``
    and/or ``dict(signature=name or id or list)``. ``parameters``: also draw parameter
    nodes (done from the start). ``clusters``: box each signature's nodes in a cluster.
    ``caption_width``: the caption cell's width in points (default: fits this trace's
    captions); pictures of several traces of one graph given the same width get the same
    layout, so that they can be compared side by side. ``legend=False``: the boxes and
    edges alone, no title, caption or colour keys (the widgets show those as HTML).
    Returns a :class:`~batchviz.viz.dot.BatchGraph` (a ``graphviz.Digraph``)."""
    if not isinstance(trace, Trace):
        trace = make_trace(trace, strategy)
    timeline = trace.timeline()
    step = timeline.check_step(step)
    cache = trace._cache
    key = ("scene", parameters, collapse, repr(expand), max_nodes, max_boxes)
    if key not in cache:
        cache[key] = build_scene(table_from_trace(trace), parameters=parameters,
                                 collapse=collapse, expand=expand, max_nodes=max_nodes,
                                 max_boxes=max_boxes)
    if "captions" not in cache:
        lines = captions(trace)
        cache["captions"] = (lines, fit_caption_width(lines))
    lines, width = cache["captions"]
    if caption_width is not None:
        width = int(caption_width)
    scene = cache[key]
    title = (f"batchviz \u00b7 strategy {trace.strategy} ({trace.label}) \u00b7 "
             f"{counted(trace.scheduled_nodes, 'node')} \u00b7 {counted(len(trace.steps), 'batch')}")
    return to_digraph(scene, paint_step(scene, timeline, step, lines[step]), title=title,
                      caption_width=width, clusters=clusters, legend=legend)
