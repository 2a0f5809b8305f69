"""What installing and testing the project leaves true: ``pip install -e ".[notebooks]"``
brings every module the notebooks import, and the test suite leaves nothing behind in the
machine's temp directory."""
from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import REPO, pyproject, requirement_name

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
#: packages of this repository that a notebook run from the checkout imports directly
LOCAL_PACKAGES = {p.name for p in REPO.iterdir() if (p / "__init__.py").is_file()}


def imported_modules(notebook) -> set:
    """The top-level modules that the code cells of ``notebook`` import (``import a.b``
    and ``from a.b import c`` give ``a``); IPython's ``%`` and ``!`` lines are skipped."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    modules = set()
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        python = "\n".join("" if line.lstrip().startswith(("%", "!")) else line
                           for line in source.splitlines())
        for node in ast.walk(ast.parse(python, filename=notebook.name)):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.add(node.module.split(".")[0])
    return modules


def distributions_of(module: str) -> set:
    """The installed distributions that provide the top-level ``module`` (normalised)."""
    found = importlib.metadata.packages_distributions().get(module, [])
    return {requirement_name(name) for name in found}


def test_imports_of_a_cell_are_found():
    assert "matplotlib" in imported_modules(REPO / "notebooks" / "05_speed.ipynb")
    assert distributions_of("_pytest") == {"pytest"}  # a module named unlike its distribution


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_notebooks_extra_provides_what_a_notebook_imports(notebook):
    """Each module a notebook imports comes with Python, from this checkout, or from a
    distribution named in the core dependencies or the ``notebooks`` extra."""
    project = pyproject()["project"]
    declared = {requirement_name(r) for r in
                project["dependencies"] + project["optional-dependencies"]["notebooks"]}
    declared.add(requirement_name(project["name"]))
    missing = {}
    for module in sorted(imported_modules(notebook)):
        if module in sys.stdlib_module_names or module in LOCAL_PACKAGES:
            continue
        providers = distributions_of(module)
        if not providers & declared:
            missing[module] = sorted(providers) or "no installed distribution"
    assert not missing, (f"{notebook.name} imports modules that pip install -e \".[notebooks]\" "
                         f"does not bring: {missing}")


LEAKY_TEST = '''
import tempfile


def test_leaves_a_folder():
    tempfile.mkdtemp(prefix="batchviz-left-")


def test_cleans_up(tmp_path):
    (tmp_path / "batchviz-inside").mkdir()
'''


@pytest.mark.parametrize("leaky", [True, False], ids=["leaky", "clean"])
def test_the_suite_fails_when_a_test_leaves_temp_files(tmp_path, leaky):
    """The session check of ``tests/conftest.py``, run on a suite of one or two tests with
    its own temp directory."""
    suite, temp = tmp_path / "suite", tmp_path / "temp"
    suite.mkdir()
    temp.mkdir()
    shutil.copy(REPO / "tests" / "conftest.py", suite / "conftest.py")
    (suite / "test_temp.py").write_text(LEAKY_TEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(TMPDIR=str(temp), PYTHONPATH=os.pathsep.join(
        [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    selected = [] if leaky else ["-k", "cleans_up"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         "-n", "0", "--basetemp", str(tmp_path / "base"), *selected, str(suite)],
        cwd=suite, env=env, capture_output=True, text=True, timeout=300)
    output = run.stdout + run.stderr
    if leaky:
        assert run.returncode != 0, output
        assert re.search(r"the tests left \['batchviz-left-\w+'\] in the temp directory",
                         output), output
    else:
        assert run.returncode == 0, output
