"""``python -m benchmarks floor``: how close to DyNet a program written a graph per instance
could come on batchviz's NumPy kernels, were nothing but those kernels to cost time.

A step of such a program runs a hundred or more batches of a few nodes each, and each batch
is a few NumPy calls forward and a few backward: a matrix product, a bias, an activation.
A NumPy call costs about a microsecond before it does any arithmetic, while DyNet's C++
runs a whole batch in about that. So the kernels alone put a ceiling on the ratio batchviz
can reach, whatever its graph building, scheduling and planning cost.

For each row of ``benchmarks dynet`` that builds a graph per instance (and the Tree-LSTM of
50 trees a graph), the program runs here as it does there, in a fresh process, and after
each timed step every kernel of the step runs again on its own, timed: each batch's
forward kernel on the blocks it read, its backward kernel on a gradient of the same shape,
and each shared weight's gradient product and bias's row sum (the terms of all batches
summed at once, by the backward pass's own function). Nothing else is counted: not
reading the arguments, not adding gradients back, not the update. That sum is the *kernel floor*; ``DyNet step / floor`` is
the most the ratio ``DyNet's time / batchviz's time`` could be with these kernels.

A lower floor still holds for any kernels made of NumPy calls: one call per kernel (a
batch's forward, and its backward), each as cheap as NumPy's cheapest call (an element-wise
sum of 32 numbers, timed here). Where DyNet's whole step is shorter than twice that, no
NumPy kernel could bring such a program to half of DyNet's speed.
"""
from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import format_table, machine_info
from .dynet_compare import FULL, PROGRAMS, dynet_available, program_path, run_once

#: the rows of ``benchmarks dynet`` measured here
ROWS = ("treelstm_per_tree", "bilstm_tagger_per_sentence", "attention_per_pair", "treelstm_50")
#: the same rows, a few steps each (CI's smoke test)
QUICK_STEPS = "3"


def kernel_seconds(graph) -> tuple:
    """``(forward, backward, batches)``: seconds that the kernels of every batch ``graph``
    ran take when run again on their own (the graph's values are rewritten with the same
    values), and how many kernels that was (a batch's forward and backward count two)."""
    from batchviz.backend import state
    from batchviz.execute.backward import _add_terms, _gradient_arenas, backward_kernel
    from batchviz.execute.forward import run_kernel
    from batchviz.execute.memory import POOL, batch_outputs
    from batchviz.ops.gradients import RowSums, WeightGradient

    xp, layout, runs = state.xp, graph.layout, graph.batch_runs
    forward = backward = 0.0
    kernels = len(layout.batches)
    for batch in layout.batches:
        run = runs[batch.index]
        start = time.perf_counter()
        run_kernel(batch, run.ins, run.out, xp)
        forward += time.perf_counter() - start
    buffer, grads = _gradient_arenas(layout)
    deferred = {}  # (a shared weight's or bias's node, the kind) -> its gradient terms
    for batch in reversed(layout.batches):
        if not batch.requires_grad:
            continue
        kernels += 1
        start = time.perf_counter()
        g = batch_outputs(xp, grads[batch.arena], batch)
        arg_grads = backward_kernel(batch, runs[batch.index], g, xp)
        backward += time.perf_counter() - start
        for read, grad in zip(batch.reads, arg_grads):
            if type(grad) is WeightGradient or type(grad) is RowSums:
                deferred.setdefault((read.node, type(grad)), []).append(grad)
    for (node, _), terms in deferred.items():  # summed as the backward pass sums them
        param = graph.param_of_node[node]
        scratch = xp.empty(param.shape, dtype=param.array.dtype)
        start = time.perf_counter()
        _add_terms(xp, scratch, True, terms)
        backward += time.perf_counter() - start
    POOL.give(buffer)
    return forward, backward, kernels


def least_numpy_call(repeat: int = 2000) -> float:
    """Seconds of the cheapest NumPy call a kernel could make: an element-wise sum of two
    32-element arrays into a third (the best of a few thousand)."""
    import numpy as np

    a, b, out = (np.ones(32, dtype=np.float32) for _ in range(3))
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        np.add(a, b, out=out)
        best = min(best, time.perf_counter() - start)
    return best


