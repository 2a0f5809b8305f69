"""The compiled modules (batchviz/compiled.py) do what their Python source does, on whole
programs: every DyNet example program is run once compiled and once with
``BATCHVIZ_PURE_PYTHON=1``, and the two runs must print the same losses and leave the same
last graph (node by node: op, arguments, attributes, shape, signature, depth), the same
plans of its runs (every batch's layout and reads) and the same parameters, bit for bit.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from batchviz import compiled

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "examples" / "dynet"
NAMES = ["bilstm_tagger", "treelstm", "rnnlm_batch", "xor", "rnnlm_transduce", "mnist",
         "attention", "bow_classifier"]

needs_compiled = pytest.mark.skipif(not compiled.compiled(), reason=(
    f"batchviz runs from source here ({compiled.why_source}); `pip install -e .` compiles "
    "it where a C compiler is present"))

#: run in a fresh process: a DyNet program, then a fingerprint of what it left, as JSON
DRIVER = r"""
import hashlib, json, runpy, sys
import numpy as np
import batchviz.dynet as dy
from batchviz import compiled
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
print("FINGERPRINT", json.dumps({"compiled": compiled.compiled(), "nodes": nodes, "plans": plans,
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


@needs_compiled
@pytest.mark.parametrize("name", NAMES)
def test_a_dynet_program_builds_the_same_graphs_both_ways(name):
    argv = ["--quick", "--steps", "3", "--dynet-autobatch", "1", "--dynet-seed", "1"]
    built_losses, built = run(PROGRAMS / f"{name}.py", argv, pure=False)
    pure_losses, pure = run(PROGRAMS / f"{name}.py", argv, pure=True)
    assert built.pop("compiled") and not pure.pop("compiled")
    assert len(built["nodes"]) > 5
    for node, (from_compiled, from_source) in enumerate(zip(built["nodes"], pure["nodes"])):
        assert from_compiled == from_source, f"node {node}"
    assert built == pure
    assert built_losses == pure_losses and len(pure_losses) == 3


def test_batchviz_pure_python_runs_the_source():
    done = subprocess.run(
        [sys.executable, "-c", "from batchviz import compiled, graph; "
         "print(compiled.compiled(), graph.__file__.endswith('.py'), compiled.why_source)"],
        env=dict(os.environ, BATCHVIZ_PURE_PYTHON="1"), capture_output=True, text=True)
    assert done.stdout.split()[:2] == ["False", "True"], done.stderr
    assert "BATCHVIZ_PURE_PYTHON" in done.stdout
