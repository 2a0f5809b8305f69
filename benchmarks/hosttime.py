"""Where a training step's host time goes: the plan's and executor's parts and each op's kernels.

On a GPU, kernels run asynchronously and the device waits for the host, which builds the
graph, schedules it and then, batch by batch, reads each batch's arguments, launches its
kernels and adds its gradients back. This task times those host-side calls in one step of
the §4.1 synthetic task under agenda batching, for the naive per-instance code and for
manual batching, by wrapping the executor's functions and every op's kernel methods with
a timer (no profiler, whose own cost per call would swamp calls of microseconds). The
wrappers are removed afterwards.

Read the ``µs/call`` column: on NumPy it is mostly arithmetic; on CuPy
(``--backend cupy``) it is what each call costs the host, which is what a faster kernel
interface saves (see ``docs/benchmarks.md``, "On the GPU").
"""
from __future__ import annotations

import functools
import time
from collections import Counter, defaultdict
from contextlib import contextmanager

import batchviz as bv
from batchviz.execute import backward, forward
from batchviz.nn import SGDTrainer
from batchviz.plan import planner
from batchviz.ops.base import REGISTRY

from . import synthetic
from .common import format_table, machine_info
from .harness import time_step
from .taggers import ManualTagger, Tagger

#: the plan's and the executor's own steps, timed as a whole (the op kernels inside them are
#: timed apart): (module, function, label)
EXECUTOR_PARTS = ((planner, "place_batches", "plan layout"), (planner, "plan_batch", "plan batch"),
                  (forward, "read_block", "executor read"),
                  (backward, "add_gradient", "executor add gradient"),
                  (backward, "_add_weight_gradient", "executor weight gradients"))
#: the op methods that run a batch's kernels
KERNEL_METHODS = ("forward", "backward", "forward_segments", "backward_segments",
                  "forward_together", "backward_together")


@contextmanager
def timing_wrappers(seconds: dict, calls: Counter):
    """Wrap the executor's parts and every registered op's kernel methods with a timer that
    adds to ``seconds[label]`` and ``calls[label]``; put the originals back on exit."""
    patched = []

    def wrap(owner, attr, label):
        original = owner.__dict__[attr]

        @functools.wraps(original)
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                seconds[label] += time.perf_counter() - t0
                calls[label] += 1

        setattr(owner, attr, timed)
        patched.append((owner, attr, original))

    try:
        for module, name, label in EXECUTOR_PARTS:
            wrap(module, name, label)
        for cls in {type(op) for op in REGISTRY.values()}:
            for method in KERNEL_METHODS:
                if method in cls.__dict__:
                    wrap(cls, method, f"{cls.name} {method}")
        yield
    finally:
        for owner, attr, original in reversed(patched):
            setattr(owner, attr, original)


def run(quick: bool = False) -> dict:
    s = synthetic.QUICK if quick else synthetic.FULL
    rounds = 2 if quick else 5
    batch = synthetic.minibatch(s)
    model = bv.Model(seed=0)
    tagger = Tagger(model, s["vocab"], s["labels"], s["embed"], s["hidden"], layers=s["layers"])
    manual = ManualTagger(tagger)
    trainer = SGDTrainer(model, learning_rate=0.1)
    codes = {"agenda": lambda run: bv.esum([tagger.loss(w, t) for w, t in batch]),
             "manual+agenda": lambda run: manual.loss(batch)}
    results = {}
    for mode, build_loss in codes.items():
        time_step(build_loss, "agenda", trainer)  # warm up (kernels compile on a GPU)
        best = None
        for _ in range(rounds):  # the fastest step's parts count, as in the other tasks
            seconds, calls = defaultdict(float), Counter()
            with timing_wrappers(seconds, calls):
                times = time_step(build_loss, "agenda", trainer)
            if best is None or times.total < best[0].total:
                best = (times, dict(seconds), dict(calls))
        times, seconds, calls = best
        parts = {label: {"ms": seconds[label] * 1e3, "calls": calls[label],
                         "us_per_call": seconds[label] / calls[label] * 1e6}
                 for label in sorted(seconds, key=seconds.get, reverse=True)}
        results[mode] = {"step_ms": times.total * 1e3, "batches": times.batches,
                         "phases_ms": {k: v * 1e3 for k, v in times.to_dict().items()
                                       if isinstance(v, float) and k not in ("loss", "total")},
                         "parts": parts}
        phases = ", ".join(f"{k} {v:.1f}" for k, v in results[mode]["phases_ms"].items())
        print(format_table(
            ["part", "ms per step", "calls", "us/call"],
            [[label, p["ms"], p["calls"], p["us_per_call"]] for label, p in parts.items()],
            title=f"synthetic task, {mode}: step {times.total * 1e3:.1f} ms, {times.batches} "
                  f"batches ({phases} ms; best of {rounds} steps, backend {bv.get_backend()})"))
        print()
    return {"task": "hosttime", "quick": quick, "machine": machine_info(), "settings": s,
            "results": results}
