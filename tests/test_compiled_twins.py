"""The compiled twins (batchviz/_compiled_twins.pyx) and the compiled modules
(batchviz/compiled.py) do what the Python source does: every DyNet example program is run
once compiled and once with ``BATCHVIZ_PURE_PYTHON=1`` (which turns both off), and the two
runs must print the same losses and leave the same last graph (node by node: op,
arguments, attributes, shape, signature, depth), the same plans of its runs (every batch's
layout and reads) and the same parameters, bit for bit.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unittest import mock

import batchviz as bv
from batchviz import twins
from batchviz.plan import Layout, plan, planner
from batchviz.schedule import (AgendaBatching, DepthBatching, NoBatching, PendingView)
from batchviz.schedule.layout import LayoutBatching
from batchviz.schedule.lookahead import LookaheadBatching

from models import TUTORIAL_GRAPHS, lstm_models_loss, mixed_graph

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "examples" / "dynet"
NAMES = ["bilstm_tagger", "treelstm", "rnnlm_batch", "xor", "rnnlm_transduce", "mnist",
         "attention", "bow_classifier"]

needs_twins = pytest.mark.skipif(not twins.compiled(), reason=(
    f"the compiled twins are not built here ({twins.why_pure}); `pip install -e .` builds "
    "them where a C compiler is present"))

#: run in a fresh process: a DyNet program, then a fingerprint of what it left, as JSON
DRIVER = r"""
import hashlib, json, runpy, sys
import numpy as np
import batchviz.dynet as dy
from batchviz import twins
from helpers import plain

program, argv = sys.argv[1], sys.argv[2:]
sys.path.insert(0, str(__import__("pathlib").Path(program).parent))
sys.argv = [program] + argv
namespace = runpy.run_path(program, run_name="__main__")
graph = dy.graph.session.graph
nodes = [[op.name, list(args), repr(attrs), list(shape), sig, depth]
         for op, args, attrs, shape, sig, depth in zip(graph.ops, graph.args, graph.attrs,
                                                      graph.shapes, graph.sigs, graph.depths)]


plans = [plain(batch) for run in graph.plans for batch in run.batches]
model = namespace["model"]
values = hashlib.sha256()
for p in model.parameters_list() + model.lookup_parameters_list():
    values.update(np.ascontiguousarray(p.as_array()).tobytes())
print("FINGERPRINT", json.dumps({"compiled": twins.compiled(), "nodes": nodes, "plans": plans,
                                  "signatures": len(graph.sigtab),
                                  "parameters": values.hexdigest()}))
"""


def run(program: Path, argv: list, pure: bool) -> tuple[list, dict]:
    # on NumPy: a GPU's atomic additions may sum in another order from one run to the next
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", BATCHVIZ_BACKEND="numpy",
               PYTHONPATH=os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")]))
    env.pop("BATCHVIZ_PURE_PYTHON", None)
    if pure:
        env["BATCHVIZ_PURE_PYTHON"] = "1"
    done = subprocess.run([sys.executable, "-c", DRIVER, str(program)] + argv, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    fingerprint = json.loads(lines[-1].removeprefix("FINGERPRINT "))
    return [line for line in lines[:-1] if line.startswith("step ")], fingerprint


@needs_twins
@pytest.mark.parametrize("name", NAMES)
def test_a_dynet_program_builds_the_same_graphs_both_ways(name):
    argv = ["--quick", "--steps", "3", "--dynet-autobatch", "1", "--dynet-seed", "1"]
    compiled_losses, compiled = run(PROGRAMS / f"{name}.py", argv, pure=False)
    pure_losses, pure = run(PROGRAMS / f"{name}.py", argv, pure=True)
    assert compiled.pop("compiled") and not pure.pop("compiled")
    assert len(compiled["nodes"]) > 5
    for node, (with_twins, readable) in enumerate(zip(compiled["nodes"], pure["nodes"])):
        assert with_twins == readable, f"node {node}"
    assert compiled == pure
    assert compiled_losses == pure_losses and len(pure_losses) == 3


@needs_twins
def test_every_marked_definition_is_replaced_by_its_twin():
    """Each ``@compiled_twin`` in the package has its twin in its place, and every twin of
    the extension's table has its mark (a mark with no twin fails at import)."""
    marked = []
    for path in (ROOT / "batchviz").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and _is_marked(item):
                        marked.append((module, f"{node.name}.{item.name}"))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and _is_marked(node):
                marked.append((module, node.name))
    twins_of = {}
    for extension in twins.EXTENSIONS:
        twins_of.update(sys.modules[extension].TWINS)
    assert sorted(f"{module}.{qualname}" for module, qualname in marked) == sorted(twins_of)
    for module, qualname in marked:
        owner = __import__(module, fromlist=["_"])
        *outer, name = qualname.split(".")
        for part in outer:
            owner = getattr(owner, part)
        definition = owner.__dict__[name] if outer else getattr(owner, name)
        assert definition is twins_of[f"{module}.{qualname}"], f"{module}.{qualname}"
    assert sorted(twins.READABLE) == sorted(twins_of)  # (every module is imported now)


def _is_marked(node) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "compiled_twin" for d in node.decorator_list)


def test_batchviz_pure_python_runs_the_readable_versions():
    done = subprocess.run(
        [sys.executable, "-c", "from batchviz import twins, graph; "
         "print(twins.compiled(), graph.LazyGraph.push.__module__, twins.why_pure)"],
        env=dict(os.environ, BATCHVIZ_PURE_PYTHON="1"), capture_output=True, text=True)
    assert done.stdout.split()[:2] == ["False", "batchviz.graph"], done.stderr
    assert "BATCHVIZ_PURE_PYTHON" in done.stdout


# --- out of date ----------------------------------------------------------------------------

@needs_twins
def test_an_extension_older_than_its_source_is_not_used(monkeypatch):
    """A ``.pyx`` changed since the extensions were built: the readable versions run, and
    ``why_pure`` says how to build again; a mark without a twin is an ImportError that
    says the same."""
    monkeypatch.setattr(twins.compiled_modules, "changed_since_build",
                        lambda paths: [p for p in paths if p.endswith(".pyx")])
    with pytest.raises(ImportError, match=r"older than _compiled_twins\.pyx: run `pip install"):
        twins._check_built("batchviz._compiled_twins")

    def not_twinned():
        pass

    with pytest.raises(ImportError, match="marked @compiled_twin, but the compiled extensions "
                                          "have no twin of it"):
        twins.compiled_twin(not_twinned)
