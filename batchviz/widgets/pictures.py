"""One picture per step of a trace: drawn once, kept, and drawn many at a time when asked.

``bv.render`` gives every step of a trace the same DOT structure (only colours, pen widths
and the caption text change), so Graphviz places every box at the same spot at every step:
flipping through the cached pictures never makes a node jump. What costs time is running
``dot``: about 50 ms per picture, most of it starting the program. So a widget draws a step
the first time it is shown and keeps the SVG, and :meth:`StepPictures.render_all` (used by
``save_html``) pipes many steps through *one* ``dot`` process, several times faster.
While a widget plays, :meth:`StepPictures.prefetch` draws the next steps the same way in a
background thread, so that the kernel keeps up with the ``Play`` widget on large graphs.

A widget's picture must fit its box and stay readable: shown no smaller than its text
allows (11 px, :func:`~batchviz.widgets.svgtext.picture_size`), it must fit the width of a
notebook at 1280 x 800 with JupyterLab's sidebar open. Graphs of many instances side by side
are wider than that even drawn one box per signature and depth, so :func:`fitted_options`
collapses a picture step by step (fewer, wider depth bands, down to one box per signature)
until Graphviz's layout is at most ``max_width`` points wide.

Every step shows a window of its picture, around the boxes of the batch it runs
(``viewport.py``); the windows are worked out once per trace, from the layout and the
trace's batches. The title, the step's caption and the colour keys are left out of the
pictures (``legend=False``): the widgets show them as HTML above the window.

Without Graphviz the pure-Python fallback drawing is used (with a warning, once).
"""
from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor

import graphviz

from ..viz import render
from ..viz.dotcheck import warn_dot_missing
from ..viz.scene import DEFAULT_MAX_BOXES
from . import viewport
from .svgtext import clean_svg, mark_states, picture_size

#: steps piped through one ``dot`` process at a time by :meth:`StepPictures.render_all`
CHUNK = 64
#: steps drawn ahead, in one ``dot`` process, by :meth:`StepPictures.prefetch`
AHEAD = 12

_XML_START = re.compile(r"(?=<\?xml )")
#: widest layout (points) a widget draws node by node before it collapses the picture: shown
#: at 82% (11 px text) it is 812 px wide, what a notebook cell has at 1280 px with the sidebar
DEFAULT_MAX_WIDTH = 740
#: the same for each of two panes side by side (``bv.compare``): 396 px at 11 px text, and
#: two such panes fit the 848 px of that notebook cell
PANE_MAX_WIDTH = 360
_SVG_WIDTH = re.compile(r'<svg width="([0-9.]+)pt"')


