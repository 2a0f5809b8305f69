"""The fallback drawing: a scene drawn to SVG by hand, for machines without Graphviz.

networkx places the boxes (``topological_generations`` gives the rows - a node's row is
its depth among the drawn boxes - and ``multipartite_layout`` spreads each row); the SVG
is a handful of rectangles, lines and text. No edge routing and no crossing minimisation:
less pretty than Graphviz, but the states and signatures read the same way.
"""
from __future__ import annotations

from html import escape

from ..trace.timeline import BATCH, STATES
from ..words import wrap_words
from .palette import STATE_FILL, STATE_LABEL, tint

BOX_W, GROUP_W, BOX_H, ROW_H, GAP = 104, 150, 34, 74, 14


def _layers(g, scene) -> dict:
    """Row of each box: its topological generation, except that leaves (inputs, zeros)
    hang just above their first user instead of all sitting in the top row. A collapsed
    picture whose depth bands join nodes of different depths can have cycles between boxes;
    its rows are then the bands' smallest depths."""
    import networkx as nx

    if nx.is_directed_acyclic_graph(g):
        layer = {}
        for row, generation in enumerate(nx.topological_generations(g)):
            for key in generation:
                layer[key] = row
    else:
        rows = sorted({sn.layer for sn in scene.nodes})
        index = {depth: k for k, depth in enumerate(rows)}
        return {sn.key: index[sn.layer] for sn in scene.nodes}
    for key in g:
        if g.in_degree(key) == 0 and g.out_degree(key) > 0:
            layer[key] = min(layer[u] for u in g.successors(key)) - 1
    return layer


def _order_rows(g, layer: dict) -> dict:
    """Order boxes within rows by the mean position of their neighbours (three sweeps of
    the barycentre heuristic): fewer crossing lines, no layout engine needed."""
    rows: dict = {}
    for key in g:  # scene order to start with
        rows.setdefault(layer[key], []).append(key)
    place = {}

    def spread(row_keys):
        n = len(row_keys)
        for i, k in enumerate(row_keys):
            place[k] = (i + 0.5) / n

    for keys in rows.values():
        spread(keys)
    for neighbours, order in ((g.predecessors, sorted(rows)), (g.successors, sorted(rows, reverse=True)),
                              (g.predecessors, sorted(rows))):
        for r in order:
            def mean(k):
                xs = [place[m] for m in neighbours(k)]
                return sum(xs) / len(xs) if xs else place[k]
            rows[r].sort(key=mean)
            spread(rows[r])
    return rows


def _wrap_rows(rows: dict, per_row: int) -> dict:
    """Rows of more than ``per_row`` boxes split into several, in order."""
    out = {}
    for row in sorted(rows):
        keys = rows[row]
        for start in range(0, len(keys), per_row):
            out[len(out)] = keys[start:start + per_row]
    return out


