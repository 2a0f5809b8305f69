"""The compiled modules (``batchviz/compiled.py``) do what their source does: the plans of
random graphs under every strategy, of LSTM models (blocks laid out plane by plane, block
reads, strided views), of element-wise batches of several sizes and of the tutorials'
graphs, run one after another as a graph that ran in parts does, are the same, record by
record, compiled and with ``BATCHVIZ_PURE_PYTHON=1`` (each in a fresh process)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from batchviz.compiled import compiled, why_source

TESTS = Path(__file__).resolve().parent

needs_compiled = pytest.mark.skipif(not compiled(), reason=(
    f"batchviz runs from source here ({why_source}); `pip install -e .` compiles it where a "
    "C compiler is present"))

#: plan the graphs and print every plan and layout as JSON
PLANS = r"""
import json, sys
import numpy as np
import batchviz as bv, batchviz.compiled
from batchviz.plan import Layout, plan
from batchviz.schedule import AgendaBatching, DepthBatching, NoBatching, PendingView
from batchviz.schedule.layout import LayoutBatching
from batchviz.schedule.lookahead import LookaheadBatching
from helpers import plain
from models import TUTORIAL_GRAPHS, lstm_models_loss, mixed_graph


def plans_of(graph):
    sequences = [[(0, strategy.schedule(PendingView(graph, start=0)))]
                 for strategy in (NoBatching(), DepthBatching(), AgendaBatching(),
                                  LookaheadBatching(), LayoutBatching())]
    if graph.plans:  # the runs as they happened, then the rest
        ran = [(start, [list(batch.nodes) for batch in run.batches])
               for start, run in zip([0] + graph.run_ends, graph.plans)]
        rest = graph.run_ends[-1]
        sequences.append(ran + [(rest, AgendaBatching().schedule(PendingView(graph, start=rest)))])
    out = []
    for runs in sequences:
        layout = Layout()
        plans = [plan(graph, batches, layout, start) for start, batches in runs]
        out.append([plain(plans), plain((layout.address, layout.batch_of, layout.bases,
                                         layout.next_address))])
    return out


graphs = [mixed_graph(seed, instances, first) for seed, instances, first in
          [(s * 7919 % 1000003, 1 + s % 8, bool(s % 2)) for s in range(int(sys.argv[1]))]]
lstm, scalars, sizes = bv.Graph(), bv.Graph(), bv.Graph()
with lstm:
    lstm_models_loss(seed=3)
with scalars:  # every other scalar of a batch: a strided view for an element-wise op
    p = bv.Model(seed=0).add_parameters((1,))
    s = [bv.tanh(p * float(k + 1)) for k in range(6)]
    bv.esum([bv.logistic(s[k]) for k in (0, 2, 4)])
with sizes:  # element-wise batches of several sizes, read whole and in part
    ts = [bv.tanh(bv.input(np.ones(n))) for n in (3, 5, 2, 5)]
    bv.esum([bv.sum_elems(bv.logistic(ts[k])) for k in (0, 2, 3)])
graphs += [lstm, scalars, sizes] + [TUTORIAL_GRAPHS[name]()[0] for name in sorted(TUTORIAL_GRAPHS)]
print(json.dumps({"compiled": batchviz.compiled.compiled(),
                  "plans": [plans_of(g) for g in graphs]}))
"""


def plans(pure: bool) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", BATCHVIZ_BACKEND="numpy",
               PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    env.pop("BATCHVIZ_PURE_PYTHON", None)
    if pure:
        env["BATCHVIZ_PURE_PYTHON"] = "1"
    done = subprocess.run([sys.executable, "-c", PLANS, "25"], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@needs_compiled
def test_the_compiled_plan_equals_the_source_plan():
    compiled_run, source_run = plans(pure=False), plans(pure=True)
    assert compiled_run.pop("compiled") and not source_run.pop("compiled")
    kinds = set()
    for k, (a, b) in enumerate(zip(compiled_run["plans"], source_run["plans"])):
        assert a == b, f"graph {k}"
        kinds |= set(json.dumps(a).split('"')[1::2])
    assert len(compiled_run["plans"]) == len(source_run["plans"]) > 25
    assert {"Shared", "View", "Strided", "Copy", "Stack", "Concat"} <= kinds
