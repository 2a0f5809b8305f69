"""Timing one training minibatch, phase by phase, and judging it against the machine.

The paper (§4.1) splits a training step into graph construction + on-the-fly batching,
forward computation, backward graph construction, backward computation and the parameter
update. :func:`time_step` measures exactly those phases for one minibatch, with the
executor's own counters (scheduling time, batches, kernels).

*Efficiency* puts the result on an absolute scale: the model's training FLOP/s (counted
analytically: every matrix-vector product ``W x`` costs ``2 |W|`` FLOPs forward and twice
that backward, for ``dW`` and ``dx``) divided by the FLOP/s the backend's float32 GEMM
(NumPy's BLAS, or cuBLAS through CuPy) reaches on this machine at the model's own shapes
with 64 columns. An ideal batcher would approach 1.

On a GPU, kernels run asynchronously: every phase that ends a step's work on the device
(reading the loss, the backward pass, the update) waits for it, so the times are the GPU's.
"""
from __future__ import annotations

import gc
import os
import time
from dataclasses import asdict, dataclass, field

import batchviz as bv
from batchviz import backend
from batchviz.backend import synchronize
from batchviz.schedule import PendingView
from batchviz.schedule.lookahead import batch_lower_bound
from batchviz.words import bytes_text

import numpy as np

from .common import format_table, machine_info, results_dir, write_json

#: the paper's strategies, which the synthetic task also runs on its manually batched code
PAPER_STRATEGIES = ("none", "depth", "agenda")
#: the strategies every task runs on the naive code: the paper's, and batchviz's own
#: (``lookahead``: fewest batches; ``layout``: the lookahead's batches laid out for views)
STRATEGIES = PAPER_STRATEGIES + ("lookahead", "layout")
#: every mode a task may have: the strategies on the naive code, and the paper's on the
#: synthetic task's manually batched code
MODE_NAMES = STRATEGIES + tuple(f"manual+{s}" for s in PAPER_STRATEGIES)
#: timed rounds per mode in a full run (``--repeat``); the fastest counts
ROUNDS = 3
#: the modes to time (``--modes``); None: all of a task's modes. A run of some modes only
#: is *partial*: it prints and writes ``--json``, but leaves ``results/`` (the full table
#: that ``report`` reads) alone
MODES: tuple | None = None
FLOP_FORMULA = ("training FLOPs = 3 x sum over every matrix-vector product W x of 2 |W| "
                "(forward 2|W|, backward 2|W| for dx and 2|W| for dW; element-wise ops not counted)")


@dataclass
class StepTimes:
    """One training step (one minibatch), in seconds, plus the executor's counters."""

    construct: float = 0.0        # building the graph (user code), forward runs excluded
    schedule: float = 0.0         # on-the-fly batching: the strategy's schedule()
    forward: float = 0.0          # forward execution, scheduling excluded
    backward_graph: float = 0.0   # loss.backward() outside the executor's backward pass
    backward: float = 0.0         # backward execution
    update: float = 0.0           # trainer.update()
    nodes: int = 0
    batches: int = 0              # forward batches (= forward compute kernels)
    kernels: int = 0              # forward + backward kernel launches (batches + copies)
    bytes_copied: int = 0         # forward gathers that copied arguments together
    lower_bound: int = 0          # fewest batches possible, summed over the forward runs
    forward_runs: int = 0         #   (counted only when asked: see time_step)
    loss: float = 0.0

    @property
    def total(self) -> float:
        return (self.construct + self.schedule + self.forward + self.backward_graph
                + self.backward + self.update)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["total"] = self.total
        return d


class StepRecorder:
    """Passed to a model's ``build_loss(run)``: ``run(expr)`` runs the forward pass now
    (models that decide while building, like the transition parser) and keeps its counters."""

    def __init__(self, graph, times: StepTimes, count_bound: bool = False):
        self.graph = graph
        self.times = times
        self.inside = 0.0   # seconds not spent building the graph (forward runs, bounds)
        self.count_bound = count_bound

    def __call__(self, expr):
        g = self.graph
        if g.n_evaluated == len(g.ops):
            return expr.npvalue()
        if self.count_bound:  # outside every timed phase
            t0 = time.perf_counter()
            self.times.lower_bound += batch_lower_bound(PendingView(g))
            self.inside += time.perf_counter() - t0
        t0 = time.perf_counter()
        value = expr.npvalue()  # on a GPU, reading the value waits for the forward's kernels
        wall = time.perf_counter() - t0
        self.inside += wall
        self.account(g.last_stats.forward, wall)
        return value

    def account(self, stats, wall: float) -> None:
        """Count one forward run that took ``wall`` seconds, scheduling included."""
        t = self.times
        t.schedule += stats.schedule_seconds
        t.forward += wall - stats.schedule_seconds
        t.batches += stats.batches
        t.kernels += stats.kernels
        t.bytes_copied += stats.bytes_copied
        t.forward_runs += 1


