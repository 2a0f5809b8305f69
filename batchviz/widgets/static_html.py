"""``save_html``: a self-contained page that steps through one or more traces offline.

The page holds every step's picture and tables as data and a few lines of plain JavaScript
(``player_js.py``) that do what the Jupyter controls do: play/pause, back, forward, the
slider and the speed; with several panes (``bv.compare``) also the "link" toggle. No CDN,
no fonts, no network: it opens from a file, in an e-mail, on a machine with no Python.

To stay small it stores every distinct string once: all steps of a trace share their
layout, so most pieces of most pictures (edges, boxes whose state did not change) repeat
from step to step. A step is then a list of indexes into that pool of strings.
"""
from __future__ import annotations

import json
from html import escape
from pathlib import Path

from .player_js import PLAYER_JS
from .style import CSS, SIDE_MIN_WIDTH, SIDE_WIDTH, SPEEDS, SUMMARY_HEAD
from .svgtext import split_pieces


PAGE_CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 12px 16px; color: #111; }
h1 { font-size: 18px; margin: 0 0 8px 0; }
.bv-page-note { font-size: 12px; color: #555; margin: 0 0 8px 0; }
.bv-panes { display: flex; gap: 16px; align-items: flex-start; flex-wrap: wrap; }
.bv-panes.bv-single .bv-pane-body { display: flex; gap: 12px; align-items: flex-start; flex-wrap: wrap; }
.bv-panes.bv-single .bv-text { flex: 1 1 SIDE_WIDTHpx; min-width: SIDE_MIN_WIDTHpx; }
.bv-controls { display: flex; gap: 6px; align-items: center; margin: 4px 0; flex-wrap: wrap; }
.bv-controls button { font-size: 13px; padding: 3px 8px; min-width: 64px; }
.bv-controls input.bv-slider { flex: 1 1 160px; }
.bv-step-label { font-variant-numeric: tabular-nums; font-size: 13px; min-width: 5em; }
.bv-link-label { font-size: 13px; }
""".replace("SIDE_WIDTH", str(SIDE_WIDTH)).replace("SIDE_MIN_WIDTH", str(SIDE_MIN_WIDTH))


class StringPool:
    """Distinct strings, each stored once; :meth:`add` returns a string's index."""

    def __init__(self):
        self.strings: list = []
        self._index: dict = {}

    def add(self, text: str) -> int:
        i = self._index.get(text)
        if i is None:
            i = self._index[text] = len(self.strings)
            self.strings.append(text)
        return i


def pane_data(frames, pool: StringPool) -> dict:
    """One pane's steps as indexes into ``pool``: ``[svg pieces, header, counts, agenda,
    details, whole picture's pieces]`` per step (the picture: the window around the batch),
    plus the per-step numbers the compare summary and the picture's keys."""
    steps, summary = [], []
    panels = frames.panels
    wholes = frames.pictures.render_all_whole()
    for f, whole in zip(frames.all(), wholes):
        steps.append([[pool.add(p) for p in split_pieces(f.svg)], pool.add(f.header),
                      pool.add(f.counts), pool.add(f.agenda), pool.add(f.details),
                      [pool.add(p) for p in split_pieces(whole)]])
        c = panels.counts(f.step)
        summary.append([panels.batch_text(f.step), c["batches"], c["launches"]])
    return {"strategy": frames.trace.strategy, "n": frames.n_steps, "steps": steps,
            "summary": summary, "size": list(frames.pictures.size()), "legend": frames.legend}


def _controls(index: int) -> str:
    return (f'<div class="bv-controls" data-pane="{index}">'
            '<button class="bv-step-back" title="one step back">&#9664; back</button>'
            '<button class="bv-play" title="play / pause">&#9654; play</button>'
            '<button class="bv-step-forward" title="one step forward">forward &#9654;</button>'
            '<input class="bv-slider" type="range" min="0" step="1" value="0">'
            '<span class="bv-step-label"></span>'
            '<label>speed <select class="bv-speed"></select></label>'
            '<label><input type="checkbox" class="bv-whole"> whole graph</label></div>')


def _pane(index: int, single: bool, size, legend: str) -> str:
    """One pane; ``size``: its picture's natural and narrowest readable width (px), which
    decide when the picture and the tables, or the panes, stand side by side; ``legend``:
    the picture's keys."""
    width, narrowest = size
    keys = f'<div class="bv-legend-view">{legend}</div>'
    fits = f"flex: 1 1 {width}px; min-width: {narrowest}px"
    text = ('<div class="bv-text"><div class="bv-counts"></div><div class="bv-agenda-table"></div>'
            '<div class="bv-batch-details"></div></div>')
    body = (f'<div class="bv-pane-body"><div class="bv-picture" style="{fits}">{keys}'
            f'<div class="bv-graph"></div></div>{text}</div>'
            if single else
            f'<div class="bv-pane-body"><div class="bv-counts"></div>{keys}<div class="bv-graph"></div>'
            '<div class="bv-agenda-table"></div><div class="bv-batch-details"></div></div>')
    # panes side by side wherever both pictures are readable (as the widget, compare.py)
    style = "" if single else f' style="flex: 1 1 {narrowest}px; min-width: {narrowest}px"'
    return (f'<div class="bv-pane bv-pane-{index}" data-pane="{index}"{style}>{_controls(index)}'
            f'<div class="bv-header-view"></div>{body}</div>')


def _script_json(data) -> str:
    """JSON safe inside ``<script>``: ``</`` cannot close the element."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


def page_html(frames_list: list, *, title: str, interval: int = 500, linked: bool | None = None,
              speeds=None) -> str:
    """The page for one pane per :class:`~batchviz.widgets.frames.StepFrames`.
    ``linked``: None for a single pane; True/False: the link toggle's first state."""
    pool = StringPool()
    panes = [pane_data(f, pool) for f in frames_list]
    data = {"pool": pool.strings, "panes": panes, "interval": int(interval),
            "speeds": [list(s) for s in (speeds or SPEEDS)],
            "linked": linked, "summary_head": SUMMARY_HEAD}
    single = len(panes) == 1
    note = ("Press play, or step with back / forward and the slider. "
            "Orange: this step's batch; pale yellow: on the agenda; grey: computed; "
            "white: waiting for an argument.")
    link = ""
    summary = ""
    if linked is not None:
        checked = " checked" if linked else ""
        link = (f'<label class="bv-link-label"><input type="checkbox" class="bv-link"{checked}> '
                "link: the panes step together</label>")
        summary = '<table class="bv-summary"></table>'
    panes_html = "".join(_pane(i, single, p["size"], p.pop("legend")) for i, p in enumerate(panes))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}{PAGE_CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1><p class=\"bv-page-note\">{escape(note)}</p>{link}{summary}"
            f'<div class="bv-panes{" bv-single" if single else ""}">{panes_html}</div>'
            f'<script type="application/json" id="bv-data">{_script_json(data)}</script>'
            f"<script>{PLAYER_JS}</script></body></html>\n")


def write_page(path, text: str) -> Path:
    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise ValueError(f"save_html writes an HTML page; give a path ending in .html, got {str(path)!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def read_page_data(text: str) -> dict:
    """The data embedded in a page written by :func:`page_html` (for tests and tools):
    ``{"pool", "panes", ...}``; :func:`step_svg` rebuilds a step's picture from it."""
    start = text.index('<script type="application/json" id="bv-data">') + len(
        '<script type="application/json" id="bv-data">')
    end = text.index("</script>", start)
    return json.loads(text[start:end])


def step_svg(data: dict, pane: int, step: int) -> str:
    pool = data["pool"]
    return "".join(pool[i] for i in data["panes"][pane]["steps"][step][0])
