"""A *frame*: everything shown for one step of one trace, as HTML strings.

The Jupyter widget puts a frame's strings into its HTML widgets; the static page
(``save_html``) embeds the frames of all steps. One source for both keeps them identical.
"""
from __future__ import annotations

from dataclasses import dataclass

from .legend import legend_html
from .panels import Panels
from .pictures import StepPictures


@dataclass(frozen=True)
class Frame:
    step: int
    svg: str       # the picture, node states as CSS classes (see svgtext.py)
    header: str    # strategy and what this step runs
    counts: str    # batches and kernel launches so far
    agenda: str    # the agenda table
    details: str   # the batch: op, nodes, shapes, how each argument is read


class StepFrames:
    """Frames of every step of ``trace`` (render options as for :func:`batchviz.render`)."""

    def __init__(self, trace, **render_options):
        self.trace = trace
        self.n_steps = len(trace.steps)
        self.pictures = StepPictures(trace, **render_options)
        self.panels = Panels(trace, self.pictures.colours)
        #: the picture's keys (fills, outlines), the same at every step
        self.legend = legend_html(self.pictures.first.scene)

    def frame(self, step: int) -> Frame:
        p = self.panels
        return Frame(step=step, svg=self.pictures.svg(step), header=p.header_html(step),
                     counts=p.counts_html(step), agenda=p.agenda_html(step),
                     details=p.details_html(step))

    def all(self) -> list:
        """Every frame, ``0..n_steps``; the pictures are drawn in as few ``dot`` runs as possible."""
        self.pictures.render_all()
        return [self.frame(k) for k in range(self.n_steps + 1)]
