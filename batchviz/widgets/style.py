"""The look of the widgets and of the static page: one small style sheet for both.

Selectors hang off the ``bv-*`` classes the widgets carry (``add_class``) and the page's
elements carry, so the sheet styles nothing else in a notebook.
"""
from __future__ import annotations

from ..viz.palette import STATE_FILL

#: the player's speeds, in the widget and on a saved page: (label, milliseconds per step)
SPEEDS = (("1 step/s", 1000), ("2 steps/s", 500), ("4 steps/s", 250), ("8 steps/s", 125))
#: the tables beside the picture: their preferred and smallest width (CSS pixels); where
#: the picture and the tables do not fit side by side, the tables go below the picture
SIDE_WIDTH, SIDE_MIN_WIDTH = 380, 320
#: the head of compare's summary table, in the widget and on a saved page
SUMMARY_HEAD = ("<thead><tr><th>strategy</th><th>step</th><th>this step runs</th>"
                "<th>batches run</th><th>kernel launches</th></tr></thead>")

CSS = """
.bv-stepper .widget-html-content, .bv-compare .widget-html-content { line-height: 1.35; }
.bv-graph { overflow-x: auto; background: #fff; }
.bv-graph.bv-whole-graph { overflow: auto; max-height: 60vh; }
.bv-graph svg.bv-svg { max-width: 100%; height: auto; display: block; }
.bv-legend { font-size: 12px; color: #333; margin: 2px 0 4px 0; }
.bv-legend .bv-key { white-space: nowrap; margin-right: 8px; }
.bv-legend .bv-legend-note { font-style: italic; color: #555; }
.bv-agenda-table, .bv-batch-details, .bv-header-view { overflow-x: auto; max-width: 100%; }
.bv-header { font-size: 14px; margin: 2px 0 4px 0; }
.bv-count-line { font-size: 12px; color: #333; margin: 2px 0; }
.bv-count-line b { color: #000; }
.bv-agenda, .bv-args { border-collapse: collapse; font-size: 12px; margin: 4px 0; }
.bv-agenda caption { caption-side: top; text-align: left; font-size: 12px; color: #444; padding: 2px 0; }
.bv-agenda th, .bv-agenda td, .bv-args th, .bv-args td {
  border-bottom: 1px solid #e2e2e2; padding: 2px 6px; text-align: left; vertical-align: top; }
.bv-agenda th, .bv-args th { background: #f4f4f4; font-weight: 600; }
.bv-agenda { width: 100%; }
.bv-agenda td.bv-sig, .bv-header, .bv-details code { overflow-wrap: anywhere; }
.bv-agenda td.bv-sig { min-width: 7em; }
.bv-agenda td.bv-num, .bv-agenda td.bv-chosen-cell { white-space: nowrap; }
.bv-agenda td.bv-num, .bv-args td.bv-num { text-align: right; font-variant-numeric: tabular-nums; }
.bv-agenda tr.bv-chosen td { background: BATCH_FILL; font-weight: 600; }
.bv-agenda tr.bv-waits td { background: AGENDA_FILL; }
.bv-swatch { display: inline-block; width: 9px; height: 9px; border: 2px solid #999;
  margin-right: 5px; vertical-align: -1px; border-radius: 2px; }
.bv-details { font-size: 12px; }
.bv-details p { margin: 3px 0; }
.bv-args tr.bv-copy td.bv-kind { color: #b03a00; font-weight: 600; }
.bv-args tr.bv-view td.bv-kind { color: #1a7f37; font-weight: 600; }
.bv-args tr.bv-shared td.bv-kind { color: #555; }
.bv-summary { border-collapse: collapse; font-size: 13px; margin: 4px 0 8px 0; }
.bv-summary th, .bv-summary td { border-bottom: 1px solid #ddd; padding: 2px 10px; text-align: left; }
.bv-summary td.bv-num { text-align: right; font-variant-numeric: tabular-nums; }
""".replace("BATCH_FILL", STATE_FILL["batch"]).replace("AGENDA_FILL", STATE_FILL["agenda"])


def style_tag() -> str:
    return f"<style>{CSS}</style>"
