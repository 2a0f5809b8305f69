"""The window a widget's picture shows at each step (batchviz/widgets/viewport.py).

Measured on the pictures the widgets draw for Figure 1: at every step, every box of the
batch lies inside one of the strips the step shows; every step's picture has the same
height and the same scale as the whole picture; the window moves only when the batch
leaves it. The browser tests check the same on screen, in JupyterLab.
"""
import re
import shutil

import pytest

import batchviz as bv
from batchviz.examples import figure1
from batchviz.widgets import viewport
from batchviz.widgets.frames import StepFrames

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")


@pytest.fixture(scope="module")
def pictures():
    graph, loss, _ = figure1("agenda")
    out = {s: StepFrames(bv.trace(loss, s)).pictures for s in ("depth", "agenda", "none")}
    graph.finish()
    for p in out.values():
        p.render_all()
    return out


def _inside(span, strips) -> bool:
    return any(top <= span[0] and span[1] <= bottom for top, bottom in strips)


@pytest.mark.parametrize("strategy", ["depth", "agenda", "none"])
def test_every_batch_box_is_in_a_strip_of_its_step(pictures, strategy):
    p = pictures[strategy]
    whole = viewport.ViewBox.of(p.whole(0))
    bounds = viewport.box_bounds(p.whole(0))
    assert len(bounds) == 61  # every box of Figure 1, found in Graphviz's drawing
    spread = 0
    for k in range(p.n_steps):
        strips = p.strips(k)
        keys = p.batch_keys(k)
        assert keys and all(_inside(bounds[key], strips) for key in keys), (k, strips)
        spread += len(strips) > 1
        shown = viewport.ViewBox.of(p.svg(k))
        # one height for every step (the widget never jumps), cropped, never scaled
        assert shown.height == viewport.WINDOW_HEIGHT < whole.height
        assert shown.unit_height / shown.height == whole.unit_height / whole.height
        assert re.search(r'<svg class="bv-svg"[^>]* width="([0-9.]+pt)"', p.svg(k)).group(1) == "662pt"
        for top, bottom in strips:  # each strip: the same units as the whole picture
            assert f'viewBox="0 {top:.2f} 662 {bottom - top:.2f}"' in p.svg(k)
        assert sum(b - t for t, b in strips) + viewport.GAP * (len(strips) - 1) <= shown.height
    # the sequences of Figure 1 are drawn side by side, ending at the bottom: a batch of
    # inputs (and, for depth batching, each depth of the three sequences) lies in strips
    assert spread >= 1 or strategy == "none"


def test_the_window_moves_only_when_the_batch_leaves_it(pictures):
    p = pictures["agenda"]
    bounds = viewport.box_bounds(p.whole(0))
    moves = 0
    for k in range(1, p.n_steps):
        before, now = p.strips(k - 1), p.strips(k)
        spans = [bounds[key] for key in p.batch_keys(k)]
        if len(before) == 1 and len(now) == 1:
            top, bottom = before[0]
            fits = all(top + viewport.MARGIN <= a and b <= bottom - viewport.MARGIN for a, b in spans)
            if fits:
                assert now == before, k
            else:
                moves += now != before
    assert moves > 0
    # the end shows where the last batch was
    assert p.strips(p.n_steps) == p.strips(p.n_steps - 1)


def test_a_picture_shorter_than_the_window_is_shown_whole():
    svg = ('<svg class="bv-svg" width="100pt" height="80pt" viewBox="0.00 0.00 100.00 80.00">'
           '<g id="graph0" class="graph" transform="scale(1 1) rotate(0) translate(4 76)">'
           '<g id="node1" class="node bv-batch" data-key="n0"><title>n0</title>'
           '<polygon points="0,-70 50,-70 50,-50 0,-50 0,-70"/></g></g></svg>\n')
    box = viewport.ViewBox.of(svg)
    assert viewport.box_bounds(svg) == {"n0": (6.0, 26.0)}
    height = viewport.window_height(box, [[(6.0, 26.0)]])
    assert height == 80 and viewport.crop(svg, box, [(0, 80)], height) == svg


def test_strips_of_a_spread_batch_and_the_fallback_drawing():
    svg = ('<svg width="200" height="1000" viewBox="0 0 200 1000">'
           '<g class="node bv-batch" data-key="n1"><title>a</title><rect x="0" y="10" width="9" height="20"/></g>'
           '<g class="node bv-batch" data-key="n2"><title>b</title><rect x="0" y="900" width="9" height="20"/></g>'
           "</svg>")
    box = viewport.ViewBox.of(svg)
    bounds = viewport.box_bounds(svg)
    assert bounds == {"n1": (10.0, 30.0), "n2": (900.0, 920.0)}
    spans = list(bounds.values())
    height = viewport.window_height(box, [spans])
    assert height == viewport.WINDOW_HEIGHT
    (strips,) = viewport.windows(box, [spans], height)
    assert len(strips) == 2 and all(_inside(s, strips) for s in spans)
    cropped = viewport.crop(svg, box, strips, height)
    assert cropped.count('class="bv-strip"') == 2 and cropped.count('class="bv-cut"') == 1
    assert 'height="300.00"' in cropped and f'viewBox="0 0 200 {height:.2f}"' in cropped


def test_a_picture_without_a_viewbox_is_refused():
    with pytest.raises(ValueError, match="viewBox"):
        viewport.ViewBox.of("<svg width='3'></svg>")
