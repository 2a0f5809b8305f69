"""The widgets as a student meets them: JupyterLab at 1280 x 800 with its sidebar open.

Every stepper and compare of a notebook (Figure 1 and Tree-LSTMs, one tree and four) must
show its whole agenda table and its whole picture without horizontal scrolling, with no
text in the picture smaller than 11 px; signatures go by short names with the full one on
hover; depth batching's table shows depth, not the agenda's priorities; one moment carries
one step number everywhere; and the details name the notebook line that built the batch.
The saved page is held to the same. Screenshots: ``window-*.png``.
"""
from __future__ import annotations

import re

import pytest

import batchviz as bv
from batchviz.examples import figure1
from batchviz.signature_names import SEPARATOR
from batchviz.widgets.svgtext import MIN_TEXT_PX

nbformat = pytest.importorskip("nbformat", reason="the browser tests write a notebook with nbformat")

from .follow import problems, step_through
from .jupyterlab import (LAPTOP, assert_no_widget_errors, open_notebook,  # noqa: E402
                         run_all_cells, screenshot)

pytestmark = pytest.mark.browser

WAIT_MS = 15_000

CELLS = [
    # 1: the graph is built by this cell's third line (figure1 runs inside batchviz)
    "import batchviz as bv\nfrom batchviz.examples import figure1\n"
    "graph, loss, _ = figure1('agenda', record_source=True)",
    "bv.Stepper(loss, 'depth', step=12)",
    "bv.Stepper(loss, 'lookahead', step=12)",
    "bv.compare(loss, 'depth', 'agenda', step=12)",
    "from batchviz.data import synthetic_trees\nfrom batchviz.nn import TreeLSTMCell\n"
    "trees = synthetic_trees(4, min_leaves=3, max_leaves=9, n_labels=5, vocab_size=100, seed=9)\n"
    "model = bv.Model(seed=0)\nE = model.add_lookup_parameters((100, 8), name='E')\n"
    "cell = TreeLSTMCell(model, input_dim=8, hidden_dim=8)\n"
    "W = model.add_parameters((5, 8), name='W')\n"
    "b = model.add_parameters((5,), init='zeros', name='b')\n\n"
    "def build(trees):\n    g = bv.Graph('agenda')\n    with bv.graph_scope(g):\n"
    "        roots = [cell.encode(t, lambda w: E[sum(map(ord, w)) % 100])[-1] for t in trees]\n"
    "        loss = bv.esum([bv.pickneglogsoftmax(bv.affine_transform([b, W, h]), int(n.label))\n"
    "                        for n, h in roots])\n    return g, loss",
    "one_graph, one_loss = build(trees[:1])\nbv.Stepper(one_loss, 'agenda', step=3)",
    "all_graph, all_loss = build(trees)\nbv.compare(all_loss, 'depth', 'agenda', step=5)",
]

#: what must not scroll sideways, inside every widget (its own root is checked too)
BOXES = (".bv-graph, .bv-agenda-table, table.bv-agenda, .bv-batch-details, .bv-header-view, "
         ".bv-counts, .bv-controls, .bv-compare-summary, table.bv-summary")

MEASURE = """(root) => {
  const boxes = [root, ...root.querySelectorAll(arguments_boxes)];
  const area = root.closest('.jp-OutputArea-output, body').getBoundingClientRect();
  const name = b => (b.className.baseVal !== undefined ? b.tagName : b.tagName + '.' +
                     String(b.className).split(' ').filter(c => c.startsWith('bv-')).join('.'));
  const scrolls = boxes.filter(b => b.scrollWidth > b.clientWidth)
                       .map(b => `${name(b)}: ${b.scrollWidth} > ${b.clientWidth}`);
  const outside = boxes.filter(b => b.getBoundingClientRect().right > area.right + 0.5)
                       .map(b => `${name(b)} ends at ${b.getBoundingClientRect().right} > ${area.right}`);
  const sizes = [...root.querySelectorAll('.bv-graph svg text')].map(
      t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
  return {scrolls, outside, smallest: Math.min(...sizes), texts: sizes.length};
}"""


def _expect():
    from playwright.sync_api import expect

    return expect


def measure(root) -> dict:
    return root.evaluate(MEASURE.replace("arguments_boxes", repr(BOXES)))


def assert_fits(root, what: str) -> None:
    """``root``'s boxes do not scroll sideways and stay in the output area; the smallest
    text of its pictures is at least 11 px on screen."""
    m = measure(root)
    assert m["scrolls"] == [], f"{what}: boxes scroll sideways: {m['scrolls']}"
    assert m["outside"] == [], f"{what}: boxes stick out of the output area: {m['outside']}"
    assert m["texts"] > 0, f"{what}: no picture text found"
    assert m["smallest"] >= MIN_TEXT_PX - 0.01, f"{what}: smallest text {m['smallest']:.2f} px"


