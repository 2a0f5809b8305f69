"""The compiled twins (batchviz/_compiled_*.pyx) do what the readable versions they replace
do: every DyNet example program is run once with the twins and once with
``BATCHVIZ_PURE_PYTHON=1``, and the two runs must print the same losses and leave the same
last graph (node by node: op, arguments, attributes, shape, signature, depth), the same
plans of its runs (every batch's layout and reads) and the same parameters, bit for bit.
The plan's twins are also compared with the readable versions in this process, on random
graphs under every strategy, and the Adam rule's on random arrays, bit for bit."""
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
from batchviz.ops.base import Op

program, argv = sys.argv[1], sys.argv[2:]
sys.path.insert(0, str(__import__("pathlib").Path(program).parent))
sys.argv = [program] + argv
namespace = runpy.run_path(program, run_name="__main__")
graph = dy.graph.session.graph
nodes = [[op.name, list(args), repr(attrs), list(shape), sig, depth]
         for op, args, attrs, shape, sig, depth in zip(graph.ops, graph.args, graph.attrs,
                                                      graph.shapes, graph.sigs, graph.depths)]


def plain(x):  # x as JSON: records and tuples as lists, arrays as lists, ops by name
    if isinstance(x, np.ndarray):
        return ["array", x.dtype.str, x.tolist()]
    if isinstance(x, (tuple, list)):
        return [type(x).__name__] + [plain(e) for e in x]
    if isinstance(x, Op):
        return ["op", x.name]
    return x if x is None or isinstance(x, (bool, int, float, str)) else repr(x)


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
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", BATCHVIZ_BACKEND="numpy")
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


# --- the plan's twins, in this process ------------------------------------------------------

def plain(x):
    """A plan (its records, tuples, arrays) as nested lists that ``==`` compares exactly:
    every value with its type, arrays with their dtype."""
    if isinstance(x, np.ndarray):
        return ["array", x.dtype.str, x.tolist()]
    if isinstance(x, (tuple, list)):
        return [type(x).__name__] + [plain(e) for e in x]
    return [type(x).__name__, x]


def planned(graph, runs: list, readable: bool) -> tuple:
    """The plans of ``runs`` (``(start, batches)`` each, one after another on one layout),
    by the twins or by the readable versions, and the layout they leave."""
    versions = {"place_batches": planner.place_batches, "plan_batch": planner.plan_batch}
    if readable:
        versions = {name: twins.READABLE[f"batchviz.plan.{module}.{name}"]
                    for module, name in (("layout", "place_batches"), ("planner", "plan_batch"))}
    assert all((f in twins.READABLE.values()) == readable for f in versions.values())
    layout = Layout()
    with mock.patch.multiple(planner, **versions):
        plans = [plan(graph, batches, layout, start) for start, batches in runs]
    return plans, (layout.address, layout.batch_of, layout.bases, layout.next_address)


def check_plans(graph) -> set:
    """The twins plan every strategy's schedule of ``graph`` from scratch, and its runs one
    after another as they happened (a loss that ran before the rest was built, then the
    rest), as the readable versions do; returns the kinds of read seen."""
    sequences = [[(0, strategy.schedule(PendingView(graph, start=0)))]
                 for strategy in (NoBatching(), DepthBatching(), AgendaBatching(),
                                  LookaheadBatching(), LayoutBatching())]
    if graph.plans:
        ran = [(start, [list(batch.nodes) for batch in run.batches])
               for start, run in zip([0] + graph.run_ends, graph.plans)]
        rest = graph.run_ends[-1]
        sequences.append(ran + [(rest, AgendaBatching().schedule(PendingView(graph, start=rest)))])
    kinds = set()
    for runs in sequences:
        plans, layout = planned(graph, runs, readable=False)
        readable_plans, readable_layout = planned(graph, runs, readable=True)
        assert plain(plans) == plain(readable_plans)
        assert layout == readable_layout
        kinds |= {type(read).__name__ for run in plans for b in run.batches for read in b.reads}
    return kinds


@needs_twins
@settings(max_examples=25, deadline=None)
@given(params=st.tuples(st.integers(0, 10**6), st.integers(1, 8), st.booleans()))
def test_the_plan_twins_equal_the_readable_plan_on_random_graphs(params):
    check_plans(mixed_graph(*params))


@needs_twins
def test_the_plan_twins_on_lstm_steps_and_tutorial_graphs():
    """Nodes that keep several blocks (plane by plane), block reads and strided views (the
    LSTM models), every other scalar of a batch (a strided view for an element-wise op),
    element-wise batches of several sizes, the tutorials' graphs, and reads of every kind
    among them."""
    graph, scalars = bv.Graph(), bv.Graph()
    with graph:
        lstm_models_loss(seed=3)
    with scalars:
        p = bv.Model(seed=0).add_parameters((1,))
        s = [bv.tanh(p * float(k + 1)) for k in range(6)]
        bv.esum([bv.logistic(s[k]) for k in (0, 2, 4)])
    assert "Strided" in check_plans(scalars)
    sizes = bv.Graph()   # element-wise batches of several sizes, read whole and in part
    with sizes:
        ts = [bv.tanh(bv.input(np.ones(n))) for n in (3, 5, 2, 5)]
        bv.esum([bv.sum_elems(bv.logistic(ts[k])) for k in (0, 2, 3)])
    assert "Copy" in check_plans(sizes)
    several = plan(sizes, AgendaBatching().schedule(PendingView(sizes, start=0)), Layout(), 0)
    assert any(type(b.sizes) is list for b in several.batches)
    kinds = set()
    for g in [graph] + [TUTORIAL_GRAPHS[name]()[0] for name in sorted(TUTORIAL_GRAPHS)]:
        kinds |= check_plans(g)
    assert {"Shared", "View", "Strided", "Copy", "Stack", "Concat"} <= kinds


