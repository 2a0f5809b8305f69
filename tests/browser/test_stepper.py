"""bv.Stepper and bv.compare in a real browser: notebook 01 in JupyterLab, and the static
pages written by ``save_html`` opened straight from disk (file://).

The expected states come from the same trace computed here, in the test process: after
every click the test checks that the picture's highlighted boxes (``g.node.bv-batch``) are
exactly the trace's batch of the step the controls show, and that the agenda table has one
row per signature on the agenda with the chosen one marked.
"""
from __future__ import annotations

import re

import pytest

import batchviz as bv
from batchviz.examples import figure1

from .jupyterlab import assert_no_widget_errors, open_notebook, run_all_cells, screenshot

pytestmark = pytest.mark.browser

NOTEBOOK = "notebooks/01_figure1.ipynb"
WAIT_MS = 15_000  # one kernel round trip on a loaded machine, with room to spare


def _expect():
    from playwright.sync_api import expect

    return expect


def _batch_keys(trace, step: int, collapsed: bool = False) -> list:
    """The boxes that draw ``step``'s batch: one per node, or (``collapsed``, as compare's
    half-width panes draw Figure 1) the boxes of their signature and depth."""
    if step == len(trace.steps):
        return []
    if not collapsed:
        return sorted(f"n{i}" for i in trace.steps[step].batch)
    scene = bv.render(trace, step, collapse=True).scene
    return sorted({scene.nodes[scene.index_of_node[i]].key for i in trace.steps[step].batch})


def _shown_batch(root) -> list:
    """DOT names of the boxes drawn as this step's batch inside ``root`` (a batch shown in
    several strips of the picture has each strip draw the whole graph: each name once)."""
    return sorted(set(root.locator(".bv-graph svg g.node.bv-batch").evaluate_all(
        "els => els.map(e => e.getAttribute('data-key'))")))


def _check_step(root, trace, step: int, collapsed: bool = False) -> None:
    """The picture, the agenda table and the header of ``root`` show ``step`` of ``trace``."""
    expect = _expect()
    s = trace.steps[step]
    expect(root.locator(".bv-header-view")).to_contain_text(f"step {step}/{len(trace)}",
                                                            timeout=WAIT_MS)
    assert _shown_batch(root) == _batch_keys(trace, step, collapsed)
    rows = root.locator(".bv-agenda-table table.bv-agenda tbody tr")
    expect(rows).to_have_count(len(s.agenda))
    chosen = root.locator(".bv-agenda-table tr.bv-chosen")
    expect(chosen).to_have_count(1)
    expect(chosen).to_contain_text(trace.display_name(s.signature))
    expect(root.locator(".bv-batch-details")).to_contain_text(f"batch {step}")


def _shot(page, name: str, root) -> None:
    """A screenshot of the viewport with ``root``'s top at the top (widgets taller than the
    viewport come out garbled as element screenshots inside JupyterLab's scrolling panel)."""
    root.evaluate("e => e.scrollIntoView({block: 'start'})")
    screenshot(page, name)


def _readout(root) -> int:
    return int(root.locator(".bv-slider .widget-readout").inner_text().strip())


