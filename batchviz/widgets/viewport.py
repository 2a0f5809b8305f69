"""The part of a picture a step shows: a window around the batch being run.

A graph of a few dozen nodes drawn with readable text (11 px and more) is taller than a
notebook's screen: Figure 1 is 1,350 px tall, and at step 12 its one orange box sits near
the bottom. Shown whole in a scrolling box, the student had to hunt for it. So every step
shows a *window* of the picture, as wide as the picture and about half a screen tall, with
the boxes of the step's batch inside it and some context around them.

* The layout never moves (every step of a trace has the same layout, ``pictures.py``); only
  the window does, and as little as it can: from one step to the next it stays put while
  the batch is inside it, else it slides just far enough. The windows of all steps are
  worked out at once, in order, so a step looks the same reached forward, back or by the
  slider.
* A batch can be spread over more than a window's height: agenda batching runs nodes of
  different depths together, and a batch of inputs sits all over the graph. Such a step
  shows several *strips* of the picture, one around each group of its boxes, stacked with
  a dashed line where a part of the graph is left out.
* A picture no taller than the window is shown whole.

Strips are windows of one picture: nested ``<svg>`` elements with their own ``viewBox``, so
the picture is cropped, never scaled (its text keeps its size), and no script is needed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: the window's height, in the picture's units (points): 300 pt are 400 px at the natural
#: size, which leaves room for the controls and the keys on a 800 px tall screen
WINDOW_HEIGHT = 300
#: context kept above and below the batch's boxes (points): about one row of boxes
MARGIN = 40
#: the least context a strip keeps when strips must share the window
MIN_MARGIN = 8
#: the space between two strips, where a dashed line marks the part left out (points)
GAP = 10

_ROOT = re.compile(r"<svg\b[^>]*>")
_ATTR = r'\s{}="([^"]*)"'
_NODE = re.compile(r'<g\b[^>]*\bdata-key="([^"]+)"[^>]*>(.*?)</g>', re.S)
_COORDS = re.compile(r'\s(?:points|d)="([^"]*)"')
_RECT = re.compile(r"<rect\b[^>]*>")
_NUMBER = re.compile(r"-?[0-9]*\.?[0-9]+(?:e-?[0-9]+)?")
_TRANSFORM = re.compile(r'<g id="graph0" class="graph" transform="([^"]*)"')


def _attr(tag: str, name: str):
    m = re.search(_ATTR.format(re.escape(name)), tag)
    return m.group(1) if m else None


def _set_attr(tag: str, name: str, value: str) -> str:
    return re.sub(_ATTR.format(re.escape(name)), f' {name}="{value}"', tag, count=1)


@dataclass(frozen=True)
class ViewBox:
    """A picture's ``viewBox`` and its ``height`` attribute (a number and a unit: ``pt``
    from Graphviz, none from the fallback drawing)."""

    x: float
    y: float
    width: float
    height: float
    unit_height: float
    unit: str

    @classmethod
    def of(cls, svg: str) -> "ViewBox":
        root = _ROOT.search(svg)
        tag = root.group(0) if root else ""
        box, height = _attr(tag, "viewBox"), _attr(tag, "height")
        if box is None or height is None:
            raise ValueError("the picture has no <svg> element with a viewBox and a height")
        x, y, w, h = (float(v) for v in box.replace(",", " ").split())
        m = re.fullmatch(r"([0-9.]+)([a-z]*)", height.strip())
        return cls(x, y, w, h, float(m.group(1)), m.group(2))

    @property
    def bottom(self) -> float:
        return self.y + self.height


def box_bounds(svg: str) -> dict:
    """``{data-key: (top, bottom)}``: where each marked box of ``svg`` is drawn, in the
    ``viewBox``'s units. Graphviz draws inside a group moved by ``translate(...)`` (and, for
    large graphs, ``scale(...)``); the fallback drawing in ``viewBox`` units directly."""
    sy, ty = 1.0, 0.0
    m = _TRANSFORM.search(svg)
    if m:
        scale = re.search(r"scale\(([-0-9.]+)[ ,]+([-0-9.]+)\)", m.group(1))
        move = re.search(r"translate\(([-0-9.]+)[ ,]+([-0-9.]+)\)", m.group(1))
        sy = float(scale.group(2)) if scale else 1.0
        ty = float(move.group(2)) if move else 0.0
    out = {}
    for key, body in _NODE.findall(svg):
        ys = []
        for coords in _COORDS.findall(body):
            ys += [float(v) for v in _NUMBER.findall(coords)][1::2]
        for rect in _RECT.findall(body):
            y, h = _attr(rect, "y"), _attr(rect, "height")
            if y is not None and h is not None and not h.endswith("%"):
                ys += [float(y), float(y) + float(h)]
        if ys:
            out[key] = (sy * (min(ys) + ty), sy * (max(ys) + ty))
    return out


def _strips(box: ViewBox, spans: list, margin: float) -> list:
    """``(top, bottom)`` strips around ``spans`` (each ``(top, bottom)`` of a box) with
    ``margin`` above and below, overlapping ones merged, kept inside the picture."""
    out = []
    for top, bottom in sorted(spans):
        top, bottom = max(box.y, top - margin), min(box.bottom, bottom + margin)
        if out and top <= out[-1][1] + GAP:
            out[-1] = (out[-1][0], max(out[-1][1], bottom))
        else:
            out.append((top, bottom))
    return out


def _tall(strips: list) -> float:
    return sum(b - t for t, b in strips) + GAP * (len(strips) - 1)


def window_height(box: ViewBox, batches: list) -> float:
    """One window height for all steps of a picture (so that the widget keeps its size):
    ``WINDOW_HEIGHT``, or what the most spread batch needs in strips with the least
    margins, never more than the picture. ``batches``: per step, its boxes' spans."""
    need = max((_tall(_strips(box, spans, MIN_MARGIN)) for spans in batches if spans), default=0)
    return min(box.height, max(WINDOW_HEIGHT, need))


