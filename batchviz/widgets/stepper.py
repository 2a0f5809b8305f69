"""``bv.Stepper(loss, strategy)``: step through a schedule one batch at a time, in Jupyter.

At every step the widget shows the graph (this step's batch in orange, the agenda pale
yellow, computed nodes grey, waiting nodes white), in a window that follows the batch: the
part of the picture around the batch's boxes, or strips of it when the batch is spread out
(``viewport.py``; "whole graph" shows it all), the agenda table (every signature with
nodes on the agenda: how many, the values the strategy ranks by, which one runs and why the
others wait), the batch's details (op, nodes, shapes, the line of the user's code that built
it when the graph recorded lines, which arguments are views and which are copied) and the
running counts of batches and kernel launches. Step ``k`` of ``N`` is shown as "step k/N"
everywhere (:func:`~batchviz.words.step_label`), and signatures by their short names
(:mod:`batchviz.signature_names`), the full one on hover.

The controls are ipywidgets: ``Play`` and the step ``IntSlider`` are tied together by
``jslink`` in the browser, so playing needs no round trip; the slider's value is observed
in the kernel, which swaps in the step's pictures and tables (drawn once, then cached).
"""
from __future__ import annotations

import ipywidgets as widgets

from ..trace import Trace
from ..trace import trace as make_trace
from .frames import StepFrames
from .static_html import page_html, write_page
from .style import SIDE_MIN_WIDTH, SIDE_WIDTH, SPEEDS, style_tag

#: (label, milliseconds between steps) offered by the speed control
DEFAULT_INTERVAL = 500
ORIENTATIONS = ("row", "column")


def trace_for(loss, strategy):
    """``loss`` itself when it is a :class:`~batchviz.trace.Trace`, else its trace under
    ``strategy`` (a name or any Strategy object)."""
    if isinstance(loss, Trace):
        return loss
    return make_trace(loss, strategy)


def speed_options(interval: int) -> list:
    if isinstance(interval, bool) or not isinstance(interval, int) or interval <= 0:
        raise ValueError(f"interval must be a positive number of milliseconds, got {interval!r}")
    options = list(SPEEDS)
    if interval not in dict(SPEEDS).values():
        options.append((f"{1000 / interval:.3g} steps/s", interval))
        options.sort(key=lambda o: -o[1])
    return options


