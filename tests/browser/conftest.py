"""Fixtures for the JupyterLab-in-Chromium browser tests (see README.md in this folder).

* ``jupyterlab_server`` (session): a private ``jupyter lab`` on a free 127.0.0.1 port whose
  root dir is a temp dir holding copies of ``tests/browser/fixtures/*.ipynb``; copy more with
  ``jupyterlab_server.add("notebooks/01_figure1.ipynb")``.
* ``chromium_browser`` (session): Debian's Chromium launched headless through Playwright.
* ``page`` (function): a fresh browser context + page; on failure a screenshot is saved to
  ``artifacts/screenshots/FAILED-<test>.png`` and the browser console is printed.

Every test in this folder is marked ``browser``.  When Chromium (or jupyterlab/playwright)
is missing the tests are skipped, unless ``CI=true``, where they fail instead.
"""

from __future__ import annotations

import importlib.util
import os

import pytest

from . import jupyterlab as jl

_HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.hookimpl(tryfirst=True)  # before `-m browser` deselection looks at the marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.path).startswith(_HERE + os.sep):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Expose each phase's report on the item so fixtures can see whether the test failed.
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


def _missing_requirements() -> list[str]:
    missing = []
    if not jl.chromium_available():
        missing.append(f"Chromium at {jl.CHROMIUM_PATH}")
    for mod, pip_name in (("playwright", "playwright"), ("jupyterlab", "jupyterlab"), ("ipykernel", "ipykernel")):
        if importlib.util.find_spec(mod) is None:
            missing.append(f"python package {pip_name!r}")
    return missing


@pytest.fixture(scope="session")
def browser_requirements():
    """Skip (or, with CI=true, fail) when the browser test stack is not installed."""
    missing = _missing_requirements()
    if missing:
        msg = (
            "browser tests need: " + ", ".join(missing) + ". Run scripts/install-browser-deps.sh "
            "(Chromium + Graphviz) and `pip install jupyterlab playwright ipykernel` in the venv."
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg + " (CI=true: failing instead of skipping)", pytrace=False)
        pytest.skip(msg)


@pytest.fixture(scope="session")
def jupyterlab_server(browser_requirements, tmp_path_factory):
    """A running JupyterLab serving copies of tests/browser/fixtures/*.ipynb."""
    workdir = tmp_path_factory.mktemp("jupyterlab")
    notebooks = sorted(jl.FIXTURES_DIR.glob("*.ipynb"))
    server = jl.start_jupyterlab(workdir, notebooks)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def chromium_browser(browser_requirements):
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        browser = jl.launch_chromium(pw)
        try:
            yield browser
        finally:
            browser.close()
    finally:
        pw.stop()


@pytest.fixture
def page(request, chromium_browser, jupyterlab_server):
    """A fresh Playwright page (own context, 1400x1000) for one test."""
    yield from _fresh_page(request, chromium_browser, jupyterlab_server, jl.DEFAULT_VIEWPORT)


@pytest.fixture
def laptop(request, chromium_browser, jupyterlab_server):
    """A page at 1280 x 800 (a laptop), JupyterLab's default sidebar open."""
    yield from _fresh_page(request, chromium_browser, jupyterlab_server, jl.LAPTOP)


def _fresh_page(request, chromium_browser, jupyterlab_server, viewport: dict):
    """A page in its own context; on failure, a screenshot and the browser's console."""
    context = chromium_browser.new_context(viewport=viewport)
    context.set_default_timeout(30_000)
    pg = context.new_page()
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"[{m.type}] {m.text}"))
    pg.on("pageerror", lambda e: console.append(f"[pageerror] {e}"))
    pg.bv_console = console  # for tests that want to inspect browser console output
    try:
        yield pg
    finally:
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            try:
                path = jl.screenshot(pg, f"FAILED-{request.node.name}")
                print(f"\nscreenshot of the failing page: {path}")
            except Exception as exc:  # the page may be gone
                print(f"\n(could not take a failure screenshot: {exc})")
            print("--- browser console (last 50) ---\n" + "\n".join(console[-50:]))
            print(f"--- jupyter server log: {jupyterlab_server.log_path}")
        context.close()


@pytest.fixture(scope="module")
def fig1_traces():
    """The depth and agenda traces of Figure 1 that the notebook and the window show (same
    builder, same seed)."""
    import batchviz as bv
    from batchviz.examples import figure1

    graph, loss, _ = figure1("agenda")
    out = {name: bv.trace(loss, name) for name in ("depth", "agenda")}
    graph.finish()
    return out
