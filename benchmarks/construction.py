"""``python -m benchmarks construction``: what each statement of a DyNet program costs to
build, under batchviz.dynet and under DyNet.

The build phase of ``benchmarks dynet``'s phase table is a whole graph's worth of such
statements, plus what renewing the graph and collecting garbage cost. This task takes it
apart: each statement a Tree-LSTM or a tagger writes at every node (a lookup, a gate
``logistic(b + W x)``, an element-wise product, a concatenation, a loss) is timed on its
own, so that the statements that cost batchviz the most next to DyNet stand out.

Each system runs in a fresh process (DyNet is imported by its own name, batchviz as
``import batchviz.dynet as dy``), alternating round by round; the fastest round counts.
Inside a round, each statement is built two thousand times in one graph that already
holds its arguments, after fifty warm-up builds (so that the parameters are nodes of the
graph and the shapes of a gate are known, as they are from a minibatch's second tree
on), in two sweeps of which the faster counts. The loop calls a function per statement,
and that call (some 50 ns) is counted for both.
``renew_cg()`` is timed on graphs that hold nothing: the cost of a new graph before any
of the old one's is freed.

A second table takes apart the build phase of the row ``treelstm_50`` of ``benchmarks
dynet`` (50 trees a graph, trained step after step as the program does): ``renew_cg()``,
freeing the previous graph (when the program lets go of the last step's expressions,
here right after ``renew_cg()``), the statements that build the new one, and, of the
whole phase, the time of Python's cycle collector (``gc.callbacks``), which runs when
enough new container objects have piled up.
"""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .common import format_table, machine_info
from .dynet_compare import FULL, IMPORT_LINE, PROGRAMS, _dynet_build, dynet_available

#: statement name -> the Python expression a program writes (``x``, ``y``: vectors of
#: the graph; ``W``, ``U``: (H, H) weights; ``b``: a bias; ``O``: an output layer; ``E``: a
#: lookup table)
STATEMENTS = {
    "E[w]": "E[7]",
    "W * x": "W * x",
    "b + W * x": "b + W * x",
    "logistic(b + W * x)": "dy.logistic(b + W * x)",
    "logistic(b + W * x + U * y)": "dy.logistic(b + W * x + U * y)",
    "tanh(x)": "dy.tanh(x)",
    "cmult(x, y)": "dy.cmult(x, y)",
    "x + y": "x + y",
    "concatenate([x, y])": "dy.concatenate([x, y])",
    "pickneglogsoftmax(O * x, 3)": "dy.pickneglogsoftmax(O * x, 3)",
    "renew_cg()": "dy.renew_cg()",
}
HIDDEN = 64
#: builds per statement in a round (full, quick), after WARMUP builds
NUMBER = {False: 2000, True: 50}
WARMUP = 50
#: the row of ``benchmarks dynet`` whose build phase is taken apart, and its timed steps
#: (full, quick), after two that are not timed
GRAPH_ROW = "treelstm_50"
STEPS = {False: 8, True: 2}
PARTS = ("renew_cg()", "freeing the previous graph", "statements",
         "of the phase, the cycle collector", "build, in all")


def measure(system: str, number: int) -> dict:
    """Microseconds per build of every statement, in this process, under ``system``
    (``"dynet"`` or ``"batchviz"``)."""
    if system == "dynet":
        import dynet as dy
    else:
        import batchviz.dynet as dy
    model = dy.ParameterCollection()
    names = {"dy": dy, "W": model.add_parameters((HIDDEN, HIDDEN)),
             "U": model.add_parameters((HIDDEN, HIDDEN)), "b": model.add_parameters(HIDDEN),
             "O": model.add_parameters((5, HIDDEN)),
             "E": model.add_lookup_parameters((100, HIDDEN))}
    builds = {name: eval(f"lambda x, y: {source}", names)  # (as the program has it)
              for name, source in STATEMENTS.items()}
    micros = {}
    for _ in range(2):  # the faster of two sweeps counts (the first pays what a process
        for name, build in builds.items():  # pays once, in whichever statement is first)
            dy.renew_cg()
            x, y = dy.tanh(names["E"][1]), dy.tanh(names["E"][2])
            for _ in range(WARMUP):
                build(x, y)
            start = time.perf_counter()
            for _ in range(number):
                build(x, y)
            taken = (time.perf_counter() - start) / number * 1e6
            micros[name] = min(taken, micros.get(name, taken))
    return micros


