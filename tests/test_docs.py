"""The documentation site builds with warnings as errors, and shows what it should.

The build is the one CI and ``make docs`` run (``-W --keep-going -n``): a broken internal
link, a docstring Sphinx cannot parse, or a failing example on a concept page fails it
(``-T`` adds the failing cell and its traceback to the report).
Then the pages are checked for what a reader needs: every op of ``batchviz.ops.api`` in
the API reference, and the concept pages' executed output (schedules and pictures).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import batchviz as bv
import batchviz.nn as nn_api
import batchviz.ops.api as ops_api
from helpers import pyproject, requirement_name

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

from readme_links import rewrite_readme  # noqa: E402  (docs/_ext is not a package)

IN_CI = os.environ.get("CI") == "true"
CONCEPT_PAGES = ["lazy-graphs", "signatures", "depth-vs-agenda", "optimum", "contiguous-memory",
                 "layout"]


def missing_tools() -> list[str]:
    missing = [name for name in ("sphinx", "myst_nb", "sphinx_book_theme")
               if importlib.util.find_spec(name) is None]
    if shutil.which("dot") is None:
        missing.append("Graphviz's dot program")
    return missing


def build_site(out: Path) -> Path:
    """Build the site into ``out``; return its html folder. Fails with sphinx's output."""
    html = out / "html"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-T", "-W", "--keep-going", "-n", "-b", "html",
         "-d", str(out / "doctrees"), str(DOCS), str(html)],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (
        f"sphinx-build failed (exit {result.returncode}):\n{result.stdout[-6000:]}\n"
        f"{result.stderr[-6000:]}")
    return html


def page(site: Path, name: str) -> str:
    path = site / f"{name}.html"
    assert path.is_file(), f"{name}.html was not built"
    return path.read_text(encoding="utf-8")


def text(html: str) -> str:
    """What a reader sees: the page without its tags (code is split into spans)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


@pytest.mark.slow
def test_site_builds_with_warnings_as_errors_and_shows_what_it_should(tmp_path):
    # One test, one build: split into several tests, pytest-xdist would build once per worker.
    missing = missing_tools()
    if missing:
        message = (f"the docs build needs {', '.join(missing)}: "
                   'pip install -e ".[docs]" (and apt-get install graphviz)')
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    site = build_site(tmp_path)
    check_sections(site)
    check_api_reference(site)
    check_concept_pages(site)
    check_tutorials_and_notebooks(site)
    check_nothing_loads_from_the_network(site)
    check_math_is_mathml(site)


def check_sections(site: Path) -> None:
    for name in ["index", "getting-started", "concepts/index", "api", "tutorials",
                 "notebooks", "benchmarks"] + [f"concepts/{p}" for p in CONCEPT_PAGES]:
        page(site, name)
    assert "make demo" in text(page(site, "getting-started"))
    assert "make test" in text(page(site, "getting-started"))
    benchmarks = text(page(site, "benchmarks"))
    assert "python -m benchmarks overhead" in benchmarks
    assert "session" not in benchmarks.lower()  # results for users, not a lab log


def check_api_reference(site: Path) -> None:
    """Every op of ``batchviz.ops.api`` and the core classes and functions are documented."""
    api = page(site, "api")
    anchors = set(re.findall(r'id="(batchviz\.[\w.]+)"', api))
    expected = {f"batchviz.{name}" for name in ops_api.__all__} | {
        f"batchviz.{name}" for name in (
            "Model", "Parameters", "LookupParameters", "Graph", "new_graph", "Expression",
            "Strategy", "PendingView", "validate_schedule", "register_strategy",
            "set_backend", "set_dtype", "last_run_stats", "trace", "explain", "render",
            "optimal_schedule")} | {
        f"batchviz.nn.{name}" for name in nn_api.__all__}
    missing = sorted(expected - anchors)
    assert not missing, f"not in the API reference (docs/api.rst): {missing}"
    # docstrings made it, not only the names
    assert "Finish the open graph and open a new one" in text(api)


def check_concept_pages(site: Path) -> None:
    """The code cells ran: their printed schedules and their pictures are on the pages."""
    depth_vs_agenda = text(page(site, "concepts/depth-vs-agenda"))
    assert "agenda" in depth_vs_agenda and "average depth" in depth_vs_agenda
    # the schedule printed by a cell: agenda batches the three losses together
    assert "batch 21: 3 x squared_distance" in depth_vs_agenda
    assert "ScheduleError" in depth_vs_agenda  # the broken strategy's error is shown
    for name in CONCEPT_PAGES:
        html = page(site, f"concepts/{name}")
        pictures = re.findall(r'<img[^>]+src="([^"]+\.svg)"', html)
        assert pictures, f"concepts/{name} has no picture"
        for src in pictures:
            assert (site / "concepts" / src).resolve().is_file(), f"{name}: {src} missing"
    assert "copies avoided" in text(page(site, "concepts/contiguous-memory"))
    # the solver's proof, printed by a cell: the bound (4) is out of reach, the optimum is 5
    assert "optimum: 5 batches (optimal: fewer than 5 batches proven impossible" in text(
        page(site, "concepts/optimum"))


def check_tutorials_and_notebooks(site: Path) -> None:
    """Every tutorial README and notebook of the repository has its page, linked."""
    tutorials = sorted(p.parent.name for p in (REPO / "tutorials").glob("*/README.md")
                       if p.parent.name[0] not in "_.")
    notebooks = sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb"))
    for name in tutorials:
        assert f'href="tutorials/{name}.html"' in page(site, "tutorials")
    for name in notebooks:
        assert f'href="notebooks/{name}.html"' in page(site, "notebooks")
    overview = REPO / "tutorials" / "README.md"
    if overview.is_file():  # the course's introduction is on the Tutorials page
        headings = re.findall(r"^## (.+)$", overview.read_text(encoding="utf-8"), re.M)
        shown = text(page(site, "tutorials"))
        for heading in headings:
            assert re.sub(r"[`*]", "", heading).strip() in shown, heading
    if not tutorials:
        assert "not written yet" in text(page(site, "tutorials/coming-soon"))
    if not notebooks:
        assert "not written yet" in text(page(site, "notebooks/coming-soon"))


def readme_example() -> str:
    """The README's Python example (its first ``python`` block)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return re.search(r"^```python\n(.*?)^```", readme, re.S | re.M).group(1)