def time_step(build_loss, strategy: str, trainer, count_bound: bool = False) -> StepTimes:
    """Build the loss of one minibatch with ``build_loss(run)`` under ``strategy``, run it
    forward and backward, update; return the time of every phase. With ``count_bound``,
    also the lower bound on the batches of every forward run (per signature its longest
    dependency chain among the nodes the run schedules), outside the timed phases."""
    times = StepTimes()
    gc.collect()  # every step starts from the same collector state (its own garbage is timed)
    t0 = time.perf_counter()
    graph = bv.Graph(strategy=strategy)
    with graph:
        recorder = StepRecorder(graph, times, count_bound)
        loss = build_loss(recorder)
        times.construct = time.perf_counter() - t0 - recorder.inside
        times.loss = float(recorder(loss))
        t1 = time.perf_counter()
        loss.backward()
        launched = time.perf_counter()
        synchronize()  # a GPU's backward kernels may still be running: they count as backward
        stats = graph.last_stats.backward
        times.backward = stats.seconds + (time.perf_counter() - launched)
        times.backward_graph = max(launched - t1 - stats.seconds, 0.0)
        times.kernels += stats.kernels
        times.nodes = len(graph.ops)
    t2 = time.perf_counter()
    trainer.update()
    synchronize()
    times.update = time.perf_counter() - t2
    return times


@dataclass
class Products:
    """The model's matrix-vector products per minibatch: ``(rows, cols) -> count``."""

    counts: dict = field(default_factory=dict)

    def add(self, rows: int, cols: int, count: int = 1) -> None:
        key = (int(rows), int(cols))
        self.counts[key] = self.counts.get(key, 0) + int(count)

    @property
    def training_flops(self) -> float:
        return float(sum(3 * 2 * r * c * n for (r, c), n in self.counts.items()))


def best_gemm_rate(m: int, k: int, n: int, seconds: float = 0.2, windows: int = 20) -> float:
    """float32 GEMM FLOP/s for ``(m x k) @ (k x n)`` on the current backend (NumPy's BLAS, or
    cuBLAS through CuPy): the best of ``windows`` short timing windows. On a shared machine a
    long average measures the neighbours; the best window measures the machine, as the best
    of 3 minibatches measures the model. Each window ends by waiting for the device."""
    xp = backend.state.xp
    rng = np.random.default_rng(0)
    a = xp.asarray(rng.standard_normal((m, k)).astype(np.float32))
    b = xp.asarray(rng.standard_normal((k, n)).astype(np.float32))
    a @ b
    synchronize()
    t0 = time.perf_counter()
    a @ b
    synchronize()
    reps = max(1, int(seconds / windows / max(time.perf_counter() - t0, 1e-7)))
    best = 0.0
    for _ in range(windows):
        t0 = time.perf_counter()
        for _ in range(reps):
            a @ b
        synchronize()
        best = max(best, 2.0 * m * k * n * reps / (time.perf_counter() - t0))
    return best


def machine_gemm_rate(products: Products, columns: int = 64, seconds: float = 0.2) -> dict:
    """float32 GEMM FLOP/s of the current backend at the model's shapes: for every ``W`` of
    ``rows x cols``, the forward ``X W^T`` and the backward ``dW = G^T X`` and ``dX = G W``
    with ``columns`` instances, weighted by how often the model uses that ``W``. The rate is
    total FLOPs over total time, i.e. what a perfect batcher would get on this machine."""
    total_flops = total_time = 0.0
    shapes = []
    for (rows, cols), count in sorted(products.counts.items()):
        per_shape = 0.0
        for m, k, n in ((columns, cols, rows), (rows, columns, cols), (columns, rows, cols)):
            rate = best_gemm_rate(m, k, n, seconds=seconds)
            per_shape += 2.0 * m * k * n / rate
        flops = 3 * 2.0 * rows * cols * columns
        total_flops += count * flops
        total_time += count * per_shape
        shapes.append({"W": [rows, cols], "uses": count, "gflops": flops / per_shape / 1e9})
    name = "NumPy float32 GEMM" if backend.get_backend() == "numpy" else "CuPy float32 GEMM"
    return {"gemm_flops_per_s": total_flops / total_time if total_time else 0.0,
            "gemm_columns": columns, "gemm_shapes": shapes, "gemm_name": name}