# --- JupyterLab --------------------------------------------------------------------------
def test_figure1_notebook_steps_plays_and_compares(page, jupyterlab_server, fig1_traces):
    expect = _expect()
    name = jupyterlab_server.add(NOTEBOOK)
    open_notebook(page, name)
    run_all_cells(page, timeout=180_000)
    assert_no_widget_errors(page)

    steppers = page.locator(".bv-stepper")
    expect(steppers).to_have_count(5)  # depth, agenda, the two panes of compare, greedy
    depth = steppers.nth(0)
    _check_step(depth, fig1_traces["depth"], 0)
    assert _shown_batch(depth) == ["n0", "n19", "n39"]  # the three zero vectors
    svg_before = depth.locator(".bv-graph svg.bv-svg").inner_html()
    _shot(page, "stepper-01-depth-step0", depth)

    # --- forward twice, back once: the kernel redraws the picture and the table ----------
    forward = depth.locator("button.bv-step-forward")
    forward.click()
    _check_step(depth, fig1_traces["depth"], 1)
    assert len(_shown_batch(depth)) == 9  # all nine input vectors in one batch
    forward.click()
    _check_step(depth, fig1_traces["depth"], 2)
    depth.locator("button.bv-step-back").click()
    _check_step(depth, fig1_traces["depth"], 1)
    assert depth.locator(".bv-graph svg.bv-svg").inner_html() != svg_before
    assert _readout(depth) == 1
    _shot(page, "stepper-02-depth-step1", depth)

    # --- play: the front-end Play drives the slider, the kernel follows --------------------
    depth.locator(".bv-play button:has(i.fa-play)").click()
    page.wait_for_function(
        """() => {
             const r = document.querySelector('.bv-stepper .bv-slider .widget-readout');
             return r && parseInt(r.textContent, 10) >= 5;
           }""", timeout=WAIT_MS)
    depth.locator(".bv-play button:has(i.fa-pause)").click()
    expect(depth.locator(".bv-play button:has(i.fa-play)")).to_be_visible()
    value = _readout(depth)
    assert value >= 5
    _check_step(depth, fig1_traces["depth"], value)
    _shot(page, "stepper-03-depth-after-play", depth)

    # --- compare: starts at step 12, where depth runs the short sequence's output alone ---
    cmp = page.locator(".bv-compare")
    panes = [cmp.locator(".bv-pane-0"), cmp.locator(".bv-pane-1")]
    summary = cmp.locator(".bv-compare-summary table.bv-summary tbody tr")
    expect(summary).to_have_count(2)
    expect(summary.nth(0)).to_contain_text("1 \u00d7 matmul\u00b7U")
    expect(summary.nth(1)).to_contain_text("2 \u00d7 matmul\u00b7W")
    # half a notebook cell each: Figure 1 drawn one box per signature and depth
    expect(panes[0].locator(".bv-graph svg g.node.bv-group").first).to_be_attached()
    _check_step(panes[0], fig1_traces["depth"], 12, collapsed=True)
    _check_step(panes[1], fig1_traces["agenda"], 12, collapsed=True)
    _shot(page, "stepper-04-compare-step12", cmp)

    # linked: stepping the agenda pane moves the depth pane too
    panes[1].locator("button.bv-step-forward").click()
    _check_step(panes[1], fig1_traces["agenda"], 13, collapsed=True)
    _check_step(panes[0], fig1_traces["depth"], 13, collapsed=True)
    # unlinked: each pane on its own
    link = cmp.locator("button.bv-link")
    expect(link).to_have_class(re.compile(r"\bmod-active\b"))
    link.click()
    expect(link).not_to_have_class(re.compile(r"\bmod-active\b"), timeout=WAIT_MS)
    panes[1].locator("button.bv-step-forward").click()
    _check_step(panes[1], fig1_traces["agenda"], 14, collapsed=True)
    _check_step(panes[0], fig1_traces["depth"], 13, collapsed=True)
    expect(summary.nth(0)).to_contain_text("13")
    _shot(page, "stepper-05-compare-unlinked", cmp)
    assert_no_widget_errors(page)


# --- the static pages, straight from disk ------------------------------------------------
@pytest.fixture
def static_page(request, chromium_browser):
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(10_000)
    pg = context.new_page()
    errors: list = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("request", lambda r: errors.append(f"network request {r.url}")
          if not r.url.startswith(("file:", "data:")) else None)
    pg.bv_errors = errors
    yield pg
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        screenshot(pg, f"FAILED-{request.node.name}")
    context.close()