def test_readme_example_runs_and_prints_the_whole_run(capsys):
    """The README's example prints the run's counters after ``backward()``, so that they
    count the backward pass too (before it, they said "backward 0 batches")."""
    exec(compile(readme_example(), "README.md", "exec"), {})
    printed = capsys.readouterr().out
    stats = bv.last_run_stats()
    assert stats.to_dict()["backward"]["batches"] > 0
    assert str(stats) in printed.splitlines(), printed


def test_readme_example_is_as_long_as_its_heading_says():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "## Fifteen lines" in readme
    assert len([line for line in readme_example().splitlines() if line.strip()]) == 15


def test_readme_and_getting_started_name_every_strategy_and_the_tools():
    """Every registered strategy, ``check_numerics``, ``register_strategy`` and ``make docs``
    are named where a new user looks, and the README says how to run JupyterLab as root."""
    from batchviz.schedule import STRATEGIES
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    started = (REPO / "docs" / "getting-started.md").read_text(encoding="utf-8")
    for text in (readme, started):
        for name in STRATEGIES:
            assert f"`{name}`" in text or f'"{name}"' in text, name
        for tool in ("check_numerics", "register_strategy", "make docs"):
            assert tool in text, tool
    assert "--allow-root" in readme


def test_readme_says_how_to_open_the_notebooks_and_run_a_tutorial():
    """The commands are there, and the extras the README installs provide their programs
    (``make test`` installs those extras too)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/jupyter lab notebooks/" in readme
    assert ".venv/bin/python -m pytest tutorials -m ex3" in readme
    installed = re.search(r'\.venv/bin/pip install -e "\.\[([\w,]+)\]"', readme).group(1)
    extras = pyproject()["project"]["optional-dependencies"]
    provided = {requirement_name(r) for extra in installed.split(",") for r in extras[extra]}
    assert {"jupyterlab", "pytest"} <= provided, provided
    make_test = re.search(r'pip install -q -e "\.\[([\w,]+)\]"',
                          (REPO / "Makefile").read_text(encoding="utf-8")).group(1)
    assert set(installed.split(",")) <= set(make_test.split(","))


REMOTE = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["']?(?:https?:)?//""",
                    re.I)


def check_nothing_loads_from_the_network(site: Path) -> None:
    """Every page reads the same offline: no script, stylesheet or picture from a CDN
    (Sphinx's default math renderer, MathJax, is one)."""
    for path in site.rglob("*.html"):
        html = path.read_text(encoding="utf-8")
        remote = [m.group(0) for m in REMOTE.finditer(html)]
        assert not remote, f"{path.relative_to(site)} loads {remote}"


def check_math_is_mathml(site: Path) -> None:
    """The notebook with a formula shows it as MathML written at build time, not as TeX
    waiting for a script."""
    html = page(site, "notebooks/01_figure1")
    assert re.search(r'<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">', html)
    assert "<mi>tanh</mi>" in html
    assert "\\tanh" not in text(html) and "$$" not in html


def test_readme_links_are_translated_for_the_site(tmp_path):
    (tmp_path / "docs" / "concepts").mkdir(parents=True)
    (tmp_path / "docs" / "concepts" / "signatures.md").write_text("# s\n")
    pages = tmp_path / "docs" / "tutorials"
    pages.mkdir()
    one, two = tmp_path / "tutorials" / "01-one", tmp_path / "tutorials" / "02-two"
    one.mkdir(parents=True)
    two.mkdir()
    (one / "stub.py").write_text("x = 1\n")
    (one / "figure.png").write_bytes(b"png")
    readme = one / "README.md"
    text = ("See [the stub](stub.py), [next](../02-two/README.md#steps), "
            "[concepts](../../docs/concepts/signatures.md), [web](https://example.org), "
            "[here](#steps) and [gone](missing.py).\n"
            "![figure](figure.png)\n"
            "```python\nx = [code](stub.py)\n```\n"
            "[def]: stub.py\n")
    known = {readme.resolve(): "01-one", (two / "README.md").resolve(): "02-two"}
    out = rewrite_readme(text, readme, pages, tmp_path / "docs", known)
    assert "[the stub](path:../../tutorials/01-one/stub.py)" in out
    assert "[next](02-two.md#steps)" in out
    assert "[concepts](../concepts/signatures.md)" in out
    assert "[web](https://example.org)" in out and "[here](#steps)" in out
    assert "[gone](missing.py)" in out  # broken: left for Sphinx to report
    assert "![figure](../../tutorials/01-one/figure.png)" in out
    assert "x = [code](stub.py)" in out  # code is not touched
    assert "[def]: path:../../tutorials/01-one/stub.py" in out
