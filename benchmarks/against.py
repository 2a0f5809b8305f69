"""``python -m benchmarks against REV``: this checkout's training step against another
commit's, old and new code alternating in one sitting.

A change to the runtime must not slow the step down. Two runs timed an hour apart on a
small, shared machine differ by more than most changes do, so this task checks ``REV`` out
into a temporary worktree and times the two checkouts in turns, round after round, each
round in fresh processes: the agenda's training step on the synthetic task, the Tree-LSTM
task and the overhead benchmark's 150k-node BiLSTM graph (construction, forward and
backward of one minibatch), and the DyNet programs of ``python -m benchmarks dynet``
under ``batchviz.dynet`` (``dynet_bilstm_tagger``, ``dynet_treelstm``, ...: their step,
from the sentences, pairs or images per second each program prints;
``--tasks`` picks some). It prints, per task, the median step of each side and the
paired comparison of the rounds (:func:`~benchmarks.harness.paired_comparisons`): the
median over rounds of old/new, a 95% interval for it, and in how many rounds the new code
was faster. An interval that holds 1 is a tie within this machine's noise.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from . import dynet_compare
from .common import format_table, machine_info
from .harness import paired_comparisons, paired_lines

ROOT = Path(__file__).resolve().parents[1]
#: the rows of ``python -m benchmarks dynet``, each a task ``dynet_<row>``
DYNET_TASKS = tuple(f"dynet_{name}" for name in dynet_compare.FULL)
TASKS = ("synthetic", "treelstm", "overhead") + DYNET_TASKS
#: one overhead step in the checkout of the current directory: construction, forward and
#: backward of the agenda on the 150k-node BiLSTM graph (``benchmarks/overhead.py``); prints
#: one JSON list of step seconds
OVERHEAD_STEPS = """
import json, sys, time
import numpy as np
from benchmarks.overhead import FULL, QUICK, Tagger, build
sizes = QUICK if sys.argv[1] == "quick" else FULL
rng = np.random.default_rng(0)
data = [(rng.integers(0, sizes["vocab"], size=sizes["length"]),
         rng.integers(0, sizes["labels"], size=sizes["length"]))
        for _ in range(sizes["instances"])]
tagger = Tagger(sizes)
steps = []
for k in range(int(sys.argv[2]) + 1):  # the first step warms up
    t0 = time.perf_counter()
    graph, loss = build(tagger, data, "agenda")
    loss.value()
    loss.backward()
    seconds = time.perf_counter() - t0
    tagger.model.zero_grad()
    graph.finish()
    if k:
        steps.append(seconds)
print(json.dumps(steps))
"""


def side_env(root: Path) -> dict:
    """The environment of a process that runs the checkout at ``root``: its folder first on
    ``PYTHONPATH``, what was there after it (where other packages may be installed)."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))


def side_steps(root: Path, task: str, quick: bool, repeat: int) -> list:
    """Step seconds of ``task`` (agenda) in the checkout at ``root``, in a fresh process."""
    env = side_env(root)
    if task in DYNET_TASKS:
        return [dynet_step(root, task[len("dynet_"):], quick)]
    if task == "overhead":
        out = subprocess.run([sys.executable, "-c", OVERHEAD_STEPS,
                              "quick" if quick else "full", str(repeat)],
                             cwd=root, env=env, capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    with tempfile.TemporaryDirectory(prefix="batchviz-against-") as tmp:
        path = Path(tmp) / "out.json"
        args = [sys.executable, "-m", "benchmarks", task, "--modes", "agenda", "--repeat",
                str(repeat), "--json", str(path)] + (["--quick"] if quick else [])
        subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, check=True)
        return json.loads(path.read_text())["results"]["agenda"]["round_totals_s"]


def dynet_step(root: Path, name: str, quick: bool) -> float:
    """Seconds per training step of the DyNet program of row ``name`` of ``python -m
    benchmarks dynet``, at its sizes, in the checkout at ``root`` under its
    ``batchviz.dynet`` (one fresh process, agenda, one thread)."""
    program, args = dynet_compare.FULL[name]
    if quick:
        args = dynet_compare.QUICK[program][1]
    programs = root / "examples" / "dynet"
    rate = dynet_compare.run_once(programs / f"{program}.py", args, threads=1,
                                  root=root).per_second
    batch = int(args[args.index("--batch") + 1]) if "--batch" in args else 1
    return batch / rate


