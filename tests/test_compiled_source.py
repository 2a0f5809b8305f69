"""The compiled modules are compiled from the source that is there, and an edit of that
source always runs (``batchviz/compiled.py``): a copy of the package whose ``graph.py``
gets a ``print`` in ``LazyGraph.push`` prints it, with a notice when the copy was
compiled; ``BATCHVIZ_PURE_PYTHON=1`` runs every module from its ``.py``."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import batchviz.compiled as compiled_modules
from batchviz.compiled import MODULES, compiled, compiled_path

ROOT = Path(__file__).resolve().parents[1]

#: build one node in a fresh process and say where the graph module came from
PROGRAM = """
import batchviz as bv, batchviz.compiled, batchviz.graph
with bv.Graph():
    y = bv.tanh(bv.input([1.0, 2.0]))
print("compiled:", batchviz.compiled.compiled())
print("graph from:", batchviz.graph.__file__)
"""


def run_python(program: str, package_parent: Path, **env) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "BATCHVIZ_PURE_PYTHON"}
    environment.update(env, PYTHONPATH=os.pathsep.join(
        [str(package_parent), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          env=environment, cwd=package_parent, timeout=120)


def test_each_module_runs_as_the_switch_says():
    """Every module of MODULES is the compiled one exactly when compiled() says so."""
    import importlib

    for name in MODULES:
        module = importlib.import_module(name)
        assert module.__file__.endswith(".py") != compiled(), (name, module.__file__)


def test_an_edit_of_the_graph_runs(tmp_path):
    """A student's ``print`` in ``LazyGraph.push`` prints, compiled copy or not."""
    copy = tmp_path / "batchviz"
    shutil.copytree(ROOT / "batchviz", copy, ignore=shutil.ignore_patterns("__pycache__"))
    graph_py = copy / "graph.py"
    text = graph_py.read_text()
    marker = '"""Append one node and return its expression; every op constructor ends here."""'
    assert marker in text
    graph_py.write_text(text.replace(marker, marker + '\n        print("a student was here")'))

    done = run_python(PROGRAM, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "a student was here" in done.stdout
    assert "compiled: False" in done.stdout
    assert f"graph from: {graph_py}" in done.stdout
    if compiled_path("batchviz.graph") is not None:  # the copy had a compiled graph module
        assert "batchviz/graph.py" in done.stderr
        assert "changed since batchviz was compiled" in done.stderr
        assert "pip install -e ." in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1  # one line


def compiled_without_the_switch(monkeypatch) -> bool:
    """Whether this package runs compiled when BATCHVIZ_PURE_PYTHON is not set (the
    processes these tests start run without it)."""
    monkeypatch.delenv("BATCHVIZ_PURE_PYTHON", raising=False)
    return compiled_modules._why_source() is None


def test_an_unchanged_copy_runs_as_compiled_as_it_was(tmp_path, monkeypatch):
    expected = compiled_without_the_switch(monkeypatch)  # as the package it is a copy of
    shutil.copytree(ROOT / "batchviz", tmp_path / "batchviz",
                    ignore=shutil.ignore_patterns("__pycache__"))
    done = run_python(PROGRAM, tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"compiled: {expected}" in done.stdout
    if expected:
        assert done.stderr == ""


def test_the_times_of_the_files_do_not_matter(tmp_path, monkeypatch):
    """An installed wheel's files all get the time of their installation, a ``.py`` often a
    moment after its compiled module: unchanged sources run compiled all the same."""
    copy = tmp_path / "batchviz"
    shutil.copytree(ROOT / "batchviz", copy, ignore=shutil.ignore_patterns("__pycache__"))
    later = 2e9  # every source file newer than every compiled one
    for path in copy.rglob("*.py"):
        os.utime(path, (later, later))
    done = run_python(PROGRAM, tmp_path)
    assert done.returncode == 0, done.stderr
    expected = compiled_without_the_switch(monkeypatch)
    assert f"compiled: {expected}" in done.stdout
    if expected:
        assert "changed since" not in done.stderr


def test_pure_python_runs_every_module_from_source():
    done = run_python(PROGRAM + "\nimport importlib\n"
                      "print(all(importlib.import_module(m).__file__.endswith('.py') "
                      "for m in batchviz.compiled.MODULES))", ROOT, BATCHVIZ_PURE_PYTHON="1")
    assert done.returncode == 0, done.stderr
    assert "compiled: False" in done.stdout
    assert done.stdout.strip().endswith("True")
    assert done.stderr == ""


def test_why_source_names_the_reason(monkeypatch):
    monkeypatch.setenv("BATCHVIZ_PURE_PYTHON", "1")
    assert compiled_modules._why_source() == "BATCHVIZ_PURE_PYTHON is set"
    monkeypatch.setenv("BATCHVIZ_PURE_PYTHON", "0")
    assert compiled_modules._why_source() in (None, compiled_modules.why_source)


def test_the_build_compiles_what_the_list_names():
    """setup.py reads MODULES without importing batchviz, and every name is a .py file."""
    namespace = {"__name__": "not_main"}
    source = (ROOT / "setup.py").read_text().split("\n#: the Python semantics")[0]
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(source, "setup.py", "exec"), namespace)
        assert namespace["compiled_modules"]() == MODULES
    finally:
        os.chdir(cwd)
    for name in MODULES:
        assert (ROOT / (name.replace(".", "/") + ".py")).is_file()


def test_a_compiled_file_of_a_module_not_in_the_list_never_runs(tmp_path):
    """A compiled file left beside a module that is not compiled any more (an older build)
    is passed over for the module's ``.py``."""
    copy = tmp_path / "batchviz"
    shutil.copytree(ROOT / "batchviz", copy, ignore=shutil.ignore_patterns("__pycache__"))
    stray = copy / ("words" + __import__("importlib").machinery.EXTENSION_SUFFIXES[0])
    stray.write_bytes(b"not a shared object")
    done = run_python("import batchviz.words as w; print('words from:', w.__file__)", tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"words from: {copy / 'words.py'}" in done.stdout


def test_the_compiled_path_is_what_the_suite_runs_when_it_should_be():
    """``make test`` sets BATCHVIZ_EXPECT_COMPILED=1 for its compiled run: on a machine with
    a C compiler, a build that silently fell back to the source must fail the suite, not
    pass it uncompiled."""
    import os

    if os.environ.get("BATCHVIZ_EXPECT_COMPILED") != "1":
        assert compiled() == (compiled_modules.why_source is None)
        return
    assert compiled(), compiled_modules.why_source