def measure_in_this_process(row: str, steps: str | None) -> dict:
    """Run ``row``'s program here (``steps``: override its number of steps) and return its
    milliseconds per timed step (its own phases) and those of its kernels alone."""
    program, args = FULL[row]
    args = list(args)
    if steps is not None:
        args[args.index("--steps") + 1] = steps
    sys.argv = [str(PROGRAMS / f"{program}.py")] + args + ["--dynet-autobatch", "1"]
    sys.path.insert(0, str(PROGRAMS))
    os.chdir(PROGRAMS)
    import steptimer
    from batchviz.dynet.graph import current

    kernels = {"forward": 0.0, "backward": 0.0}
    counts = []  # kernels per timed step
    timers = []
    plain_stop = steptimer.StepTimer.stop

    def stop(timer, step, items):
        plain_stop(timer, step, items)
        if step >= timer.warmup:  # the timed steps only
            forward, backward, count = kernel_seconds(current())
            counts.append(count)
            kernels["forward"] += forward
            kernels["backward"] += backward
        if timer not in timers:
            timers.append(timer)

    steptimer.StepTimer.stop = stop
    runpy.run_path(sys.argv[0], run_name="__main__")
    timer = timers[0]
    per_step = {phase: seconds / timer.steps * 1e3 for phase, seconds in timer.seconds.items()}
    return {"phases": per_step,
            "kernels": {phase: seconds / timer.steps * 1e3 for phase, seconds in kernels.items()},
            "kernels_per_step": sum(counts) / len(counts),
            "least_call_us": least_numpy_call() * 1e6}


def measure(row: str, steps: str | None) -> dict:
    """:func:`measure_in_this_process` in a fresh process (one thread for the BLAS, as
    ``benchmarks dynet`` runs), whose printed output it reads."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(PROGRAMS.parents[1]),
                                           os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "benchmarks.floor", row] + ([steps] if steps else [])
    done = subprocess.run(command, capture_output=True, text=True, env=env,
                          cwd=PROGRAMS.parents[1])
    if done.returncode != 0:
        raise RuntimeError(f"{row} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(quick: bool = False, rounds: int = 3) -> dict:
    """Each row: batchviz's step and its kernel floor (the fastest of ``rounds`` runs), and
    DyNet's step where DyNet is installed; print the table, return the JSON payload."""
    from tqdm.auto import tqdm

    rounds = 1 if quick else rounds
    steps = QUICK_STEPS if quick else None
    with_dynet = dynet_available() and not quick
    results, rows = {}, []
    with tempfile.TemporaryDirectory() as tmp, \
            tqdm(total=len(ROWS) * rounds, desc="kernel floor", disable=None) as bar:
        for row in ROWS:
            bar.set_postfix_str(row)
            ours, theirs = [], []
            for _ in range(rounds):
                ours.append(measure(row, steps))
                if with_dynet:
                    program, args = FULL[row]
                    rate = run_once(program_path(program, True, Path(tmp)), args, 1)
                    theirs.append(sum(rate.phases.values()))
                bar.update()
            best = min(ours, key=lambda r: sum(r["phases"].values()))
            floor = min(sum(r["kernels"].values()) for r in ours)
            step = sum(best["phases"].values())
            kernels = best["kernels_per_step"]
            least = kernels * min(r["least_call_us"] for r in ours) / 1e3
            dynet = min(theirs) if theirs else None
            results[row] = {"batchviz_ms": step, "phases": best["phases"],
                            "kernels_ms": floor, "kernels_per_step": kernels,
                            "least_calls_ms": least, "dynet_ms": dynet}
            rows.append([row, f"{step:.3f}", f"{floor:.3f}", f"{kernels:.0f}", f"{least:.3f}",
                         f"{dynet:.3f}" if dynet else "-",
                         f"{dynet / step:.2f}" if dynet else "-",
                         f"{dynet / floor:.2f}" if dynet else "-",
                         f"{dynet / least:.2f}" if dynet else "-"])
    print(format_table(["program", "batchviz ms/step", "kernels alone ms", "kernels",
                        "a least call each ms", "DyNet ms/step", "ratio now",
                        "at the kernel floor", "at a least call each"], rows,
                       title=f"The kernel floor: a step's kernels run alone, best of {rounds}, "
                             "one thread"))
    return {"task": "floor", "quick": quick, "rounds": rounds, "results": results,
            "machine": machine_info()}


if __name__ == "__main__":  # one measurement, in the fresh process measure() starts
    result = measure_in_this_process(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    print(json.dumps(result))