def _layout(scene, per_row: int | None = None) -> dict:
    """``{key: (x in [0, 1], row)}`` from networkx's multipartite layout; ``per_row``:
    at most that many boxes side by side (longer rows wrap)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(sn.key for sn in scene.nodes)
    g.add_edges_from((t, h) for t, h, _ in scene.edges)
    if g.number_of_nodes() == 0:
        return {}
    layer = _layers(g, scene)
    top = min(layer.values())
    rows = {row - top: keys for row, keys in sorted(_order_rows(g, layer).items())}
    if per_row:
        rows = _wrap_rows(rows, per_row)
    # a dict of ordered lists keeps our order within rows (node attributes would not)
    pos = nx.multipartite_layout(g, subset_key=rows, align="horizontal")
    row_of = {key: row for row, keys in rows.items() for key in keys}
    return {key: (float(x), row_of[key]) for key, (x, _) in pos.items()}


def _fit(text: str, width_px: float, char_px: float = 6.2) -> str:
    limit = max(4, int(width_px / char_px))
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def draw_scene(scene, paint, note: str = "", max_width: float | None = None) -> str:
    """SVG text of ``scene`` painted with ``paint`` (``note``: a line at the bottom).
    ``max_width`` (px, at least 520): rows of boxes wider than that wrap, so the picture
    fits a box that wide at its natural size (11 px text)."""
    box_w = GROUP_W if scene.collapsed else BOX_W
    per_row = None if max_width is None else max(1, int((max_width - GAP) // (box_w + GAP)))
    where = _layout(scene, per_row)
    rows = max((r for _, r in where.values()), default=0) + 1
    per_row: dict = {}
    for _, r in where.values():
        per_row[r] = per_row.get(r, 0) + 1
    widest = max(per_row.values(), default=1)
    width = max(520, widest * box_w + (widest + 1) * GAP)
    xs = [x for x, _ in where.values()]
    lo, hi = (min(xs), max(xs)) if xs else (0.0, 0.0)
    caption_lines = [part for line in paint.caption.split("\n")
                     for part in wrap_words(line, int(width / 6.8))]
    top = 16 + 16 * len(caption_lines)
    margin = GAP + GROUP_W / 2

    def point(key):
        x, r = where[key]
        px = width / 2 if hi == lo else margin + (x - lo) / (hi - lo) * (width - 2 * margin)
        return px, top + BOX_H / 2 + r * ROW_H

    legend_lines = wrap_words(note, int(width / 6.4)) if note else []
    legend_top = top + rows * ROW_H
    sig_rows = (len(scene.legend) + 3) // 4
    height = (legend_top + 8 + 22 * (sig_rows + (paint.counts is not None))
              + 16 * (len(legend_lines) + bool(scene.note)) + 12)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica, Arial, sans-serif" '
           'font-size="11">',
           '<defs><marker id="bv-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#8a8a8a"/></marker></defs>',
           '<rect width="100%" height="100%" fill="#ffffff"/>']
    for k, line in enumerate(caption_lines):
        out.append(f'<text x="{GAP}" y="{18 + 16 * k}" font-size="12">{escape(line)}</text>')
    half = {sn.key: (GROUP_W if sn.group else BOX_W) / 2 for sn in scene.nodes}
    for tail, head, count in scene.edges:
        (x1, y1), (x2, y2) = point(tail), point(head)
        if y1 == y2:  # within one row (a collapsed depth band): side to side
            side = 1 if x2 > x1 else -1
            x1, x2 = x1 + side * half[tail], x2 - side * half[head]
        else:         # bottom of the argument to the top of its user
            y1, y2 = y1 + BOX_H / 2, y2 - BOX_H / 2
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                   f'stroke="#8a8a8a" stroke-width="{1 if count == 1 else 2}" '
                   'marker-end="url(#bv-arrow)"/>')
    counts = paint.counts
    for k, sn in enumerate(scene.nodes):
        x, y = point(sn.key)
        w = GROUP_W if sn.group else BOX_W
        colour = scene.colours[sn.signature]
        row = None if counts is None else counts[k].tolist()
        out.append(f'<g><title>{escape(sn.tooltip)}</title>')
        x0, y0 = x - w / 2, y - BOX_H / 2
        if row is None:
            out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w}" height="{BOX_H}" rx="6" '
                       f'fill="{tint(colour)}"/>')
        else:
            total = sum(row) or 1
            left = x0
            for state, c in zip(STATES, row):
                if c:
                    part = w * c / total
                    out.append(f'<rect x="{left:.1f}" y="{y0:.1f}" width="{part:.1f}" '
                               f'height="{BOX_H}" fill="{STATE_FILL[state]}"/>')
                    left += part
        thick = 3 if row is not None and row[STATES.index(BATCH)] else 1.5
        out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w}" height="{BOX_H}" '
                   f'rx="{0 if sn.group else 6}" fill="none" stroke="{colour}" stroke-width="{thick}"/>')
        out.append(f'<text x="{x:.1f}" y="{y - 3:.1f}" text-anchor="middle">{escape(_fit("".join(sn.lines[:-1]), w))}</text>')
        out.append(f'<text x="{x:.1f}" y="{y + 12:.1f}" text-anchor="middle" '
                   f'fill="#444444">{escape(_fit(sn.lines[-1], w))}</text></g>')
    y = legend_top + 8
    if counts is not None:
        x = GAP
        for state in STATES:
            out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{STATE_FILL[state]}" '
                       'stroke="#999999"/>')
            out.append(f'<text x="{x + 16}" y="{y + 10}">{escape(STATE_LABEL[state])}</text>')
            x += 30 + 6.2 * len(STATE_LABEL[state])
        y += 22
    for k in range(0, len(scene.legend), 4):
        x = GAP
        for s in scene.legend[k:k + 4]:
            name = _fit(scene.names[s], width / 4 - 30)
            out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{tint(scene.colours[s])}" '
                       f'stroke="{scene.colours[s]}" stroke-width="2"/>')
            out.append(f'<text x="{x + 16}" y="{y + 10}">{escape(name)}</text>')
            x += width / 4
        y += 22
    if scene.note:
        out.append(f'<text x="{GAP}" y="{y + 10}" font-style="italic">{escape(scene.note)}</text>')
        y += 16
    for line in legend_lines:
        out.append(f'<text x="{GAP}" y="{y + 10}" fill="#a33">{escape(line)}</text>')
        y += 16
    out.append("</svg>")
    return "\n".join(out)