def result_entry(times: StepTimes, instances: int, flops: float, machine_rate: float,
                 round_totals: list | None = None, lower_bound: int | None = None) -> dict:
    """The JSON record of one mode: its fastest step ``times`` (and the total of every
    timed round, whose median says how far a busy machine moved it, and the lower bound
    on its batches, counted in another step of the same graphs)."""
    rate = flops / times.total if times.total else 0.0
    round_totals = round_totals or [times.total]
    return {
        "sentences_per_s": instances / times.total,
        "median_sentences_per_s": instances / float(np.median(round_totals)),
        "round_totals_s": round_totals,
        "efficiency": rate / machine_rate if machine_rate else 0.0,
        "model_flops_per_s": rate,
        "batches_per_minibatch": times.batches,
        "lower_bound": times.lower_bound if lower_bound is None else lower_bound,
        "bytes_copied": times.bytes_copied,
        "kernels": times.kernels,
        "nodes": times.nodes,
        "forward_runs": times.forward_runs,
        "phases_s": {k: v for k, v in times.to_dict().items()
                     if k in ("construct", "schedule", "forward", "backward_graph", "backward",
                              "update", "total")},
    }


def print_results(title: str, results: dict, unit: str = "sent/s") -> None:
    """The sentences/s and phase table of one task."""
    rows = []
    for mode, r in results.items():
        p = r["phases_s"]
        total = p["total"]
        rows.append([mode, r["sentences_per_s"], r["median_sentences_per_s"], r["efficiency"],
                     r["batches_per_minibatch"], r["lower_bound"], bytes_text(r["bytes_copied"]),
                     r["kernels"], r["nodes"], 1e3 * total]
                    + [f"{100 * p[k] / total:.0f}%" for k in
                       ("construct", "schedule", "forward", "backward_graph", "backward", "update")])
    print(format_table([
        "mode", unit, "median", "efficiency", "batches", "lower bound", "bytes copied",
        "kernels", "nodes", "ms/minibatch",
        "construct", "batching", "forward", "bwd graph", "backward", "update"], rows, title=title))


def paired_comparisons(totals: dict, resamples: int = 2000) -> list:
    """Each mode against the one timed just before it in every round (the modes take turns,
    so the two steps of a round ran side by side): the median over rounds of the time
    ratio, and in how many rounds the mode was the faster. On a busy machine this moves
    less than a ratio of two fastest steps.

    With 5 rounds or more, also a 95% interval for that median, by resampling the rounds
    (the percentile bootstrap, ``resamples`` times, seeded: the same rounds give the same
    interval). It says whether the run can tell the two modes apart at all: when it holds
    1, the difference is within what this machine's noise moved the rounds."""
    modes = list(totals)
    out = []
    for before, mode in zip(modes, modes[1:]):
        a, b = np.asarray(totals[before]), np.asarray(totals[mode])
        ratio = a / b  # above 1: ``mode`` took less time than ``before`` in that round
        entry = {"mode": mode, "against": before, "median_ratio": float(np.median(ratio)),
                 "faster_rounds": int((b < a).sum()), "rounds": len(a)}
        if len(a) >= 5:
            picks = np.random.default_rng(0).integers(0, len(a), size=(resamples, len(a)))
            low, high = np.percentile(np.median(ratio[picks], axis=1), [2.5, 97.5])
            entry["interval_95"] = [float(low), float(high)]
        out.append(entry)
    return out


def paired_lines(comparisons: list) -> list:
    """:func:`paired_comparisons` as text, one line per pair of modes."""
    lines = []
    for c in comparisons:
        interval = ""
        if "interval_95" in c:
            low, high = c["interval_95"]
            verdict = ("faster" if low > 1 else "slower" if high < 1
                       else "no clear difference")
            interval = f" (95% interval {low:.3f}-{high:.3f}: {verdict})"
        lines.append(f"  {c['mode']} against {c['against']}: {c['median_ratio']:.3f}x as fast "
                     f"in the median round{interval}, faster in {c['faster_rounds']} of "
                     f"{c['rounds']} rounds")
    return lines


def print_paired(comparisons: list) -> None:
    print("round by round (each mode against the one before it):")
    print("\n".join(paired_lines(comparisons)))


