"""SVG text made ready to sit inside an HTML page, with the node states as CSS classes.

Graphviz writes a standalone SVG document: an XML prolog, a DOCTYPE and ``xmlns``
declarations (all pointing at w3.org URLs), comments, and ids that repeat in every picture.
Inline in HTML none of that is needed (the HTML parser puts ``<svg>`` in the SVG namespace
by itself), and a page that must work offline should not even mention a URL. So we strip it.

We also add the state of each drawn box as CSS classes (``bv-done``, ``bv-batch``,
``bv-agenda``, ``bv-waiting``; ``bv-group`` for a collapsed box of several nodes) and its
DOT name as ``data-key``. Colours are for people; classes are for tests and for anyone who
wants to restyle the picture with CSS.

Finally :func:`split_pieces` cuts a picture at its node and edge groups. All steps of one
trace share their layout, so most pieces repeat from step to step; the static page stores
each distinct piece once.
"""
from __future__ import annotations

import re

import numpy as np

from ..trace.timeline import STATES

_PROLOG = re.compile(r"<\?xml[^>]*\?>\s*|<!DOCTYPE[^>]*>\s*|<!--.*?-->\s*", re.S)
_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')
_PAGE_ID = re.compile(r'(id="(?:a_)?)page\d+,\d+_')  # several graphs piped through one dot call
_DOT_NODE = re.compile(r'<g id="(node\d+)" class="node">(\s*)<title>([^<]*)</title>')
_FALLBACK_NODE = re.compile(r"<g><title>")
_SVG_OPEN = re.compile(r"<svg\b")
_PIECE = re.compile(r'(?=<g id="(?:node|edge)\d+" class="(?:node|edge))')
_WIDTH = re.compile(r'<svg\b[^>]*?\swidth="([0-9.]+)(pt|px)?"')
_FONT_SIZE = re.compile(r'font-size="([0-9.]+)"')

#: the smallest text a picture may be shown with, in CSS pixels (at the browser's 100%)
MIN_TEXT_PX = 11
#: CSS pixels per unit of an SVG width: Graphviz writes points (1 pt = 4/3 px)
_PX_PER_UNIT = {"pt": 4 / 3, "px": 1.0, None: 1.0}


def clean_svg(svg: str) -> str:
    """``svg`` without prolog, DOCTYPE, comments and namespace URLs; with the class
    ``bv-svg`` on its root element, so that a page can size it, and the narrowest width
    its text stays readable at (:func:`picture_size`) as its ``min-width``."""
    svg = _PROLOG.sub("", svg)
    svg = _XMLNS.sub("", svg)
    svg = _PAGE_ID.sub(r"\1", svg)
    _, narrowest = picture_size(svg)
    root = f'<svg class="bv-svg" style="min-width:{narrowest}px"' if narrowest else '<svg class="bv-svg"'
    return _SVG_OPEN.sub(root, svg, count=1).strip() + "\n"


def picture_size(svg: str) -> tuple:
    """``(width, min_width)`` of a picture in CSS pixels: its natural width, and the
    narrowest it may be drawn so that its smallest text is still :data:`MIN_TEXT_PX`
    (Graphviz's 10 pt labels are 13.3 px at natural size, so a picture may shrink to 82%)."""
    m = _WIDTH.search(svg)
    if m is None:
        return 0, 0
    px = _PX_PER_UNIT[m.group(2)]
    width = float(m.group(1)) * px
    smallest = min((float(f) for f in _FONT_SIZE.findall(svg)), default=MIN_TEXT_PX / px) * px
    return round(width), -int(-width * MIN_TEXT_PX // smallest)  # the latter rounded up


def state_classes(counts_row) -> str:
    """CSS classes of one box from its state counts (columns in ``STATES`` order)."""
    present = [f"bv-{state}" for state, c in zip(STATES, counts_row) if c]
    return " ".join(present)


def box_classes(scene, paint) -> dict:
    """``{DOT node name: "node bv-<state> ..."}`` for every box of a painted scene."""
    counts = paint.counts
    out = {}
    for k, sn in enumerate(scene.nodes):
        classes = ["node"]
        if sn.group:
            classes.append("bv-group")
        if counts is not None:
            classes.append(state_classes(np.asarray(counts[k]).tolist()))
        out[sn.key] = " ".join(c for c in classes if c)
    return out


def mark_states(svg: str, scene, paint) -> str:
    """Add each box's state classes and ``data-key`` to a picture of ``scene``.

    Works on Graphviz's SVG (boxes are found by their ``<title>``, the DOT node name) and on
    the pure-Python fallback drawing (boxes are ``<g><title>`` groups in scene order)."""
    classes = box_classes(scene, paint)

    def dot_box(m):
        key = m.group(3)
        cls = classes.get(key)
        if cls is None:
            return m.group(0)
        return f'<g id="{m.group(1)}" class="{cls}" data-key="{key}">{m.group(2)}<title>{key}</title>'

    marked, found = _DOT_NODE.subn(dot_box, svg)
    if found:
        return marked
    # the fallback drawing: one <g><title> per box, in scene order
    if len(_FALLBACK_NODE.findall(svg)) != len(scene.nodes):
        return svg
    keys = iter(scene.nodes)

    def fallback_box(_m):
        sn = next(keys)
        return f'<g class="{classes[sn.key]}" data-key="{sn.key}"><title>'

    return _FALLBACK_NODE.sub(fallback_box, svg)


def split_pieces(svg: str) -> list:
    """``svg`` cut in front of every node and edge group: ``"".join(pieces) == svg``."""
    return [p for p in _PIECE.split(svg) if p]
