"""``bv.compare(loss, "depth", "agenda")``: strategies side by side on the same graph.

Each strategy gets its own pane (a :class:`~batchviz.widgets.stepper.Stepper` stacked in a
column) with its own controls, its picture following its own batch. The panes stand side by
side where the notebook is wide enough for both pictures at a readable size (at 1280 px with
JupyterLab's sidebar open: the pictures are collapsed until each fits half of a notebook
cell, ``pictures.PANE_MAX_WIDTH``), else one below the other. With "link" on, moving any pane moves the others to the same
step (a pane with fewer steps stops at its end); with "link" off each pane steps on its own.
A summary table above the panes keeps the running counts of batches and kernel launches
side by side, so in the paper's Figure 1 you can watch the moment depth batching runs the
short sequence's loss nodes early, in batches of one, while agenda batching waits and runs
all three losses together.
"""
from __future__ import annotations

from html import escape

import ipywidgets as widgets

from ..trace import Trace
from ..trace.record import graph_of
from ..viz import captions, fit_caption_width
from .pictures import PANE_MAX_WIDTH, fitted_options
from .static_html import page_html, write_page
from .stepper import DEFAULT_INTERVAL, Stepper, trace_for
from .style import SUMMARY_HEAD

DEFAULT_STRATEGIES = ("depth", "agenda")


#: the columns of the summary (the static page's JavaScript writes the same)


def summary_html(panes) -> str:
    """The side-by-side counts at each pane's step (the static page's JavaScript draws the
    same table): the step as ``k/n``, the batches and launches before it."""
    rows = []
    for p in panes:
        panels = p.frames.panels
        c = panels.counts(p.step)
        rows.append(f"<tr><td><b>{escape(p.strategy)}</b></td><td>{p.step}/{p.n_steps}</td>"
                    f"<td>{escape(panels.batch_text(p.step))}</td>"
                    f'<td class="bv-num">{c["batches"]}</td><td class="bv-num">{c["launches"]}</td></tr>')
    return f'<table class="bv-summary">{SUMMARY_HEAD}<tbody>{"".join(rows)}</tbody></table>'


class Compare(widgets.VBox):
    """Several strategies stepping through the same graph; see :func:`compare`."""

    def __init__(self, loss, strategies=DEFAULT_STRATEGIES, *, link: bool = True, step: int = 0,
                 interval: int = DEFAULT_INTERVAL, **render_options):
        if isinstance(loss, Trace):
            raise TypeError("compare needs the expression (or bv.Graph) itself, not a Trace: "
                            "it traces the same graph once per strategy")
        graph_of(loss)  # a clear TypeError for anything that is not an expression or graph
        strategies = list(strategies)
        if len(strategies) < 2:
            raise ValueError(f"compare needs at least two strategies, got {len(strategies)}")
        traces = [trace_for(loss, s) for s in strategies]
        # one caption width and one way of drawing for all panes: the same graph then gets
        # the same layout in each
        render_options.setdefault("caption_width",
                                  max(fit_caption_width(captions(t)) for t in traces))
        max_width = render_options.pop("max_width", PANE_MAX_WIDTH)
        options = fitted_options(traces[0], render_options, max_width)
        panes = [Stepper(t, orientation="column", interval=interval, max_width=None, **options)
                 for t in traces]
        toggle = widgets.ToggleButton(value=bool(link), description="link", icon="link",
                                      tooltip="step the panes together")
        toggle.add_class("bv-link")
        summary = widgets.HTML()
        summary.add_class("bv-compare-summary")
        for k, p in enumerate(panes):  # side by side where they fit, else one below the other
            p.add_class(f"bv-pane-{k}")
            # the narrowest readable width is the flex basis: a row wraps when the bases do not
            # fit, so the panes stand side by side wherever both pictures are readable
            _, narrowest = p.frames.pictures.size(p.step)
            p.layout = widgets.Layout(flex=f"1 1 {narrowest + 12}px", min_width=f"{narrowest + 12}px",
                                      padding="0 6px")
        row = widgets.HBox(panes, layout=widgets.Layout(width="100%", align_items="flex-start",
                                                        flex_flow="row wrap"))
        super().__init__(children=[widgets.HBox([toggle, summary],
                                                layout=widgets.Layout(align_items="center")), row])
        self.add_class("bv-compare")
        self.panes = panes
        self.link_toggle = toggle
        self.summary_view = summary
        self._syncing = False
        for p in panes:
            p.slider.observe(lambda change, source=p: self._on_pane_step(source, change["new"]),
                             names="value")
        toggle.observe(self._on_link, names="value")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError(f"step must be an int >= 0, got {step!r}")
        for p in panes:  # each pane to the step, or its own last one
            p.step = min(step, p.n_steps)
        self._update_summary()

    @property
    def linked(self) -> bool:
        return bool(self.link_toggle.value)

    @linked.setter
    def linked(self, value: bool) -> None:
        self.link_toggle.value = bool(value)

    @property
    def traces(self) -> list:
        return [p.trace for p in self.panes]

    def _on_pane_step(self, source, step: int) -> None:
        if self.linked and not self._syncing:
            self._follow(source, step)
        self._update_summary()

    def _follow(self, source, step: int) -> None:
        """Move every other pane to ``step`` (or its own last step)."""
        self._syncing = True
        try:
            for p in self.panes:
                if p is not source:
                    p.step = min(step, p.n_steps)
        finally:
            self._syncing = False

    def _on_link(self, change) -> None:
        if change["new"]:
            self._follow(self.panes[0], self.panes[0].step)
            self._update_summary()

    def _update_summary(self) -> None:
        self.summary_view.value = summary_html(self.panes)

    # --- outside Jupyter ----------------------------------------------------------------
    def to_html(self, title: str | None = None) -> str:
        names = " vs ".join(p.strategy for p in self.panes)
        return page_html([p.frames for p in self.panes], title=title or f"batchviz \u00b7 {names}",
                         interval=self.panes[0].play.interval, linked=self.linked)

    def save_html(self, path, title: str | None = None):
        """Write a self-contained page with the panes side by side, each with its controls,
        and the link toggle; no network, no Jupyter. Returns the path."""
        return write_page(path, self.to_html(title))

    def __repr__(self) -> str:
        return f"<bv.compare {[p.strategy for p in self.panes]} linked={self.linked}>"


def compare(loss, *strategies, link: bool = True, step: int = 0,
            interval: int = DEFAULT_INTERVAL, **render_options) -> Compare:
    """Step through the graph of ``loss`` under several strategies side by side.

    ``strategies``: names or Strategy objects, at least two (default ``"depth", "agenda"``).
    ``link``: start with the panes stepping together. Other keywords as for
    :class:`~batchviz.widgets.stepper.Stepper` (``step``, ``interval``, render options)."""
    return Compare(loss, strategies or DEFAULT_STRATEGIES, link=link, step=step,
                   interval=interval, **render_options)
