"""Self-test of the JupyterLab browser harness against tests/browser/fixtures/widget_fixture.ipynb.

The fixture mimics what ``bv.Stepper`` will do: Play + IntSlider (jslink'ed in the front-end),
a Step button handled in the kernel, and an HTML view re-rendered by the kernel.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from .jupyterlab import (
    JupyterLabError,
    assert_no_widget_errors,
    open_notebook,
    run_all_cells,
    screenshot,
    wait_for_widgets_rendered,
    widget_errors,
)

pytestmark = pytest.mark.browser

NOTEBOOK = "widget_fixture.ipynb"
WAIT_MS = 15_000  # generous upper bound for one kernel round trip on a loaded CI machine


def _expect():
    from playwright.sync_api import expect

    return expect


def _slider_value(page) -> int:
    return int(page.locator(".fixture-slider .widget-readout").inner_text().strip())


def test_widget_fixture_step_and_play(page):
    expect = _expect()

    open_notebook(page, NOTEBOOK)
    screenshot(page, "harness-01-opened")

    run_all_cells(page)  # Run > Run All Cells; waits for the kernel and for widget views
    widgets = page.locator(".jp-OutputArea-output .jupyter-widgets").first
    expect(widgets).to_be_visible()
    expect(page.locator(".widget-slider.fixture-slider")).to_be_visible()
    expect(page.locator(".widget-play.fixture-play")).to_be_visible()
    assert_no_widget_errors(page)

    view = page.locator(".fixture-view")
    caption = view.locator("svg text")
    rows = view.locator("table.agenda tbody tr")
    expect(caption).to_have_text("step 0")
    expect(rows).to_have_count(0)
    assert _slider_value(page) == 0
    output = page.locator(".jp-Cell").filter(has=page.locator(".fixture-view")).locator(".jp-OutputArea")
    output.scroll_into_view_if_needed()
    screenshot(page, "harness-02-rendered")
    screenshot(page, "harness-02-rendered-widget", locator=output)

    # --- Step button: kernel callback moves the slider, kernel re-renders the HTML view ----
    step = page.locator("button.fixture-step")
    expect(step).to_have_text(re.compile(r"Step"))
    step.click()
    expect(caption).to_have_text("step 1", timeout=WAIT_MS)
    expect(rows).to_have_count(1)
    step.click()
    expect(caption).to_have_text("step 2", timeout=WAIT_MS)
    expect(rows).to_have_count(2)
    expect(rows.last).to_have_attribute("data-step", "2")
    expect(page.locator(".fixture-slider .widget-readout")).to_have_text("2")
    screenshot(page, "harness-03-after-step")
    screenshot(page, "harness-03-after-step-widget", locator=output)

    # --- Play: the front-end timer advances Play, jslink drives the slider -----------------
    start = _slider_value(page)
    play_button = page.locator(".fixture-play button:has(i.fa-play)")
    play_button.click()
    page.wait_for_function(
        """(start) => {
             const r = document.querySelector('.fixture-slider .widget-readout');
             return r && parseInt(r.textContent, 10) >= start + 3;
           }""",
        arg=start,
        timeout=WAIT_MS,
    )
    # ... and the slider's new values reach the kernel, which re-renders the view.
    page.wait_for_function(
        """(start) => {
             const t = document.querySelector('.fixture-view svg text');
             const m = t && /step (\\d+)/.exec(t.textContent);
             return m && parseInt(m[1], 10) >= start + 3;
           }""",
        arg=start,
        timeout=WAIT_MS,
    )
    screenshot(page, "harness-04-playing")
    # While playing, the play button turns into a pause button; pause to leave a stable state.
    page.locator(".fixture-play button:has(i.fa-pause)").click()
    expect(page.locator(".fixture-play button:has(i.fa-play)")).to_be_visible()
    value = _slider_value(page)
    assert value >= start + 3
    expect(caption).to_have_text(f"step {value}", timeout=WAIT_MS)
    expect(rows).to_have_count(value)
    screenshot(page, "harness-05-after-play")
    screenshot(page, "harness-05-after-play-widget", locator=output)
    assert_no_widget_errors(page)


def _write_notebook(path, sources):
    # Written by hand rather than with nbformat: importing nbformat (jsonschema) costs seconds.
    nb = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}},
        "cells": [
            {"cell_type": "code", "id": f"cell-{i}", "metadata": {}, "source": src, "outputs": [], "execution_count": None}
            for i, src in enumerate(sources)
        ],
    }
    path.write_text(json.dumps(nb, indent=1))


_MISSING_WIDGET = (
    "from IPython.display import display\n"
    "display({'application/vnd.jupyter.widget-view+json':"
    " {'model_id': 'no-such-model', 'version_major': 2, 'version_minor': 0},"
    " 'text/plain': 'widget'}, raw=True)"
)


def test_harness_fails_fast_on_errors(page, jupyterlab_server):
    """A raising cell or an unrenderable widget gives a clear error quickly, not a timeout."""
    _write_notebook(
        jupyterlab_server.root_dir / "failing.ipynb",
        [_MISSING_WIDGET, "x = 1", "raise ValueError('boom from the fixture')", "y = 2"],
    )
    open_notebook(page, "failing.ipynb")

    t0 = time.monotonic()
    with pytest.raises(JupyterLabError, match=r"cell 2 raised ValueError: boom from the fixture(?s:.*)raise ValueError"):
        run_all_cells(page, timeout=30_000)
    with pytest.raises(JupyterLabError, match=r"ipywidgets could not render: cell 0: Error displaying widget: model not found"):
        wait_for_widgets_rendered(page, timeout=30_000)
    assert time.monotonic() - t0 < 20, "failures should be reported long before the 30 s timeouts"
    assert widget_errors(page) == ["Error displaying widget: model not found"]
    screenshot(page, "harness-06-errors")