def worktree(rev: str, where: Path) -> Path:
    subprocess.run(["git", "worktree", "add", "--detach", str(where), rev], cwd=ROOT,
                   check=True, capture_output=True, text=True)
    build_compiled(where)
    return where


def build_compiled(root: Path) -> None:
    """Compile the checkout at ``root`` in place, as installing it does
    (``batchviz/compiled.py``): a fresh worktree has no compiled modules, and would run its
    Python source against this checkout's compiled code. Needs Cython (the ``bench``
    extra); the report says which side runs what (:func:`compiled_code_of`)."""
    if (root / "setup.py").exists():
        done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"],
                              cwd=root, capture_output=True, text=True)
        if done.returncode:
            print(f"could not compile {root}:\n{done.stderr.strip()[-1500:]}", file=sys.stderr)


def compiled_code_of(root: Path) -> str:
    """Whether the checkout at ``root`` runs compiled code: its compiled modules
    (``batchviz/compiled.py``) and, in a commit that has them, its hand-written compiled
    twins (``batchviz/twins.py``), each ``compiled`` or ``source`` (with the reason), or
    ``none`` (a commit from before both)."""
    has_twins = (root / "batchviz" / "twins.py").exists()
    if not has_twins and not (root / "batchviz" / "compiled.py").exists():
        return "none"
    twins = ("from batchviz import twins\n"
             "print(', twins ' + ('compiled' if twins.compiled() else "
             "f'source ({twins.why_pure})'), end='')\n") if has_twins else ""
    probe = ("import batchviz\n"
             "try:\n"
             "    from batchviz import compiled as c\n"
             "    modules = 'compiled' if c.compiled() else f'source ({c.why_source})'\n"
             "    if not c.__file__.startswith(batchviz.__path__[0]):\n"
             "        modules = 'none'  # (another checkout's, found by an editable install)\n"
             "except ImportError:\n"
             "    modules = 'none'\n"
             "print(f'modules {modules}', end='')\n" + twins + "print()")
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True,
                          text=True, env=side_env(root))
    if done.returncode:
        return "unknown: " + done.stderr.strip()[-200:]
    return done.stdout.strip()


def run(quick: bool = False, rev: str = "HEAD", rounds: int = 5, tasks=TASKS,
        steps: int | None = None) -> dict:
    """``rounds`` rounds of each task; in each, each side times ``steps`` steps in a fresh
    process (default 2; 1 with ``quick``) and the round keeps their median."""
    from tqdm.auto import tqdm

    repeat = steps or (1 if quick else 2)
    results = {}
    with tempfile.TemporaryDirectory(prefix="batchviz-against-") as tmp:
        old = worktree(rev, Path(tmp) / "old")
        try:
            sides = {"old": old, "new": ROOT}
            code = {side: compiled_code_of(root) for side, root in sides.items()}
            print(f"compiled code: {rev} {code['old']}; this checkout {code['new']}")
            with tqdm(total=len(tasks) * rounds * 2, desc=f"against {rev}", disable=None) as bar:
                for task in tasks:
                    medians = {"old": [], "new": []}
                    for k in range(rounds):
                        order = ("old", "new") if k % 2 == 0 else ("new", "old")
                        for side in order:  # the two sides take turns, and take turns first
                            steps = side_steps(sides[side], task, quick, repeat)
                            medians[side].append(float(np.median(steps)))
                            bar.update()
                    results[task] = medians
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT,
                           capture_output=True, text=True)
    return report(rev, results, rounds)


def report(rev: str, results: dict, rounds: int) -> dict:
    rows, comparisons = [], {}
    for task, medians in results.items():
        (comparison,) = paired_comparisons({"old": medians["old"], "new": medians["new"]})
        comparisons[task] = comparison
        interval = comparison.get("interval_95")
        rows.append([task, np.median(medians["old"]) * 1e3, np.median(medians["new"]) * 1e3,
                     comparison["median_ratio"],
                     f"{interval[0]:.3f}-{interval[1]:.3f}" if interval else "-",
                     f"{comparison['faster_rounds']} of {comparison['rounds']}"])
    print(format_table(["task (agenda step)", f"{rev} ms", "this checkout ms",
                        "old/new (median)", "95% interval", "new faster"], rows,
                       title=f"this checkout against {rev}: {rounds} rounds, old and new "
                             "alternating, each round's median step"))
    for task, comparison in comparisons.items():
        print(f"{task}: " + paired_lines([comparison])[0])
    return {"task": "against", "rev": rev, "rounds": rounds, "machine": machine_info(),
            "step_medians_s": results, "paired": comparisons}