class Stepper(widgets.VBox):
    """Step through how ``strategy`` batches the graph of ``loss``.

    ``loss``: an expression (or a ``bv.Graph``), traced with ``strategy``; or a trace from
    ``bv.trace`` (``strategy`` is then ignored). ``strategy``: ``"none"``, ``"depth"``,
    ``"agenda"`` or any ``bv.Strategy`` object - your own included. ``step``: the step shown
    first. ``interval``: milliseconds between steps when playing. ``orientation``:
    ``"row"`` (graph left, tables right) or ``"column"`` (stacked, as in ``bv.compare``).
    ``prefetch``: draw the next steps in the background while you look at one.
    Other keywords go to :func:`batchviz.render` (``collapse``, ``expand``, ``parameters``,
    ``max_nodes``, ``max_boxes``): graphs of more than ``max_nodes`` nodes are drawn
    collapsed, one box per signature and depth. ``max_width`` (points, default 740) keeps
    the picture readable in a notebook: a layout wider than that is collapsed further
    (``batchviz.widgets.pictures.fitted_options``; ``max_width=None`` or an explicit
    ``collapse`` turns this off). The picture is never shown smaller than its 11 px text
    allows. Each step shows the window of the picture around its batch (the "whole graph"
    button shows all of it, scrolling in its box).

    ``stepper.step`` reads or moves the current step (``0..n_steps``; ``n_steps`` shows the
    graph after the last batch); :meth:`save_html` writes a page that steps offline."""

    def __init__(self, loss, strategy="agenda", *, step: int = 0,
                 interval: int = DEFAULT_INTERVAL, orientation: str = "row",
                 prefetch: bool = True, **render_options):
        if orientation not in ORIENTATIONS:
            raise ValueError(f"orientation must be one of {ORIENTATIONS}, got {orientation!r}")
        speeds = speed_options(interval)
        trace = trace_for(loss, strategy)
        frames = StepFrames(trace, **render_options)
        n = len(trace.steps)
        step = trace.timeline().check_step(step)

        play = widgets.Play(value=step, min=0, max=n, step=1, interval=interval,
                            show_repeat=False, description="play", tooltip="play / pause")
        fixed = dict(flex="0 0 auto", width="auto")  # controls keep their size; the slider stretches
        play.layout = widgets.Layout(**fixed)
        slider = widgets.IntSlider(value=step, min=0, max=n, step=1, description="step",
                                   continuous_update=True,
                                   layout=widgets.Layout(flex="1 1 240px", width="auto",
                                                         min_width="240px"))
        back = widgets.Button(description="back", icon="step-backward", tooltip="one step back",
                              layout=widgets.Layout(**fixed))
        forward = widgets.Button(description="forward", icon="step-forward",
                                 tooltip="one step forward", layout=widgets.Layout(**fixed))
        speed = widgets.Dropdown(options=speeds, value=interval,
                                 description="speed",
                                 layout=widgets.Layout(flex="0 0 auto", width="190px"))
        whole = widgets.ToggleButton(value=False, description="whole graph", icon="expand",
                                     tooltip="show the whole graph (it scrolls in its box) "
                                             "instead of the part around this step's batch",
                                     layout=widgets.Layout(**fixed))
        html = {name: widgets.HTML() for name in ("header", "counts", "legend", "graph",
                                                  "agenda", "details")}
        for name, cls in (("header", "bv-header-view"), ("counts", "bv-counts"),
                          ("legend", "bv-legend-view"), ("graph", "bv-graph"),
                          ("agenda", "bv-agenda-table"), ("details", "bv-batch-details")):
            html[name].add_class(cls)
        for w, cls in ((play, "bv-play"), (slider, "bv-slider"), (back, "bv-step-back"),
                       (forward, "bv-step-forward"), (speed, "bv-speed"), (whole, "bv-whole")):
            w.add_class(cls)

        controls = widgets.HBox([back, play, forward, slider, speed, whole],  # wraps when narrow
                                layout=widgets.Layout(align_items="center", width="100%",
                                                      flex_flow="row wrap"))
        controls.add_class("bv-controls")
        text = [html["counts"], html["agenda"], html["details"]]
        width, narrowest = frames.pictures.size(step)
        html["legend"].value = frames.legend
        if orientation == "row":  # side by side where both fit, else the tables go below
            picture = widgets.VBox([html["legend"], html["graph"]], layout=widgets.Layout(
                flex=f"1 1 {width}px", min_width=f"{narrowest}px"))
            side = widgets.VBox(text, layout=widgets.Layout(
                flex=f"1 1 {SIDE_WIDTH}px", min_width=f"{SIDE_MIN_WIDTH}px", padding="0 0 0 8px"))
            body = [widgets.HBox([picture, side],
                                 layout=widgets.Layout(width="100%", flex_flow="row wrap"))]
        else:
            html["graph"].layout = widgets.Layout(min_width=f"{narrowest}px")
            body = [html["counts"], html["legend"], html["graph"], html["agenda"], html["details"]]
        style = widgets.HTML(style_tag())
        super().__init__(children=[style, controls, html["header"], *body])
        self.add_class("bv-stepper")

        self.trace = trace
        self.frames = frames
        self.n_steps = n
        self.play, self.slider, self.speed = play, slider, speed
        self.back_button, self.forward_button, self.whole = back, forward, whole
        self._prefetch = bool(prefetch)
        self.header_view, self.counts_view = html["header"], html["counts"]
        self.legend_view = html["legend"]
        self.graph_view, self.agenda_view, self.details_view = (
            html["graph"], html["agenda"], html["details"])
        #: Play drives the slider in the browser, with no round trip to the kernel
        self.play_link = widgets.jslink((play, "value"), (slider, "value"))
        slider.observe(self._on_step, names="value")
        speed.observe(self._on_speed, names="value")
        whole.observe(self._on_whole, names="value")
        back.on_click(lambda _b: self.back())
        forward.on_click(lambda _b: self.forward())
        self._show(step)

    # --- the step ----------------------------------------------------------------------
    @property
    def strategy(self) -> str:
        return self.trace.strategy

    @property
    def step(self) -> int:
        """The step shown: ``0..n_steps`` (``n_steps``: after the last batch)."""
        return self.slider.value

    @step.setter
    def step(self, value: int) -> None:
        self.slider.value = self.trace.timeline().check_step(value)

    def forward(self) -> None:
        """One step forward (stays at the end)."""
        self.step = min(self.step + 1, self.n_steps)

    def back(self) -> None:
        """One step back (stays at step 0)."""
        self.step = max(self.step - 1, 0)

    # --- what is shown -----------------------------------------------------------------
    def frame(self, step: int | None = None):
        """The ``Frame`` (``batchviz.widgets.frames``: HTML strings) of ``step``
        (default: the step shown)."""
        return self.frames.frame(self.step if step is None else step)

    def svg(self, step: int | None = None) -> str:
        """The picture of ``step`` (default: the step shown) as SVG text: the window
        around its batch, or the whole graph while "whole graph" is on."""
        step = self.step if step is None else step
        pictures = self.frames.pictures
        return pictures.whole(step) if self.whole.value else pictures.svg(step)

    def agenda_rows(self, step: int | None = None) -> list:
        """The agenda table of ``step`` as dicts (see ``batchviz.widgets.panels.Panels.agenda_rows``)."""
        return self.frames.panels.agenda_rows(self.step if step is None else step)

    def _show(self, step: int) -> None:
        f = self.frames.frame(step)
        self.graph_view.value = self.svg(step)
        self.header_view.value = f.header
        self.counts_view.value = f.counts
        self.agenda_view.value = f.agenda
        self.details_view.value = f.details
        self.back_button.disabled = step == 0
        self.forward_button.disabled = step == self.n_steps
        if self._prefetch:
            self.frames.pictures.prefetch(step)

    def _on_step(self, change) -> None:
        self._show(change["new"])

    def _on_speed(self, change) -> None:
        self.play.interval = change["new"]

    def _on_whole(self, change) -> None:
        # the whole picture scrolls in a box of at most 60% of the screen's height
        if change["new"]:
            self.graph_view.add_class("bv-whole-graph")
        else:
            self.graph_view.remove_class("bv-whole-graph")
        self.graph_view.value = self.svg()

    # --- outside Jupyter ----------------------------------------------------------------
    def to_html(self, title: str | None = None) -> str:
        """A self-contained page that steps through this trace (see :meth:`save_html`)."""
        return page_html([self.frames], title=title or f"batchviz \u00b7 {self.strategy}",
                         interval=self.play.interval)

    def save_html(self, path, title: str | None = None):
        """Write a self-contained HTML page with every step's picture and tables and the
        same controls (play/pause, back, forward, slider, speed) in a few lines of plain
        JavaScript: no network, no Jupyter. Returns the path."""
        return write_page(path, self.to_html(title))

    def __repr__(self) -> str:
        return (f"<bv.Stepper strategy={self.strategy!r} step={self.step} of {self.n_steps} "
                f"nodes={self.trace.scheduled_nodes}>")