def fitted_options(trace, options: dict, max_width: float | None = DEFAULT_MAX_WIDTH) -> dict:
    """``options`` for :func:`batchviz.render`, collapsed as little as needed for the layout
    of ``trace`` to be at most ``max_width`` points wide (None: as given). Options that
    say how to draw (``collapse``, ``expand``) are the user's choice and kept; so is
    everything when ``dot`` is missing (the fallback drawing sizes itself). The widths are
    measured without the keys (``legend=False``), as the widgets draw."""
    options = {"legend": False, **options}
    if max_width is None or "collapse" in options or "expand" in options:
        return dict(options)
    first = options.get("max_boxes", DEFAULT_MAX_BOXES)
    tries = [dict(options)] + [dict(options, collapse=True, max_boxes=b)
                               for b in (first, first // 2, first // 4, 1) if b >= 1]
    best = None
    for candidate in tries:
        width = _layout_width(render(trace, step=0, **candidate))
        if width is None:          # no dot: nothing to measure
            return dict(options)
        if width <= max_width:
            return candidate
        if best is None or width < best[0]:
            best = (width, candidate)
    return best[1]


def _layout_width(digraph):
    """The width (points) Graphviz lays ``digraph`` out in, or None without ``dot``."""
    try:
        svg = digraph.pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        return None
    m = _SVG_WIDTH.search(svg)
    return float(m.group(1)) if m else None


class StepPictures:
    """The SVG of every step of ``trace``, computed lazily and cached.

    ``options`` go to :func:`batchviz.render` (``collapse``, ``expand``, ``parameters``,
    ``max_nodes``, ``max_boxes``, ``clusters``); they are checked once, here, so that a
    bad option fails when the widget is made rather than at some later step. ``max_width``:
    collapse the picture until its layout is at most this many points wide
    (:func:`fitted_options`; None: draw as the options say)."""

    def __init__(self, trace, max_width: float | None = DEFAULT_MAX_WIDTH, **options):
        self.trace = trace
        render(trace, step=0, **options)  # validates the options before anything is drawn
        self.options = fitted_options(trace, options, max_width)
        self.first = render(trace, step=0, **self.options)
        self.n_steps = len(trace.steps)
        self._svg: dict[int, str] = {}    # step -> its window of the picture
        self._whole: dict[int, str] = {}  # step -> the whole picture
        self.dot_runs = 0           # how many times ``dot`` was started (tests check caching)
        self._dot_missing = False
        self._pending: dict = {}    # step -> Future of the background drawing that makes it
        self._pool = None
        self._windows = None        # (ViewBox, window height, strips per step), from the first picture
        self._windows_lock = threading.Lock()

    @property
    def collapsed(self) -> bool:
        """True when the picture draws one box per signature and depth band (large graphs)."""
        return bool(self.first.scene.collapsed)

    def size(self, step: int = 0) -> tuple:
        """``(width, min_width)`` of the pictures in CSS pixels (all steps share one
        layout, so any step tells): their natural width, and the narrowest they stay
        readable at."""
        return picture_size(self.svg(step))

    @property
    def colours(self) -> dict:
        """``{signature: outline colour}`` as the picture draws them."""
        return dict(self.first.scene.colours)

    def digraph(self, step: int):
        """The :class:`~batchviz.viz.dot.BatchGraph` of ``step`` (no drawing yet)."""
        return render(self.trace, step=step, **self.options)

    def batch_keys(self, step: int) -> list:
        """The boxes (DOT names) that hold nodes of ``step``'s batch; none at the end."""
        if step >= self.n_steps:
            return []
        scene = self.first.scene
        index = scene.index_of_node[list(self.trace.steps[step].batch)]
        return sorted({scene.nodes[k].key for k in index.tolist() if k >= 0})

    def svg(self, step: int) -> str:
        """The inline-ready SVG of ``step`` (``0..n_steps``; ``n_steps``: all done),
        cropped to the window that shows its batch (``viewport.py``)."""
        step = self.trace.timeline().check_step(step)
        if step not in self._svg:
            future = self._pending.get(step)
            if future is not None:
                try:
                    future.result()  # being drawn ahead: wait rather than draw it twice
                except Exception:
                    pass             # drawn again below, where its error is raised
            if step not in self._svg:
                self._draw([step])
        return self._svg[step]

    def whole(self, step: int) -> str:
        """The whole picture of ``step``, not cropped to a window."""
        self.svg(step)
        return self._whole[step]

    def strips(self, step: int) -> list:
        """The parts of the picture ``step`` shows: ``[(top, bottom), ...]`` in the
        picture's units (``viewport.windows``)."""
        self.svg(step)
        return self._windows[2][step]

    def prefetch(self, step: int) -> None:
        """Draw the ``AHEAD`` steps after ``step`` in a background thread (one ``dot`` run),
        unless most of them are drawn or being drawn already. Only SVG text is made there;
        widgets are changed by the kernel's main thread alone."""
        ahead = [k for k in range(step + 1, min(step + 1 + AHEAD, self.n_steps + 1))
                 if k not in self._svg and k not in self._pending]
        if not ahead or len(ahead) < min(AHEAD // 2, self.n_steps - step):
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="batchviz-dot")
        future = self._pool.submit(self._draw, ahead)
        for k in ahead:
            self._pending[k] = future
        future.add_done_callback(lambda _f, steps=ahead: [self._pending.pop(k, None) for k in steps])

    def wait(self) -> None:
        """Wait until the background drawings have finished (tests, ``save_html``)."""
        for future in list(self._pending.values()):
            try:
                future.result()
            except Exception:
                pass

    def render_all(self) -> list:
        """Every step's SVG, in order (missing ones drawn ``CHUNK`` per ``dot`` process)."""
        self.wait()
        todo = [k for k in range(self.n_steps + 1) if k not in self._svg]
        for start in range(0, len(todo), CHUNK):
            self._draw(todo[start:start + CHUNK])
        return [self._svg[k] for k in range(self.n_steps + 1)]

    def render_all_whole(self) -> list:
        """Every step's whole picture, in order."""
        self.render_all()
        return [self._whole[k] for k in range(self.n_steps + 1)]

    def cached_steps(self) -> list:
        return sorted(self._svg)

    # --- drawing ----------------------------------------------------------------------
    def _draw(self, steps: list) -> None:
        graphs = [self.digraph(k) for k in steps]
        texts = None if self._dot_missing else self._run_dot(graphs)
        if texts is None:
            texts = [g.fallback_svg() for g in graphs]
        for k, g, text in zip(steps, graphs, texts):
            svg = mark_states(clean_svg(text), g.scene, g.paint)
            box, height, strips = self._windows_of(svg)
            self._whole[k] = svg
            self._svg[k] = viewport.crop(svg, box, strips[k], height)

    def _windows_of(self, svg: str) -> tuple:
        """``(ViewBox, window height, strips per step)`` (``viewport.windows``), worked out
        once, from the first picture drawn: every step has its layout."""
        with self._windows_lock:
            if self._windows is None:
                box, bounds = viewport.ViewBox.of(svg), viewport.box_bounds(svg)
                batches = [[bounds[key] for key in self.batch_keys(k) if key in bounds]
                           for k in range(self.n_steps + 1)]
                height = viewport.window_height(box, batches)
                self._windows = (box, height, viewport.windows(box, batches, height))
            return self._windows

    def _run_dot(self, graphs: list):
        """The SVG texts of ``graphs`` from one ``dot`` process, or None without ``dot``."""
        data = "\n".join(g.source for g in graphs).encode("utf-8")
        try:
            out = graphviz.pipe("dot", "svg", data, quiet=True).decode("utf-8")
        except graphviz.ExecutableNotFound:
            self._dot_missing = True
            warn_dot_missing()
            return None
        finally:
            self.dot_runs += 1
        texts = [t for t in _XML_START.split(out) if t.strip()]
        if len(texts) != len(graphs):  # never seen; draw them one by one rather than guess
            texts = [g.pipe(format="svg", encoding="utf-8") for g in graphs]
            self.dot_runs += len(graphs)
        return texts