def finish(task: str, settings: dict, machine_rate: dict, products: Products,
           results: dict, instances: int, quick: bool, paired: list | None = None) -> dict:
    """Print the efficiency formula, save ``results/<task>.json``, return the payload
    (with ``paired``, the round-by-round comparisons, when the run had several rounds)."""
    rate = machine_rate["gemm_flops_per_s"]
    print(f"efficiency = model training FLOP/s / machine GEMM FLOP/s; {FLOP_FORMULA}")
    print(f"  this minibatch: {products.training_flops / 1e9:.2f} GFLOP for {instances} instances; "
          f"{machine_rate['gemm_name']} at the model's shapes ({machine_rate['gemm_columns']} columns): "
          f"{rate / 1e9:.1f} GFLOP/s")
    machine = machine_info()
    machine.update(machine_rate)
    machine["blas_threads"] = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get(
        "OMP_NUM_THREADS") or f"default ({os.cpu_count()} cores)"
    payload = {"task": task, "quick": quick, "rounds": 1 if quick else ROUNDS,
               "settings": settings, "machine": machine,
               "flops_per_minibatch": products.training_flops, "flop_formula": FLOP_FORMULA,
               "results": results}
    if paired:
        payload["paired"] = paired
    if not quick and MODES is not None:
        print(f"partial run (--modes {','.join(results)}): {results_dir()} left as it was")
    elif not quick:
        path = write_json(results_dir() / f"{task}.json", payload)
        print(f"saved {path}")
    return payload


class NoSuchModes(ValueError):
    """``--modes`` named none of a task's modes."""


def chosen_modes(task: str, builders: dict) -> dict:
    """``builders`` narrowed to :data:`MODES` (in the task's order); an error naming the
    task's modes when none of them was asked for."""
    if MODES is None:
        return builders
    chosen = {m: b for m, b in builders.items() if m in MODES}
    if not chosen:
        raise NoSuchModes(f"{task} has none of the modes {', '.join(MODES)}; "
                         f"its modes are {', '.join(builders)}")
    return chosen


def run_modes(task: str, title: str, builders: dict, trainer, products: Products,
              instances: int, settings: dict, quick: bool, unit: str = "sent/s") -> dict:
    """Time every mode (``name -> (strategy, build_loss)``), print, save, return the payload.

    Each mode runs one warm-up step, then ``ROUNDS`` timed steps (``--repeat``, 3 by
    default); the fastest counts (the paper reports the fastest of three). The modes take turns (A B C A B C ...), so that a
    burst of load from elsewhere on a shared machine does not hit one mode only, and every
    step starts from the same parameters, so every mode does exactly the same work."""
    builders = chosen_modes(task, builders)
    repeat, warmup = (1, 0) if quick else (ROUNDS, 1)
    seconds = 0.02 if quick else 0.2
    machine_rate = machine_gemm_rate(products, seconds=seconds)
    params = trainer.model.parameters()
    initial = [p.value() for p in params]

    def step(strategy, build_loss, count_bound):
        for p, values in zip(params, initial):
            p.set_value(values)
        return time_step(build_loss, strategy, trainer, count_bound)

    best: dict = {}
    bounds: dict = {}   # the lower bound of each mode, counted in its first step
    totals: dict = {mode: [] for mode in builders}
    for round_ in range(warmup + repeat):
        for mode, (strategy, build_loss) in builders.items():
            times = step(strategy, build_loss, count_bound=round_ == 0)
            if round_ == 0:
                bounds[mode] = times.lower_bound
            if round_ >= warmup:
                totals[mode].append(times.total)
                if mode not in best or times.total < best[mode].total:
                    best[mode] = times
        if round_ >= warmup:
            print(f"  round {round_ - warmup + 1}/{repeat} ({unit}, best so far in brackets): "
                  + ", ".join(f"{m} {instances / totals[m][-1]:.1f} ({instances / t.total:.1f})"
                              for m, t in best.items()), flush=True)
    for p, values in zip(params, initial):
        p.set_value(values)
    again = machine_gemm_rate(products, seconds=seconds)  # the machine's best, before or after
    if again["gemm_flops_per_s"] > machine_rate["gemm_flops_per_s"]:
        machine_rate = again
    results = {mode: result_entry(t, instances, products.training_flops,
                                  machine_rate["gemm_flops_per_s"], totals[mode], bounds[mode])
               for mode, t in best.items()}
    print_results(title, results, unit)
    paired = paired_comparisons(totals) if repeat > 1 else None
    if paired:
        print_paired(paired)
    return finish(task, settings, machine_rate, products, results, instances, quick, paired)