def test_saved_stepper_page_steps_and_plays_offline(static_page, tmp_path, fig1_traces):
    expect = _expect()
    graph, loss, _ = figure1("agenda")
    path = bv.Stepper(loss, "agenda").save_html(tmp_path / "agenda.html")
    graph.finish()
    page = static_page
    page.goto(path.as_uri())
    root = page.locator(".bv-pane-0")
    t = fig1_traces["agenda"]
    _check_step(root, t, 0)
    expect(root.locator(".bv-step-label")).to_have_text(f"0/{len(t)}")
    expect(root.locator("button.bv-step-back")).to_be_disabled()

    root.locator("button.bv-step-forward").click()
    _check_step(root, t, 1)
    root.locator("button.bv-step-forward").click()
    root.locator("button.bv-step-back").click()
    _check_step(root, t, 1)
    screenshot(page, "static-01-agenda-step1")

    # the slider jumps straight to a step
    root.locator("input.bv-slider").fill("19")
    _check_step(root, t, 19)
    assert _shown_batch(root) == ["n14", "n35", "n60"]  # the three output layers, together
    screenshot(page, "static-02-agenda-step19")
    # the picture is a window around the batch: as wide as the whole picture, less tall;
    # "whole graph" shows all of it (scrolling in its box), and the window comes back after
    picture = root.locator(".bv-graph svg.bv-svg")
    window_box = picture.get_attribute("viewBox")
    assert root.locator(".bv-graph svg.bv-strip").count() >= 1
    root.locator("input.bv-whole").check()
    expect(root.locator(".bv-graph")).to_have_class(re.compile(r"\bbv-whole-graph\b"))
    assert root.locator(".bv-graph svg.bv-strip").count() == 0
    whole_box = picture.get_attribute("viewBox")
    assert float(whole_box.split()[2]) == float(window_box.split()[2])    # as wide
    assert float(whole_box.split()[3]) > float(window_box.split()[3])     # taller
    assert _shown_batch(root) == ["n14", "n35", "n60"]
    root.locator("button.bv-step-back").click()                           # stays whole
    _check_step(root, t, 18)
    assert root.locator(".bv-graph svg.bv-strip").count() == 0
    root.locator("input.bv-whole").uncheck()
    expect(root.locator(".bv-graph")).not_to_have_class(re.compile(r"\bbv-whole-graph\b"))
    assert root.locator(".bv-graph svg.bv-strip").count() >= 1

    # play at the fastest speed until the end; the page stops by itself
    root.locator("select.bv-speed").select_option(label="8 steps/s")
    root.locator("button.bv-play").click()
    expect(root).to_have_attribute("data-playing", "true")
    expect(root.locator(".bv-step-label")).to_have_text(f"{len(t)}/{len(t)}", timeout=WAIT_MS)
    expect(root).not_to_have_attribute("data-playing", "true")
    expect(root.locator(".bv-agenda-table")).to_contain_text("The agenda is empty")
    assert _shown_batch(root) == []
    expect(root.locator("button.bv-step-forward")).to_be_disabled()
    screenshot(page, "static-03-agenda-end")
    assert page.bv_errors == []


def test_saved_compare_page_links_and_unlinks(static_page, tmp_path, fig1_traces):
    expect = _expect()
    graph, loss, _ = figure1("agenda")
    path = bv.compare(loss, "depth", "agenda").save_html(tmp_path / "compare.html")
    graph.finish()
    page = static_page
    page.goto(path.as_uri())
    depth, agenda = page.locator(".bv-pane-0"), page.locator(".bv-pane-1")
    link = page.locator("input.bv-link")
    expect(link).to_be_checked()

    depth.locator("input.bv-slider").fill("12")
    _check_step(depth, fig1_traces["depth"], 12, collapsed=True)
    _check_step(agenda, fig1_traces["agenda"], 12, collapsed=True)  # linked: followed
    rows = page.locator("table.bv-summary tbody tr")
    expect(rows.nth(0)).to_contain_text("1 \u00d7 matmul\u00b7U")
    expect(rows.nth(1)).to_contain_text("2 \u00d7 matmul\u00b7W")
    screenshot(page, "static-04-compare-step12")

    link.uncheck()
    agenda.locator("button.bv-step-forward").click()
    _check_step(agenda, fig1_traces["agenda"], 13, collapsed=True)
    _check_step(depth, fig1_traces["depth"], 12, collapsed=True)  # unlinked: stays
    # linking again brings the second pane to the first pane's step
    link.check()
    _check_step(agenda, fig1_traces["agenda"], 12, collapsed=True)
    # past the agenda's last step the shorter pane stops at its end
    depth.locator("input.bv-slider").fill("27")
    _check_step(depth, fig1_traces["depth"], 27, collapsed=True)
    expect(agenda.locator(".bv-step-label")).to_have_text(f"{len(fig1_traces['agenda'])}/{len(fig1_traces['agenda'])}")
    screenshot(page, "static-05-compare-depth27")
    assert page.bv_errors == []
