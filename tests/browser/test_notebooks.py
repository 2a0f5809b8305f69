"""Every notebook as a student runs it: JupyterLab at 1280 x 800 with the file browser open.

For every notebook in ``notebooks/`` that draws something (a ``bv.Stepper``, ``bv.compare``
or ``bv.explain``): Run All, then step every stepper and every compare through every step
(back to step 0, forward to the end, back to the middle; ``follow.py`` does it inside the
page) and check at each step that

* every box of the step's batch is in view in the picture's box (the picture follows the
  batch; the student never scrolls to find it), in every pane of a compare;
* no text of a picture is under 11 px on screen, and the picture's box fits the screen;
* a compare's two pictures stand side by side, both in view at once;
* ``bv.explain``'s picture of the graph is drawn with 11 px text or more.

Screenshots: ``notebook-<name>-<k>-<what>.png``, each widget at its middle step.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from batchviz.widgets.svgtext import MIN_TEXT_PX

from .follow import problems, step_through
from .jupyterlab import REPO_ROOT, assert_no_widget_errors, open_notebook, run_all_cells, screenshot

pytestmark = pytest.mark.browser

#: a picture's box must leave room on a 800 px screen for JupyterLab's bars and the controls
MAX_BOX_PX = 560
DRAWS = re.compile(r"\bbv\.(Stepper|compare|explain)\(")


def _calls(path: Path) -> dict:
    """How many steppers, compares and explains the code cells of a notebook make."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    calls = {"Stepper": 0, "compare": 0, "explain": 0}
    for name in DRAWS.findall(code):
        calls[name] += 1
    return calls


NOTEBOOKS = [p for p in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")) if any(_calls(p).values())]


def test_the_notebooks_that_draw_are_all_here():
    """The notebooks left out draw nothing (05_speed: benchmarks and a matplotlib chart)."""
    left_out = {p.name for p in (REPO_ROOT / "notebooks").glob("*.ipynb")} - {p.name for p in NOTEBOOKS}
    assert len(NOTEBOOKS) >= 4 and all("speed" in name for name in left_out), left_out


def _side_by_side(page, compare) -> list:
    """Problems with a compare's two pictures: not side by side, or not both in view."""
    graphs = compare.locator(".bv-graph")
    graphs.first.evaluate("e => e.scrollIntoView({block: 'center'})")
    view = page.locator(".jp-NotebookPanel-notebook").evaluate(
        "e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }")
    boxes = [graphs.nth(k).bounding_box() for k in range(graphs.count())]
    out = []
    if len(boxes) != 2:
        return [f"{len(boxes)} pictures in a compare of two"]
    a, b = boxes
    if b["x"] < a["x"] + a["width"] - 1:
        out.append(f"stacked: pane 1's picture starts at x={b['x']:.0f}, pane 0's ends at "
                   f"{a['x'] + a['width']:.0f}")
    for k, r in enumerate(boxes):
        inside = (r["x"] >= view[0] - 1 and r["x"] + r["width"] <= view[2] + 1
                  and r["y"] >= view[1] - 1 and r["y"] + r["height"] <= view[3] + 1)
        if not inside:
            out.append(f"pane {k}'s picture {r} is not inside the notebook's view {view}")
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_picture_follows_its_batch_and_is_readable(path, laptop, jupyterlab_server):
    page = laptop
    name = jupyterlab_server.add(path)
    open_notebook(page, name)
    assert page.locator("#jp-left-stack").bounding_box()["width"] >= 200  # the file browser
    run_all_cells(page, timeout=300_000)
    assert_no_widget_errors(page)
    calls = _calls(path)
    compares = page.locator(".bv-compare")
    alone = page.locator(".bv-stepper:not(.bv-compare .bv-stepper)")
    assert (alone.count(), compares.count()) == (calls["Stepper"], calls["compare"])

    found = []
    widgets = [(alone.nth(k), f"stepper {k}") for k in range(alone.count())]
    widgets += [(compares.nth(k), f"compare {k}") for k in range(compares.count())]
    for k, (root, what) in enumerate(widgets):
        if what.startswith("compare"):
            found += [f"{what}: {p}" for p in _side_by_side(page, root)]
        n = int(re.search(r"step \d+/(\d+)", root.locator(".bv-header-view").first.inner_text()).group(1))
        measured = step_through(root, target=n // 2)
        found += problems(measured, what, MIN_TEXT_PX, MAX_BOX_PX)
        for p in range(len(measured["results"][0])):  # every pane went through every step
            steps = {panes[p]["step"] for panes in measured["results"]}
            last = measured["results"][0][p]["n"]
            if steps != set(range(last + 1)):
                found.append(f"{what}, pane {p}: steps {sorted(set(range(last + 1)) - steps)} not shown")
        root.locator(".bv-graph").first.evaluate("e => e.scrollIntoView({block: 'center'})")
        screenshot(page, f"notebook-{path.stem}-{k}-{what.replace(' ', '')}")

    for k in range(page.locator(".bv-explain").count()):
        sizes = page.locator(".bv-explain").nth(k).evaluate(
            "e => [...e.querySelectorAll('svg text')].map("
            "t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)")
        assert sizes, "explain drew no picture of the graph"
        if min(sizes) < MIN_TEXT_PX - 0.01:
            found.append(f"explain {k}: text of {min(sizes):.2f} px")
        page.locator(".bv-explain .bv-thumb").nth(k).evaluate("e => e.scrollIntoView({block: 'center'})")
        screenshot(page, f"notebook-{path.stem}-explain{k}")
    assert_no_widget_errors(page)
    assert not found, "\n".join(found[:40]) + (f"\n... and {len(found) - 40} more" if len(found) > 40 else "")
