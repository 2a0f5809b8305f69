"""Drive a real JupyterLab in a real (headless) Chromium with Playwright.

This module holds the reusable, pytest-independent parts of the browser test
harness; ``conftest.py`` wraps them in fixtures.  Typical use in a test::

    from .jupyterlab import open_notebook, run_all_cells, screenshot

    def test_something(page, jupyterlab_server):
        jupyterlab_server.add("notebooks/01_figure1.ipynb")   # copy into the server's root
        open_notebook(page, "01_figure1.ipynb")
        run_all_cells(page)
        page.locator(".widget-slider").first.wait_for()
        screenshot(page, "figure1-after-run")

Design notes
------------
* The server is started with ``--LabApp.expose_app_in_browser=True`` so that the
  page has ``window.jupyterapp`` (the same switch JupyterLab's own Galata UI
  tests rely on).  We use it only to *observe* state reliably (kernel status,
  execution counts, error outputs); the user-facing actions (opening the
  notebook, "Run > Run All Cells", clicking widgets) go through the real UI.
* Notebooks are rendered with ``windowingMode: "none"`` so that every cell is
  attached to the DOM (JupyterLab 4 otherwise virtualises off-screen cells,
  which makes DOM assertions on long notebooks flaky).
* News, update checks, the extension manager and the announcements toast are
  disabled: the machines running these tests usually have no network.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES_DIR = Path(__file__).resolve().parent / "fixtures"
SCREENSHOT_DIR = Path(os.environ.get("BATCHVIZ_SCREENSHOT_DIR", REPO_ROOT / "artifacts" / "screenshots"))

#: Debian's Chromium; Playwright's own browser download is not used.
CHROMIUM_PATH = os.environ.get("BATCHVIZ_CHROMIUM", "/usr/bin/chromium")

#: Flags for a closed-network machine: without them Chromium keeps trying to
#: reach Google services and floods the log with refused connections.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

DEFAULT_VIEWPORT = {"width": 1400, "height": 1000}
#: a laptop's screen: what the notebooks' pictures must fit, with the sidebar open
LAPTOP = {"width": 1280, "height": 800}

# JupyterLab plugins that would try to reach the internet or pop up toasts.
_DISABLED_LAB_EXTENSIONS = {
    "@jupyterlab/extensionmanager-extension": True,
    "@jupyterlab/apputils-extension:announcements": True,
}

# User settings written into a private settings dir (never the user's own).
_LAB_USER_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        # Attach every cell to the DOM (no virtualisation of off-screen cells).
        "windowingMode": "none",
    },
}

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


class JupyterLabError(RuntimeError):
    """JupyterLab failed to start, or a notebook could not be opened / run."""


# --------------------------------------------------------------------------- #
# Server
# --------------------------------------------------------------------------- #
def find_free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_ACTIVE_SERVER: Optional["JupyterLabServer"] = None


def active_server() -> "JupyterLabServer":
    """The most recently started, still running server (used when helpers get no ``server=``)."""
    if _ACTIVE_SERVER is None or not _ACTIVE_SERVER.running:
        raise JupyterLabError("no JupyterLab server is running; use the `jupyterlab_server` fixture")
    return _ACTIVE_SERVER


@dataclass
class JupyterLabServer:
    """A ``jupyter lab`` subprocess listening on 127.0.0.1 (see :func:`start_jupyterlab`)."""

    port: int
    token: str
    root_dir: Path
    log_path: Path
    proc: subprocess.Popen
    _log_file: Any = field(repr=False, default=None)

    # ---- URLs and REST ----------------------------------------------------
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def lab_url(self, name: str, *, reset: bool = True) -> str:
        """URL of ``/lab/tree/NAME`` with the token (``reset`` starts from a clean workspace)."""
        from urllib.parse import quote

        query = f"token={self.token}" + ("&reset" if reset else "")
        return f"{self.base_url}/lab/tree/{quote(name)}?{query}"

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Any:
        """Call the Jupyter Server REST API (``path`` like ``/api/sessions``); returns decoded JSON or None."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        req.add_header("Authorization", f"token {self.token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    # ---- files ------------------------------------------------------------
    def add(self, src: os.PathLike | str, dest: Optional[str] = None) -> str:
        """Copy a notebook/file/directory (relative paths are from the repo root) into the server's root.

        Returns the path relative to the server root, i.e. what to pass to :func:`open_notebook`.
        Works at any time: Jupyter Server reads files lazily.
        """
        src = Path(src)
        if not src.is_absolute():
            src = REPO_ROOT / src
        if not src.exists():
            raise FileNotFoundError(src)
        rel = dest or src.name
        target = self.root_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            shutil.copy2(src, target)
        return rel

    # ---- kernels ----------------------------------------------------------
    def shutdown_sessions(self, path: Optional[str] = None) -> int:
        """Shut down the kernel sessions of ``path`` (all sessions if None); returns how many."""
        n = 0
        for sess in self.api("GET", "/api/sessions") or []:
            if path is None or sess.get("path") == path:
                self.api("DELETE", f"/api/sessions/{sess['id']}")
                n += 1
        return n

    # ---- logs / teardown --------------------------------------------------
    def log_text(self, tail_chars: int = 20_000) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError as exc:
            return f"<could not read {self.log_path}: {exc}>"
        return text[-tail_chars:]

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server, its kernels and everything in its process group."""
        global _ACTIVE_SERVER
        if _ACTIVE_SERVER is self:
            _ACTIVE_SERVER = None
        # Kernels are launched in their own sessions (not in our process group), so
        # remember all descendants first and sweep any survivors at the end.
        descendants = []
        try:
            import psutil  # a dependency of ipykernel

            descendants = psutil.Process(self.proc.pid).children(recursive=True)
        except Exception:
            pass
        if self.running:
            with contextlib.suppress(Exception):
                self.api("POST", "/api/shutdown", timeout=5)  # graceful: also shuts down kernels
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout)
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)  # the whole process group (start_new_session=True)
            except (ProcessLookupError, PermissionError):
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(wait)
        for p in descendants:
            with contextlib.suppress(Exception):
                if p.is_running():
                    p.kill()
        if self._log_file is not None:
            self._log_file.close()


def _write_isolated_config(base: Path) -> dict[str, str]:
    """Private Jupyter config/runtime/settings dirs so the user's own setup never leaks in."""
    config_dir = base / "config"
    (config_dir / "labconfig").mkdir(parents=True, exist_ok=True)
    (config_dir / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": _DISABLED_LAB_EXTENSIONS}, indent=1)
    )
    settings_dir = base / "lab-user-settings"
    for rel, value in _LAB_USER_SETTINGS.items():
        p = settings_dir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(value, indent=1))
    for d in ("runtime", "workspaces", "ipython", "data"):
        (base / d).mkdir(exist_ok=True)
    return {
        "config_dir": str(config_dir),
        "settings_dir": str(settings_dir),
        "runtime_dir": str(base / "runtime"),
        "workspaces_dir": str(base / "workspaces"),
        "ipython_dir": str(base / "ipython"),
        "data_dir": str(base / "data"),
    }