def build_phase(system: str, steps: int, quick: bool) -> dict:
    """Milliseconds per step of the parts of the build phase of :data:`GRAPH_ROW`'s
    program (:data:`PARTS`), trained ``steps`` steps in this process under ``system``."""
    program, args = FULL[GRAPH_ROW]
    path = PROGRAMS / f"{program}.py"
    sys.argv = [str(path)] + args + ["--quick"] * quick + ["--dynet-autobatch", "1"]
    sys.path.insert(0, str(PROGRAMS))  # (its helpers: steptimer, toydata)
    source = path.read_text()
    if system == "dynet":
        source = source.replace(IMPORT_LINE, "import dynet as dy\n")
    names = {"__name__": "construction", "__file__": str(path)}  # (not "__main__": no run)
    exec(compile(source, str(path), "exec"), names)
    dy, train, encode, trainer = names["dy"], names["train"], names["encode"], names["trainer"]
    batch = names["args"].batch
    collecting = {"building": False, "start": 0.0, "seconds": 0.0}

    def collector(phase: str, info: dict) -> None:
        if phase == "start":
            collecting["start"] = time.perf_counter()
        elif collecting["building"]:
            collecting["seconds"] += time.perf_counter() - collecting["start"]

    gc.callbacks.append(collector)
    renew = freeing = statements = 0.0
    loss = losses = None
    for step in range(2 + steps):
        if step == 2:  # the first two steps are not timed
            renew = freeing = statements = collecting["seconds"] = 0.0
        first = (step * batch) % len(train)
        collecting["building"] = True
        start = time.perf_counter()
        dy.renew_cg()
        renewed = time.perf_counter()
        loss = losses = None  # the last step's expressions, and so its graph, are let go
        freed = time.perf_counter()
        losses = []
        for tree in train[first:first + batch]:
            encode(tree, losses)
        loss = dy.esum(losses)
        built = time.perf_counter()
        collecting["building"] = False
        renew, freeing = renew + renewed - start, freeing + freed - renewed
        statements += built - freed
        loss.value()
        loss.backward()
        trainer.update()
    gc.callbacks.remove(collector)
    seconds = (renew, freeing, statements, collecting["seconds"], renew + freeing + statements)
    return {part: s / steps * 1e3 for part, s in zip(PARTS, seconds)}


def measure_in_fresh_process(system: str, what: str, quick: bool) -> dict:
    """:func:`measure` (``what="statements"``) or :func:`build_phase` (``"build"``) in a
    new process: each starts from a fresh interpreter, whose collector has seen nothing of
    the other's objects."""
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root),
                                                      os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "benchmarks.construction", system, what]
                          + ["--quick"] * quick, capture_output=True, text=True, env=env,
                          cwd=root)
    if done.returncode != 0:
        raise RuntimeError(f"construction under {system} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(quick: bool = False, rounds: int = 3) -> dict:
    from tqdm.auto import tqdm

    rounds = 1 if quick else rounds
    systems = ["batchviz"] + (["dynet"] if dynet_available() else [])
    best = {system: {} for system in systems}
    builds = {system: None for system in systems}  # each system's fastest build phase
    with tqdm(total=2 * rounds * len(systems), desc="construction", disable=None) as bar:
        for _ in range(rounds):  # alternating, so that both see the same machine
            for system in systems:
                measured = measure_in_fresh_process(system, "statements", quick)
                for name, micros in measured.items():
                    best[system][name] = min(micros, best[system].get(name, micros))
                bar.update()
                build = measure_in_fresh_process(system, "build", quick)
                if builds[system] is None or build[PARTS[-1]] < builds[system][PARTS[-1]]:
                    builds[system] = build
                bar.update()
    theirs = best.get("dynet", {})
    rows = [[name, best["batchviz"][name], theirs.get(name, "not installed"),
             f"{theirs[name] / best['batchviz'][name]:.2f}" if name in theirs else "-"]
            for name in STATEMENTS]
    print(format_table(["statement", "batchviz.dynet µs", "DyNet µs",
                        "ratio (DyNet µs / batchviz µs)"], rows,
                       title=f"Building one node: microseconds per statement, best of "
                             f"{rounds} alternating rounds"))
    print()
    dynet_build = builds.get("dynet") or {}
    print(format_table(["part", "batchviz.dynet ms", "DyNet ms"],
                       [[part, builds["batchviz"][part], dynet_build.get(part, "-")]
                        for part in PARTS],
                       title=f"The build phase of {GRAPH_ROW} taken apart: milliseconds per "
                             f"step, each system's fastest round"))
    info = machine_info()
    if theirs:
        info["dynet"] = _dynet_build()
        print(f"DyNet: {info['dynet']}")
    return {"task": "construction", "quick": quick, "rounds": rounds,
            "statements": STATEMENTS, "micros": best, "build_row": GRAPH_ROW,
            "build_ms": builds, "machine": info}


if __name__ == "__main__":  # one system's measurements, as JSON (measure_in_fresh_process)
    system, what, quick = sys.argv[1], sys.argv[2], "--quick" in sys.argv[3:]
    print(json.dumps(measure(system, NUMBER[quick]) if what == "statements" else
                     build_phase(system, STEPS[quick], quick)))