def windows(box: ViewBox, batches: list, height: float) -> list:
    """Per step, the strips ``[(top, bottom), ...]`` it shows; ``batches[k]``: the spans of
    step ``k``'s boxes (empty at the end, where the last window stays).

    A batch that fits one window with ``MARGIN`` around it gets one strip ``height`` tall,
    moved as little as possible from the previous step's; else one strip per group of its
    boxes, with as much margin (``MARGIN`` down to ``MIN_MARGIN``) as the window allows."""
    lo, hi = box.y, box.bottom - height
    top = lo
    out = []
    for spans in batches:
        if spans:
            first, last = min(s[0] for s in spans), max(s[1] for s in spans)
            if last - first + 2 * MARGIN <= height:
                if first - MARGIN < top:
                    top = first - MARGIN
                elif last + MARGIN > top + height:
                    top = last + MARGIN - height
                top = min(max(top, lo), hi)
            else:
                margin = MARGIN
                while margin > MIN_MARGIN and _tall(_strips(box, spans, margin)) > height:
                    margin /= 2
                strips = _strips(box, spans, max(margin, MIN_MARGIN))
                out.append(strips)
                top = min(max(strips[0][0], lo), hi)
                continue
        out.append([(top, top + height)])
    return out


def crop(svg: str, box: ViewBox, strips: list, height: float) -> str:
    """``svg`` showing only ``strips`` of it, stacked in a picture ``height`` units tall and
    as wide as ``svg``, each a nested ``<svg>`` with its own ``viewBox`` (same scale, so the
    text keeps its size), a dashed line between two. A window as tall as the picture
    returns ``svg`` unchanged."""
    if height >= box.height:
        return svg
    root = _ROOT.search(svg)
    body = svg[root.end():svg.rindex("</svg>")]
    ratio = box.unit_height / box.height
    tag = _set_attr(root.group(0), "height", f"{height * ratio:.2f}{box.unit}")
    tag = _set_attr(tag, "viewBox", f"0 0 {box.width:g} {height:.2f}")
    parts, y = [tag], 0.0
    for k, (top, bottom) in enumerate(strips):
        if k:
            parts.append(f'<line class="bv-cut" x1="0" x2="{box.width:g}" y1="{y - GAP / 2:.2f}" '
                         f'y2="{y - GAP / 2:.2f}" stroke="#888888" stroke-dasharray="4 3">'
                         "<title>a part of the graph left out</title></line>")
        tall = bottom - top
        parts.append(f'<svg class="bv-strip" x="0" y="{y:.2f}" width="{box.width:g}" '
                     f'height="{tall:.2f}" viewBox="{box.x:g} {top:.2f} {box.width:g} {tall:.2f}">'
                     f"{body}</svg>")
        y += tall + GAP
    parts.append("</svg>\n")
    return "".join(parts)
