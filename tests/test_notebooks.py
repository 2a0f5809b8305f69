"""The notebooks in notebooks/ run top to bottom in a real kernel, and are stored clean.

Each notebook is executed by nbclient in a fresh ``python3`` kernel (jupyter_client starts
it with this interpreter, the venv's), with the working directory set to ``notebooks/`` and
the repository root on ``PYTHONPATH``, as a student opening it from a checkout would have.
Any cell that raises fails the test with the cell's traceback. The files in the repository
must carry no outputs, execution counts or saved widget state: diffs stay readable, and
nobody reads stale results as if they were current.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
EXPECTED = ["01_figure1", "02_bilstm_tagger", "03_treelstm", "04_contiguous_memory", "05_speed"]
CELL_TIMEOUT = 120        # seconds per cell
NOTEBOOK_BUDGET = 60      # the target per notebook; the test allows twice that on a busy machine
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def notebook_paths() -> list:
    return sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def _kernels_import_this_checkout(monkeypatch) -> None:
    """Kernels started from here import batchviz from this repository, as a student's would."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))


def _kernels_write_temporary_files_to(folder, monkeypatch) -> None:
    """A notebook's ``tempfile`` files (01_figure1 saves its pages for the student to open)
    go into the test's own folder, which pytest removes, not the machine's temp directory."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        monkeypatch.setenv(name, str(folder))


def test_the_five_notebooks_are_there():
    assert [p.stem for p in notebook_paths()] == EXPECTED


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    raw = json.loads(path.read_text(encoding="utf-8"))
    nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    nbformat.validate(nb)
    assert "widgets" not in raw.get("metadata", {}), "saved widget state: clear it before committing"
    assert raw["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, "a notebook without code"
    for k, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {k} of {path.name} has outputs: strip them"
            assert cell.execution_count is None, f"cell {k} of {path.name} has an execution count"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), \
        "every notebook opens with a title and prose"


@pytest.mark.slow
def test_a_notebook_kernel_runs_on_this_sessions_backend(monkeypatch):
    """The kernels below inherit the environment, so ``BATCHVIZ_BACKEND=cupy pytest`` runs
    the notebooks on the GPU (``scripts/gpu-check.sh``); this checks that they really do."""
    from batchviz.backend import state

    _kernels_import_this_checkout(monkeypatch)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from batchviz.backend import state\nprint(state.xp.__name__, end='')")])
    nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3").execute()
    printed = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.output_type == "stream"
                      and o.get("name") == "stdout")
    assert printed == state.xp.__name__


@pytest.mark.slow
@pytest.mark.parametrize("path", notebook_paths(), ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path, monkeypatch, tmp_path):
    _kernels_import_this_checkout(monkeypatch)
    _kernels_write_temporary_files_to(tmp_path, monkeypatch)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name="python3", allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError (with the traceback) on the first error
    seconds = time.perf_counter() - start
    print(f"{path.name}: {seconds:.1f} s")
    assert seconds < 2 * NOTEBOOK_BUDGET, f"{path.name} took {seconds:.0f} s (target {NOTEBOOK_BUDGET} s)"

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert all(o.output_type != "error" for o in outputs)
    widgets = sum(WIDGET_VIEW in o.get("data", {}) for o in outputs)
    if path.stem in ("01_figure1", "02_bilstm_tagger", "03_treelstm", "04_contiguous_memory"):
        assert widgets >= 1, f"{path.name} shows no widget"
    if path.stem == "01_figure1":
        assert widgets == 4  # depth, agenda, compare, the user-written strategy
        saved = sorted(p.name for p in tmp_path.glob("batchviz-*/*.html"))
        assert saved == ["figure1-agenda.html", "figure1-depth-vs-agenda.html"], saved
    if path.stem == "05_speed":
        assert any("image/png" in o.get("data", {}) for o in outputs), "no plot"
        assert not list(tmp_path.glob("batchviz-bench-*")), "the runs' JSON files were left"
    # the file on disk is untouched: executing never writes outputs back
    assert nbformat.read(path, as_version=4).cells[1].outputs == []
