"""A scene as a ``graphviz.Digraph``: one DOT node per box, colours from the paint.

Every step of a trace produces the same DOT statements in the same order; only attribute
values (fill colours, pen widths, tooltips and the caption's text, which sits in a cell of
fixed size) change. So Graphviz lays every step out identically, and a widget can swap
pictures without anything moving.
"""
from __future__ import annotations

from html import escape

import graphviz

from ..trace.timeline import BATCH, DONE, STATES, WAITING
from ..words import wrap_words
from .dotcheck import DOT_MISSING, warn_dot_missing
from .palette import STATE_FILL, STATE_LABEL, STATE_TEXT, tint
from .svg import draw_scene

#: lines of a step's caption (``batchviz.viz.captions``); its cell is this tall at every step
CAPTION_LINES = 3


class BatchGraph(graphviz.Digraph):
    """A ``graphviz.Digraph`` of one step of a trace (everything graphviz offers works:
    ``.source``, ``.pipe()``, ``.render()``, inline display in Jupyter).

    Where Graphviz's ``dot`` is not installed, Jupyter display and :meth:`svg` fall back to
    a pure-Python drawing, with a warning saying how to install Graphviz."""

    scene = None
    paint = None

    def copy(self):
        new = super().copy()
        new.scene, new.paint = self.scene, self.paint
        return new

    def svg(self) -> str:
        """The picture as SVG text: Graphviz's layout, or the fallback drawing without dot."""
        try:
            return self.pipe(format="svg", encoding="utf-8")
        except graphviz.ExecutableNotFound:
            warn_dot_missing()
            return self.fallback_svg()

    def fallback_svg(self) -> str:
        """The pure-Python drawing (networkx layout), whether or not dot is installed."""
        return draw_scene(self.scene, self.paint, note=DOT_MISSING)

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        try:
            return super()._repr_mimebundle_(include, exclude, **kwargs)
        except graphviz.ExecutableNotFound:
            warn_dot_missing()
            return {"image/svg+xml": self.fallback_svg(), "text/plain": DOT_MISSING}


def _fill(counts) -> tuple:
    """(style, fillcolor) for a box whose members have these state counts."""
    total = int(sum(counts))
    parts = [(STATE_FILL[s], int(c)) for s, c in zip(STATES, counts) if c]
    if len(parts) <= 1:
        return "filled", parts[0][0] if parts else STATE_FILL["waiting"]
    spec = ":".join(f"{colour};{c / total:.3f}" for colour, c in parts)
    return "striped", spec


def node_attributes(sn, colour: str, row, by_signature: bool) -> dict:
    """The attributes a step may change; everything else is fixed by the structure."""
    attrs = {"color": colour}
    if by_signature:
        attrs.update(style="filled" if sn.group else "rounded,filled", fillcolor=tint(colour),
                     fontcolor="#000000", penwidth="1.5", tooltip=sn.tooltip)
        return attrs
    style, fill = _fill(row)
    if not sn.group:
        style = "rounded,filled"
    in_batch = row[STATES.index(BATCH)] > 0
    all_done = row[STATES.index(DONE)] == sum(row)
    states = ", ".join((f"{int(c)} " if sn.group else "") + STATE_LABEL[s]
                       for s, c in zip(STATES, row) if c)
    attrs.update(style=style, fillcolor=fill, fontcolor=STATE_TEXT[DONE if all_done else WAITING],
                 penwidth="3" if in_batch else "1.5", tooltip=f"{sn.tooltip}: {states}")
    return attrs


def _line(text: str) -> str:
    return f'<TR><TD ALIGN="LEFT">{text}</TD></TR>'


def _key(colour: str, name: str, square: str = "\u25a0") -> str:
    """A coloured square and its name; kept in one cell so that they never drift apart."""
    return f'<FONT COLOR="{colour}" POINT-SIZE="13">{square}</FONT> {escape(name)}'


def _legend(scene, paint, title: str, caption_width: int) -> str:
    """The graph's label: title, the step's caption (in a cell of fixed size, so that a
    longer caption never moves the layout), state colours, signature colours, notes."""
    rows = [_line(f"<B>{escape(title)}</B>")]
    if paint.caption:
        lines = '<BR ALIGN="LEFT"/>'.join(escape(line) for line in paint.caption.split("\n"))
        rows.append(f'<TR><TD ALIGN="LEFT" FIXEDSIZE="TRUE" WIDTH="{caption_width}" '
                    f'HEIGHT="{14 * CAPTION_LINES + 4}">{lines}<BR ALIGN="LEFT"/></TD></TR>')
    gap = "\u2003"
    if not paint.by_signature:
        keys = [_key(STATE_FILL[s], STATE_LABEL[s]) if s != WAITING
                else _key("#999999", STATE_LABEL[s], "\u25a1") for s in STATES]
        rows.append(_line("states: " + gap.join(keys)))
    sigs = scene.legend
    for k in range(0, len(sigs), 4):
        prefix = "signatures (outline): " if k == 0 else ""
        rows.append(_line(prefix + gap.join(_key(scene.colours[s], scene.names[s])
                                            for s in sigs[k:k + 4])))
    if scene.legend_more:
        rows.append(_line(f"and {scene.legend_more} more signatures"))
    if scene.note:  # a long sentence: in short lines, so that it never widens the picture
        lines = '<BR ALIGN="LEFT"/>'.join(escape(line) for line in wrap_words(scene.note, 64))
        rows.append(_line(f"<I>{lines}</I>"))
    return '<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2">' + "".join(rows) + "</TABLE>>"


def to_digraph(scene, paint, *, title: str, caption_width: int = 400,
               clusters: bool = False, legend: bool = True) -> BatchGraph:
    """``legend=False`` leaves out the graph's label (title, caption, keys): the widgets
    show those as HTML beside a picture that shows only part of the graph at a time."""
    g = BatchGraph(
        name="batchviz",
        graph_attr={"rankdir": "TB", "fontname": "Helvetica", "fontsize": "10",
                    "labelloc": "t", "labeljust": "l", "nodesep": "0.12", "ranksep": "0.35"},
        node_attr={"shape": "box", "fontname": "Helvetica", "fontsize": "10",
                   "margin": "0.05,0.02", "height": "0.3"},
        edge_attr={"color": "#8a8a8a", "arrowsize": "0.6"})
    g.scene, g.paint = scene, paint
    rows = paint.counts

    def add(target, k, sn):
        row = None if rows is None else rows[k].tolist()
        attrs = node_attributes(sn, scene.colours[sn.signature], row, paint.by_signature)
        target.node(sn.key, label="\\n".join(sn.lines), **attrs)

    if clusters:
        by_sig: dict = {}
        for k, sn in enumerate(scene.nodes):
            by_sig.setdefault(sn.signature, []).append((k, sn))
        for s, members in by_sig.items():
            with g.subgraph(name=f"cluster_s{s}") as c:
                colour = scene.colours[s]
                c.attr(label=scene.names.get(s, str(s)), color=colour, fontcolor=colour,
                       style="rounded,dashed")
                for k, sn in members:
                    add(c, k, sn)
    else:
        for k, sn in enumerate(scene.nodes):
            add(g, k, sn)
    for tail, head, count in scene.edges:
        if count > 1:
            g.edge(tail, head, penwidth=f"{min(1 + count.bit_length() / 2, 5):.1f}",
                   tooltip=f"{count} edges")
        else:
            g.edge(tail, head)
    if legend:
        g.attr(label=_legend(scene, paint, title, caption_width))
    g.attr(tooltip=title)
    return g