# --- the Adam rule's twin -------------------------------------------------------------------

@needs_twins
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_adam_twin_leaves_the_same_bits(dtype):
    """Values and moments after five steps, on gradients from 1e-7 to 1e3 (and zeros), as
    whole arrays, as pieces of a long one (Trainer._apply) and, through the readable rule,
    a strided one."""
    import batchviz.dynet as dy
    from batchviz.dynet.trainers import PIECE_BYTES, AdamTrainer

    readable = twins.READABLE["batchviz.dynet.trainers.AdamTrainer.rule"]
    assert AdamTrainer.rule is not readable
    bv.set_backend("numpy")  # (the twin takes NumPy's arrays; CuPy's go to the readable rule)
    rng = np.random.default_rng(4)
    twin_trainer = AdamTrainer(dy.ParameterCollection(), alpha=0.01)
    readable_trainer = AdamTrainer(dy.ParameterCollection(), alpha=0.01)
    for shape in [(1,), (7, 3), (3, PIECE_BYTES // 3 + 5)]:
        values = rng.standard_normal(shape).astype(dtype)
        mine, theirs = [values, np.zeros_like(values), np.zeros_like(values)], None
        theirs = [a.copy() for a in mine]
        for step in range(5):
            g = (rng.standard_normal(shape) * 10.0 ** rng.uniform(-7, 3, shape)).astype(dtype)
            g[..., ::5] = 0
            twin_trainer._apply(None, mine[0], g, 1.0, mine[1:])
            with mock.patch.object(AdamTrainer, "rule", readable):
                readable_trainer._apply(None, theirs[0], g, 1.0, theirs[1:])
            twin_trainer.updates += 1
            readable_trainer.updates += 1
        for a, b in zip(mine, theirs):
            assert a.dtype == dtype and a.tobytes() == b.tobytes()
    strided = [rng.standard_normal((4, 6)).astype(dtype)[:, ::2] for _ in range(4)]
    np.abs(strided[3], out=strided[3])  # (a second moment)
    copies = [a.copy() for a in strided]
    AdamTrainer.rule(twin_trainer, strided[0], strided[1], strided[2:])
    readable(twin_trainer, copies[0], copies[1], copies[2:])
    assert all(a.tobytes() == b.tobytes() for a, b in zip(strided, copies))


# --- out of date ----------------------------------------------------------------------------

@needs_twins
def test_an_extension_older_than_its_source_is_not_used(monkeypatch):
    """A ``.pyx`` changed since the extensions were built: the readable versions run, and
    ``why_pure`` says how to build again; a mark without a twin is an ImportError that
    says the same."""
    monkeypatch.setattr(twins.os.path, "getmtime",
                        lambda path: 2.0 if str(path).endswith(".pyx") else 1.0)
    with pytest.raises(ImportError, match=r"older than _compiled_plan\.pyx: run `pip install"):
        twins._check_built("batchviz._compiled_plan")

    def not_twinned():
        pass

    with pytest.raises(ImportError, match="marked @compiled_twin, but the compiled extensions "
                                          "have no twin of it"):
        twins.compiled_twin(not_twinned)


@needs_twins
def test_the_adam_twin_reports_nan_and_infinity_as_numpy_would():
    """An overflow or a NaN made by the update is a RuntimeWarning at the user's line by
    default, a FloatingPointError under ``np.errstate(all="raise")``, nothing when NumPy
    is told to ignore it; an underflow (tiny gradients) is nothing by default: as the
    readable rule's NumPy operations do."""
    import warnings

    import batchviz.dynet as dy
    from batchviz.dynet.trainers import AdamTrainer

    bv.set_backend("numpy")
    readable = twins.READABLE["batchviz.dynet.trainers.AdamTrainer.rule"]
    trainer = AdamTrainer(dy.ParameterCollection(), alpha=0.01)

    def run(rule, g, **errstate):
        arrays = [np.ones(5, np.float32), np.zeros(5, np.float32), np.zeros(5, np.float32)]
        with warnings.catch_warnings(record=True) as caught, np.errstate(**errstate):
            warnings.simplefilter("always")
            rule(trainer, arrays[0], g, arrays[1:])
        return [(w.category, str(w.message).split(" encountered")[0]) for w in caught]

    huge = np.array([1.0, 3e30, 2.0, 0.0, 1.0], np.float32)  # its square overflows
    tiny = np.full(5, 1e-30, np.float32)                        # its square underflows
    for rule in (AdamTrainer.rule, readable):
        assert run(rule, huge) == [(RuntimeWarning, "overflow")]
        with pytest.raises(FloatingPointError, match="overflow encountered"):
            run(rule, huge, all="raise")
        assert run(rule, huge, all="ignore") == []
        assert run(rule, tiny) == []
