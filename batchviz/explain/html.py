"""The report as HTML: Jupyter's rich display and a standalone page.

Besides the tables it shows two kinds of small inline SVG pictures: a picture of the
graph (one box per signature and depth band, drawn by batchviz's own SVG drawer so it needs
no Graphviz), and per strategy a strip of its batches in execution order, bar height the
batch size on a log scale: "none" is a flat comb, agenda a few tall bars.

The graph's picture is shown at its natural size, where its text is 11 px, below the
tables where it has the cell's width: never shrunk to fit a box. Its rows of boxes wrap at
the width of a notebook cell, and a graph too large for about a screen (``THUMBNAIL_SIZE``)
is summarised further: wider depth bands, so fewer boxes (:func:`_thumbnail`). A picture
still taller than a screen scrolls in its box.
"""
from __future__ import annotations

import math
import re
from html import escape

import numpy as np

from ..signature_names import display_names
from ..viz.palette import signature_colours
from ..viz.scene import build_scene, paint_signatures
from ..viz.svg import draw_scene
from ..viz.table import DrawTable
from .text import header_lines, note_lines, signature_table, strategy_table

CSS = """
.bv-explain{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:13px;color:#222}
.bv-explain h3{margin:4px 0 2px 0;font-size:15px}
.bv-explain p{margin:2px 0}
.bv-explain table{border-collapse:collapse;margin:8px 12px 8px 0}
.bv-explain th,.bv-explain td{padding:3px 10px;text-align:right;border-bottom:1px solid #e4e4e4}
.bv-explain th:first-child,.bv-explain td:first-child{text-align:left}
.bv-explain th{background:#f4f4f4}
.bv-explain .bv-best{color:#137333;font-weight:600}
.bv-explain .bv-flex{display:flex;flex-wrap:wrap;align-items:flex-start;gap:12px}
.bv-explain .bv-thumb{max-width:100%;max-height:THUMB_Hpx;overflow:auto;margin:6px 0}
.bv-explain .bv-thumb svg{display:block;border:1px solid #e4e4e4}
.bv-explain .bv-verdict{font-weight:600;color:#0b5394;margin-top:6px}
.bv-explain .bv-note{color:#666}
"""

MAX_THUMBNAIL_SIGNATURES = 60
#: the graph's picture fits in (CSS px, width x height): a notebook cell at 1280 x 800 with
#: JupyterLab's sidebar open is some 840 px wide, and a picture taller than a screen is not
#: a summary
THUMBNAIL_SIZE = (820, 640)
#: the box counts tried, most detail first, until the picture fits ``THUMBNAIL_SIZE``
THUMBNAIL_BOXES = (40, 20, 10, 5, 1)
CSS = CSS.replace("THUMB_H", str(THUMBNAIL_SIZE[1]))
_VIEWBOX = re.compile(r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"')


def _strip(e, name: str, colours: dict, top: float) -> str:
    sizes, sigs = e._strips.get(name, (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)))
    width, height = 180, 34
    bins = min(len(sizes), width)
    bars = []
    for k in range(bins):
        lo, hi = k * len(sizes) // bins, (k + 1) * len(sizes) // bins
        j = lo + int(np.argmax(sizes[lo:hi]))
        h = max(1.0, height * math.log1p(int(sizes[j])) / math.log1p(top))
        bars.append(f'<rect x="{k * width / bins:.1f}" y="{height - h:.1f}" '
                    f'width="{max(width / bins - 0.3, 0.4):.1f}" height="{h:.1f}" '
                    f'fill="{colours.get(int(sigs[j]), "#888")}"/>')
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{len(sizes)} batches of {name}, '
            f'in execution order (bar height: batch size, log scale)</title>{"".join(bars)}</svg>')


def _thumbnail(e) -> str:
    a, graph = e._arrays, e._graph
    if a is None or graph is None:
        return ""
    present = np.unique(a.sig[~a.is_param])
    if len(present) > MAX_THUMBNAIL_SIGNATURES:
        return (f'<p class="bv-note">({len(present)} signatures: too many to draw a '
                "thumbnail; use bv.render on a trace)</p>")
    table = DrawTable(sig=a.sig, depth=a.depth, is_param=a.is_param, arg_flat=a.arg_flat,
                      arg_user=a.arg_user, label=None, tooltip=None,
                      sig_names={int(s): graph.signature_name(int(s)) for s in present},
                      display_names=display_names(graph, set(graph.sigs)))
    shortest = None  # (height, svg): shown when no summary is short enough
    for boxes in THUMBNAIL_BOXES:
        scene = build_scene(table, collapse=True, max_boxes=boxes)
        scene.note = ""  # the expand hint is about bv.render, not this picture
        svg = draw_scene(scene, paint_signatures(f"the graph: {e.nodes} nodes by signature and depth"),
                         max_width=THUMBNAIL_SIZE[0])
        height = float(_VIEWBOX.search(svg).group(2))
        if height <= THUMBNAIL_SIZE[1]:
            return f'<div class="bv-thumb">{svg}</div>'
        if shortest is None or height < shortest[0]:
            shortest = (height, svg)
    return f'<div class="bv-thumb">{shortest[1]}</div>'


def render_html(e) -> str:
    colours = {}
    if e._arrays is not None:
        colours = signature_colours(np.unique(e._arrays.sig[~e._arrays.is_param]).tolist())
    out = [f'<div class="bv-explain"><style>{CSS}</style><h3>batchviz explain</h3>']
    out += [f"<p>{escape(line)}</p>" for line in header_lines(e)]
    header, rows = strategy_table(e)
    out.append("<div class='bv-flex'><table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in header)
               + "</tr>")
    for label, cells, best in rows:
        out.append(f"<tr><td>{escape(label)}</td>" + "".join(
            f'<td class="bv-best">{escape(c)}</td>' if k == best else f"<td>{escape(c)}</td>"
            for k, c in enumerate(cells)) + "</tr>")
    top = max((int(s[0].max()) for s in e._strips.values() if len(s[0])), default=1)
    out.append("<tr><td>batches, in order</td>" + "".join(
        f"<td>{_strip(e, name, colours, top)}</td>" for name in e.strategies) + "</tr></table>")
    out.append("</div>" + _thumbnail(e))
    header, rows = signature_table(e)
    out.append("<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr>")
    for sig, r in zip(e.rows, rows):  # the short name shown, the full one on hover
        out.append(f'<tr><td title="{escape(sig.name)}">{escape(r[0])}</td>'
                   + "".join(f"<td>{escape(c)}</td>" for c in r[1:]) + "</tr>")
    out.append("</table><ul>")
    for line in note_lines(e):
        out.append(f"<li>{escape(line.strip().lstrip('- '))}</li>")
    out.append(f'</ul><p class="bv-verdict">verdict: {escape(e.verdict)}</p></div>')
    return "\n".join(out)


def standalone_page(e) -> str:
    return ("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>batchviz explain</title>"
            "</head><body>\n" + render_html(e) + "\n</body></html>\n")