def start_jupyterlab(
    workdir: os.PathLike | str,
    notebooks: Iterable[os.PathLike | str] = (),
    *,
    startup_timeout: float = 90.0,
    extra_args: Iterable[str] = (),
    attempts: int = 3,
) -> JupyterLabServer:
    """Start ``jupyter lab`` (this interpreter's) on a free 127.0.0.1 port and wait for ``/api/status``.

    ``workdir`` (an empty temp dir) receives ``root/`` (the server's root_dir, into which
    ``notebooks`` are copied), private config dirs and ``server.log``.  The kernel inherits
    ``PYTHONPATH`` with the repo root first, so ``import batchviz`` works without installing it.
    """
    global _ACTIVE_SERVER
    workdir = Path(workdir)
    root_dir = workdir / "root"
    root_dir.mkdir(parents=True, exist_ok=True)
    dirs = _write_isolated_config(workdir)

    scratch = workdir / "tmp"  # what the notebooks' kernels write (01_figure1 saves pages)
    scratch.mkdir(exist_ok=True)
    env = dict(os.environ)
    env.update(
        TMPDIR=str(scratch),
        JUPYTER_CONFIG_DIR=dirs["config_dir"],
        JUPYTER_RUNTIME_DIR=dirs["runtime_dir"],
        JUPYTER_DATA_DIR=dirs["data_dir"],  # kernelspecs/labextensions still come from sys.prefix
        JUPYTER_PLATFORM_DIRS="1",
        IPYTHONDIR=dirs["ipython_dir"],
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        PYTHONPATH=os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])),
        # Make `python` in the kernelspec resolve to this interpreter's environment.
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )
    env.pop("JUPYTER_TOKEN", None)
    # what the notebooks write into the temp directory (e.g. 01_figure1's saved pages) stays
    # in workdir, which the test run removes
    (workdir / "tmp").mkdir(exist_ok=True)
    env["TMPDIR"] = str(workdir / "tmp")

    last_error = None
    for attempt in range(1, attempts + 1):
        port = find_free_port()
        token = secrets.token_hex(24)
        log_path = workdir / f"server-{attempt}.log"
        cmd = [
            sys.executable, "-m", "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root_dir}",
            "--ServerApp.allow_remote_access=False",
            "--ServerApp.terminals_enabled=False",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            "--LabApp.expose_app_in_browser=True",
            f"--LabApp.user_settings_dir={dirs['settings_dir']}",
            f"--LabApp.workspaces_dir={dirs['workspaces_dir']}",
            *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
            *extra_args,
        ]
        log_file = open(log_path, "w")
        log_file.write("$ " + " ".join(cmd).replace(token, "<token>") + "\n")
        log_file.flush()
        proc = subprocess.Popen(
            cmd, cwd=root_dir, env=env, stdout=log_file, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,  # own process group -> killpg on teardown
        )
        server = JupyterLabServer(port=port, token=token, root_dir=root_dir, log_path=log_path,
                                  proc=proc, _log_file=log_file)
        try:
            _wait_until_up(server, startup_timeout)
        except JupyterLabError as exc:
            server.stop()
            last_error = exc
            # Retry only the "someone grabbed our port" race; anything else is a real failure.
            if "address already in use" in server.log_text().lower() and attempt < attempts:
                continue
            raise
        for nb in notebooks:
            server.add(nb)
        _ACTIVE_SERVER = server
        return server
    raise last_error  # pragma: no cover