def shot(page, name: str, root) -> None:
    """Two screenshots of the viewport: ``root``'s top (controls, picture), and its tables."""
    root.evaluate("e => e.scrollIntoView({block: 'start'})")
    screenshot(page, name)
    root.locator(".bv-agenda-table").first.evaluate("e => e.scrollIntoView({block: 'center'})")
    screenshot(page, name + "-tables")


def test_every_widget_fits_a_laptop_with_the_sidebar_open(laptop, jupyterlab_server, tmp_path,
                                                          fig1_traces):
    expect = _expect()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "window.ipynb"
    nbformat.write(nb, path)
    name = jupyterlab_server.add(path)
    page = laptop
    open_notebook(page, name)
    sidebar = page.locator("#jp-left-stack")
    expect(sidebar).to_be_visible()
    assert sidebar.bounding_box()["width"] >= 200  # the file browser, as JupyterLab opens
    run_all_cells(page, timeout=240_000)
    assert_no_widget_errors(page)

    steppers = page.locator(".bv-stepper")
    expect(steppers).to_have_count(7)  # depth, lookahead, 2 in compare, one tree, 2 in compare
    depth, lookahead, one_tree = steppers.nth(0), steppers.nth(1), steppers.nth(4)
    figure1_compare, trees_compare = page.locator(".bv-compare").nth(0), page.locator(".bv-compare").nth(1)
    for root, what, picture in ((depth, "Figure 1, depth", "window-01-figure1-depth"),
                                (lookahead, "Figure 1, lookahead", "window-02-figure1-lookahead"),
                                (figure1_compare, "Figure 1, compare", "window-03-figure1-compare"),
                                (one_tree, "one Tree-LSTM", "window-04-one-tree"),
                                (trees_compare, "four Tree-LSTMs, compare", "window-05-trees-compare")):
        shot(page, picture, root)
        assert_fits(root, what)
    for k in range(steppers.count()):  # the panes of compare, each on its own too
        assert_fits(steppers.nth(k), f"stepper {k}")

    # --- one step numbering, short names with the full one on hover, depth's own key -------
    t = fig1_traces["depth"]
    n = len(t)
    expect(depth.locator(".bv-header-view")).to_contain_text(f"step 12/{n}")
    expect(depth.locator(".bv-counts")).to_contain_text(f"batches run: 12 of {n}")
    # the picture's keys are page text above the window of the picture
    expect(depth.locator(".bv-legend-view")).to_contain_text("in this step's batch")
    assert int(depth.locator(".bv-slider .widget-readout").inner_text()) == 12
    summary = figure1_compare.locator("table.bv-summary tbody tr")
    expect(summary.nth(0)).to_contain_text(f"12/{n}")
    expect(summary.nth(1)).to_contain_text(f"12/{len(fig1_traces['agenda'])}")
    heads = depth.locator("table.bv-agenda thead th").all_inner_texts()
    assert [h.strip() for h in heads] == ["signature", "nodes", "depth", "chosen", "why"]
    assert "average depth" in lookahead.locator("table.bv-agenda thead").inner_text()
    chosen = depth.locator("table.bv-agenda tr.bv-chosen td.bv-sig")
    expect(chosen).to_have_text(f"matmul{SEPARATOR}U")
    expect(chosen).to_have_attribute("title", t.steps[12].signature_name)
    # --- the notebook line that built the batch ---------------------------------------------
    expect(depth.locator(".bv-batch-details .bv-source")).to_contain_text("built at In[1], line 3")

    # --- stepping keeps everything inside ---------------------------------------------------
    depth.locator("button.bv-step-forward").click()
    expect(depth.locator(".bv-header-view")).to_contain_text(f"step 13/{n}", timeout=WAIT_MS)
    assert_fits(depth, "Figure 1, depth, step 13")
    shot(page, "window-06-figure1-depth-step13", depth)
    assert_no_widget_errors(page)


def test_the_saved_page_fits_too(chromium_browser, tmp_path, fig1_traces):
    graph, loss, _ = figure1("agenda")
    path = bv.compare(loss, "depth", "agenda").save_html(tmp_path / "compare.html")
    graph.finish()
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        root = page.locator("body")
        depth = page.locator(".bv-pane-0")
        depth.locator("input.bv-slider").fill("12")
        n = len(fig1_traces["depth"])
        _expect()(depth.locator(".bv-step-label")).to_have_text(f"12/{n}")
        _expect()(depth.locator(".bv-header-view")).to_contain_text(f"step 12/{n}")
        assert re.search(rf"\b12/{n}\b", page.locator("table.bv-summary").inner_text())
        m = measure(root)
        assert m["scrolls"] == [] and m["outside"] == [], m
        assert m["smallest"] >= MIN_TEXT_PX - 0.01, m
        screenshot(page, "window-07-saved-compare")
        # every step, back and forth: each pane's picture shows its own batch
        measured = step_through(root, target=12)
        assert len(measured["results"]) >= 2 * n and problems(measured, "saved compare", MIN_TEXT_PX, 560) == []
        screenshot(page, "window-08-saved-compare-followed")
    finally:
        context.close()