def _wait_until_up(server: JupyterLabServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    while time.monotonic() < deadline:
        if not server.running:
            raise JupyterLabError(
                f"jupyter lab exited with code {server.proc.returncode} before answering /api/status.\n"
                f"--- server log ({server.log_path}) ---\n{server.log_text()}"
            )
        try:
            status = server.api("GET", "/api/status", timeout=2)
            if isinstance(status, dict) and "started" in status:
                return
            last = f"unexpected answer {status!r}"
        except (urllib.error.URLError, ConnectionError, OSError, ValueError) as exc:
            last = repr(exc)
        time.sleep(0.2)  # polling a subprocess' HTTP port: nothing to wait_for on
    raise JupyterLabError(
        f"jupyter lab did not answer /api/status on port {server.port} within {timeout:.0f}s "
        f"(last: {last}).\n--- server log ({server.log_path}) ---\n{server.log_text()}"
    )


# --------------------------------------------------------------------------- #
# Browser
# --------------------------------------------------------------------------- #
def chromium_available() -> bool:
    return os.path.isfile(CHROMIUM_PATH) and os.access(CHROMIUM_PATH, os.X_OK)


def launch_chromium(playwright, *, headless: bool = True, **kwargs):
    """Launch Debian's Chromium through Playwright (fresh temporary profile each launch)."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM_PATH,
        headless=headless,
        args=CHROMIUM_ARGS + list(kwargs.pop("args", [])),
        **kwargs,
    )


# --------------------------------------------------------------------------- #
# JupyterLab page helpers
# --------------------------------------------------------------------------- #
# Shared JS helper, pasted at the top of each page function below (each of them is a
# plain function expression, so Playwright calls it with its argument).
_PANEL_JS = """
  const __panel = () => {
    const app = window.jupyterapp;
    if (!app || !app.shell) return null;
    const w = app.shell.currentWidget;
    return (w && w.content && w.sessionContext && w.context) ? w : null;
  };
"""


def _page_fn(params: str, body: str) -> str:
    """``(params) => { <__panel helper> body }`` as a string for page.evaluate / wait_for_function."""
    return f"({params}) => {{{_PANEL_JS}{body}}}"


_JS_OPENED = _page_fn("path", """  const dialog = document.querySelector('.jp-Dialog');
  if (dialog) return {dialog: dialog.innerText};
  const w = __panel();
  if (!w || w.context.path !== path || !w.context.isReady) return false;
  const s = w.sessionContext;
  const k = s.session && s.session.kernel;
  if (s.isReady && !k) return {dialog: 'notebook opened without a kernel (No Kernel)'};
  if (!k || k.connectionStatus !== 'connected' || k.status !== 'idle') return false;
  return {ok: true, kernel: k.name};""")

_JS_KERNEL_IDLE = _page_fn("", """  const w = __panel();
  const k = w && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle';""")

_JS_CELL_STATE = _page_fn("", """  const w = __panel();
  if (!w) return null;
  return w.content.widgets.map((cell, i) => {
    const m = cell.model;
    const out = {index: i, type: m.type, empty: !m.sharedModel.getSource().trim()};
    if (m.type === 'code') {
      out.count = m.executionCount;
      out.prompt = cell.promptNode ? cell.promptNode.textContent.trim() : '';
      out.errors = [];
      for (let j = 0; j < m.outputs.length; j++) {
        const o = m.outputs.get(j).toJSON();
        if (o.output_type === 'error') out.errors.push(o);
      }
    }
    return out;
  });""")

_JS_RUN_DONE = _page_fn("", """  const w = __panel();
  if (!w) return false;
  const pending = [];
  for (const [i, cell] of w.content.widgets.entries()) {
    const m = cell.model;
    if (m.type !== 'code') continue;
    for (let j = 0; j < m.outputs.length; j++) {
      const o = m.outputs.get(j).toJSON();
      if (o.output_type === 'error') return {error: {cell: i, ename: o.ename, evalue: o.evalue, traceback: o.traceback}};
    }
    if (!m.sharedModel.getSource().trim()) continue;   // JupyterLab does not execute empty cells
    const prompt = cell.promptNode ? cell.promptNode.textContent : '';
    if (m.executionCount === null || prompt.includes('*')) pending.push(i);
  }
  if (pending.length) return false;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') return false;
  return {ok: true};""")

# Every widget-view output of the current notebook has rendered: its DOM node holds a real
# view (.jupyter-widgets) or the widget manager's error text.  Returns the errors, if any.
_JS_WIDGETS_SETTLED = _page_fn("", """  const w = __panel();
  if (!w) return false;
  const errors = [];
  for (const [i, cell] of w.content.widgets.entries()) {
    if (cell.model.type !== 'code' || !cell.outputArea) continue;
    const outputs = cell.model.outputs;
    for (let j = 0; j < outputs.length; j++) {
      const data = outputs.get(j).data || {};
      const view = data['%s'];
      if (!view || !view.model_id) continue;
      const child = cell.outputArea.widgets[j];
      if (!child || !child.node) return false;
      const text = child.node.textContent || '';
      if (/Error displaying widget|Error rendering widget/.test(text)) { errors.push(`cell ${i}: ${text.trim()}`); continue; }
      if (!child.node.querySelector('.jupyter-widgets')) return false;
    }
  }
  return {errors};""") % WIDGET_VIEW_MIME


def _strip_ansi(s: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", s)


def open_notebook(
    page,
    name: str,
    *,
    server: Optional[JupyterLabServer] = None,
    fresh_kernel: bool = True,
    timeout: float = 60_000,
) -> None:
    """Open ``/lab/tree/NAME?token=...`` and wait until its kernel is connected and idle.

    ``name`` is relative to the server root (see :meth:`JupyterLabServer.add`).  With
    ``fresh_kernel`` (default) any kernel session left on that path by an earlier test is
    shut down first, so every test starts from a new kernel.  The JupyterLab workspace is
    reset, so tabs opened by earlier tests are not restored.  ``timeout`` is in ms.
    """
    server = server or active_server()
    if not (server.root_dir / name).exists():
        raise JupyterLabError(f"{name!r} is not in the server root {server.root_dir}; use server.add(...)")
    if fresh_kernel:
        server.shutdown_sessions(name)
    page.goto(server.lab_url(name), wait_until="domcontentloaded", timeout=timeout)
    try:
        handle = page.wait_for_function(_JS_OPENED, arg=name, timeout=timeout, polling=100)
    except Exception as exc:
        raise JupyterLabError(
            f"notebook {name!r} did not open with an idle kernel within {timeout / 1000:.0f}s: {exc}\n"
            f"--- server log tail ---\n{server.log_text(5000)}"
        ) from exc
    state = handle.json_value()
    if "dialog" in state:
        raise JupyterLabError(f"JupyterLab showed a dialog while opening {name!r}: {state['dialog']!r}")
    # The notebook DOM itself is there (the panel can be current before it is attached).
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first.wait_for(state="visible", timeout=timeout)


def wait_for_kernel_idle(page, timeout: float = 60_000) -> None:
    """Wait until the current notebook's kernel is connected and idle (``timeout`` in ms)."""
    page.wait_for_function(_JS_KERNEL_IDLE, timeout=timeout, polling=100)


def cell_states(page) -> list[dict]:
    """Per-cell summary of the current notebook: type, execution count, prompt text, error outputs."""
    return page.evaluate(_JS_CELL_STATE) or []


def run_all_cells(page, *, timeout: float = 120_000, via: str = "menu", wait_for_widgets: bool = True) -> None:
    """Run every cell of the current notebook and wait until all have executed and the kernel is idle.

    ``via="menu"`` clicks *Run > Run All Cells* in the menu bar (what a user does);
    ``via="command"`` executes the same JupyterLab command (``notebook:run-all-cells``)
    programmatically.  Execution counts are cleared first (as Run All itself does), so
    the wait cannot be satisfied by a previous run.  Raises :class:`JupyterLabError` with
    the traceback as soon as a cell errors.  Then (``wait_for_widgets``) waits until every
    widget output has rendered its view.  ``timeout`` is in ms.
    """
    wait_for_kernel_idle(page, timeout=timeout)
    page.evaluate(
        "() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')"
    )
    page.wait_for_function(
        _page_fn("", "return __panel().content.widgets.every("
                 "c => c.model.type !== 'code' || c.model.executionCount === null);"),
        timeout=10_000,
    )
    if via == "menu":
        page.locator(".lm-MenuBar-item", has_text=re.compile(r"^\s*Run\s*$")).click()
        # The menu entry is the generic "runmenu:run-all" command, labelled "Run All Cells".
        item = page.locator(".lm-Menu .lm-Menu-item").filter(
            has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^\s*Run All Cells\s*$"))
        )
        item.wait_for(state="visible", timeout=10_000)
        if "lm-mod-disabled" in (item.get_attribute("class") or ""):
            raise JupyterLabError("'Run > Run All Cells' is disabled: is a notebook the current tab?")
        item.click()
    elif via == "command":
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    else:
        raise ValueError(f"via must be 'menu' or 'command', not {via!r}")

    try:
        handle = page.wait_for_function(_JS_RUN_DONE, timeout=timeout, polling=100)
    except Exception as exc:
        states = [
            {k: c.get(k) for k in ("index", "count", "prompt")}
            for c in cell_states(page) if c.get("type") == "code" and not c.get("empty")
        ]
        raise JupyterLabError(f"Run All did not finish within {timeout / 1000:.0f}s; code cells: {states}") from exc
    result = handle.json_value()
    if "error" in result:
        err = result["error"]
        tb = _strip_ansi("\n".join(err.get("traceback") or []))
        raise JupyterLabError(f"cell {err['cell']} raised {err['ename']}: {err['evalue']}\n{tb}")
    if wait_for_widgets:
        wait_for_widgets_rendered(page, timeout=timeout)


def wait_for_widgets_rendered(page, *, timeout: float = 60_000) -> None:
    """Wait until every widget output of the current notebook shows a view; raise if one failed."""
    try:
        handle = page.wait_for_function(_JS_WIDGETS_SETTLED, timeout=timeout, polling=100)
    except Exception as exc:
        raise JupyterLabError(f"widget outputs did not render within {timeout / 1000:.0f}s") from exc
    errors = handle.json_value()["errors"]
    if errors:
        raise JupyterLabError("ipywidgets could not render: " + "; ".join(errors))


def widget_errors(page) -> list[str]:
    """Texts of widget outputs that failed to render (e.g. 'Error displaying widget: model not found')."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('.jp-OutputArea-output'))
              .map(o => o.textContent.trim())
              .filter(t => /Error displaying widget|Error rendering widget|model not found/.test(t))"""
    )


def assert_no_widget_errors(page) -> None:
    errs = widget_errors(page)
    assert not errs, f"widget rendering errors in the notebook: {errs}"


def screenshot(page, name: str, *, locator=None, full_page: bool = False) -> Path:
    """Save a PNG to ``artifacts/screenshots/NAME.png`` (of ``locator`` if given) and return its path."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "screenshot"
    path = SCREENSHOT_DIR / (safe if safe.endswith(".png") else safe + ".png")
    if locator is not None:
        locator.screenshot(path=str(path))
    else:
        page.screenshot(path=str(path), full_page=full_page)
    return path
