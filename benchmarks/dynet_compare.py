"""``python -m benchmarks dynet``: DyNet programs under batchviz.dynet and under DyNet.

Six programs of examples/dynet (the BiLSTM tagger, the Tree-LSTM written with DyNet's
element-wise ops, the minibatched RNN language model, the encoder-decoder with attention,
whose nodes split into many small batches, the CNN on MNIST-like images, one image per
expression, and a bag-of-words classifier trained one sentence at a time, a graph each,
as course programs are; the first two at the paper's sizes and at half of them, see
``FULL``), and the rows that build a graph per instance, as most DyNet code does (a tree,
a sentence, a pair per graph; with autobatching, and without it on both sides: the
``_noauto`` rows), and a Tree-LSTM of 50 trees per graph run as they are, ``import
batchviz.dynet as dy``, with the agenda (``--dynet-autobatch 1``), and, where the real DyNet
is installed, with that line changed to ``import dynet as dy`` and DyNet's autobatching
(``--dynet-autobatch 1``). DyNet fixes its autobatch setting when it is imported, so every
run is a fresh process; the runs alternate between the two, on the same data and the same
sizes, and each program reports the sentences (pairs, images) per second of its timed steps
(the first is not timed). The fastest of the rounds counts, as in the paper.

Each program also reports the milliseconds per step of a step's four phases (building the
graph, the forward pass, the backward pass, the update: ``examples/dynet/steptimer.py``),
and a second table puts them side by side, from each system's fastest round: it shows
where one system spends the time that the other does not.

Both run on one core: DyNet's CPU build is single-threaded, and NumPy's BLAS is pinned to
one thread (``--threads`` changes both), so that the comparison is of the two runtimes and
not of how many cores each grabs on a shared machine.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from .common import format_table, machine_info

PROGRAMS = Path(__file__).resolve().parents[1] / "examples" / "dynet"
IMPORT_LINE = "import batchviz.dynet as dy\n"
#: the arguments of the rows that build a graph per instance, and of those that turn
#: autobatching off (each run otherwise gets ``--dynet-autobatch 1``)
PER_TREE = ["--embed", "128", "--hidden", "128", "--batch", "1", "--vocab", "5000",
            "--data", "400", "--steps", "300"]
PER_SENTENCE = ["--embed", "128", "--hidden", "64", "--mlp", "32", "--batch", "1",
                "--vocab", "10000", "--data", "400", "--steps", "150"]
PER_PAIR = ["--embed", "32", "--hidden", "32", "--attention", "32", "--batch", "1",
            "--data", "400", "--steps", "150"]
NO_AUTOBATCH = ["--dynet-autobatch", "0"]
#: row -> (program, its arguments: sizes, minibatch, steps). The BiLSTM tagger and the
#: Tree-LSTM run twice: at the paper's sizes (App. C: word embeddings and LSTMs of 256, b =
#: 64) and at half of them, where each step has the same nodes and batches but a quarter
#: of the arithmetic, so that the time that graph building and scheduling take in each
#: system shows more
FULL = {
    "bilstm_tagger": ("bilstm_tagger", ["--embed", "256", "--hidden", "256", "--mlp", "32",
                                        "--batch", "64", "--vocab", "10000", "--data", "640",
                                        "--steps", "6"]),
    "bilstm_tagger_128": ("bilstm_tagger", ["--embed", "128", "--hidden", "128", "--mlp", "32",
                                            "--batch", "64", "--vocab", "10000", "--data",
                                            "640", "--steps", "6"]),
    "treelstm": ("treelstm", ["--embed", "256", "--hidden", "256", "--batch", "64", "--vocab",
                              "5000", "--data", "640", "--steps", "6"]),
    "treelstm_128": ("treelstm", ["--embed", "128", "--hidden", "128", "--batch", "32",
                                  "--vocab", "5000", "--data", "320", "--steps", "6"]),
    "rnnlm_batch": ("rnnlm_batch", ["--embed", "128", "--hidden", "256", "--batch", "64",
                                    "--vocab", "5000", "--data", "640", "--steps", "6"]),
    "attention": ("attention", ["--embed", "32", "--hidden", "32", "--attention", "32",
                                "--batch", "16", "--data", "320", "--steps", "6"]),
    "mnist": ("mnist", ["--conv", "--batch", "64", "--data", "640", "--steps", "6"]),
    "bow_classifier": ("bow_classifier", ["--batch", "200", "--data", "1000", "--steps", "4"]),
    # written the way most DyNet code is: a graph per instance (renew_cg, build one tree,
    # sentence or pair, backward, update), with autobatching and without it on both sides;
    # and a Tree-LSTM of 50 trees per graph. Small sizes (128, 64): there, what a system
    # costs per graph and per batch shows, not its matrix products
    "treelstm_per_tree": ("treelstm", PER_TREE),
    "treelstm_per_tree_noauto": ("treelstm", PER_TREE + NO_AUTOBATCH),
    "bilstm_tagger_per_sentence": ("bilstm_tagger", PER_SENTENCE),
    "bilstm_tagger_per_sentence_noauto": ("bilstm_tagger", PER_SENTENCE + NO_AUTOBATCH),
    "attention_per_pair": ("attention", PER_PAIR),
    "attention_per_pair_noauto": ("attention", PER_PAIR + NO_AUTOBATCH),
    "treelstm_50": ("treelstm", ["--embed", "128", "--hidden", "128", "--batch", "50",
                                 "--vocab", "5000", "--data", "500", "--steps", "6"]),
}
#: each program once, at tiny sizes (tests)
QUICK = {program: (program, ["--quick", "--steps", "3"] + [a for a in args if a == "--conv"])
         for program, args in FULL.values() if "--dynet-autobatch" not in args}
RATE = re.compile(r"^\d+ \w+ in [\d.]+ s: ([\d.]+) (\w+)/s$", re.M)
PHASES = re.compile(r"^ms per step: (.+)$", re.M)


def dynet_available() -> bool:
    return importlib.util.find_spec("dynet") is not None


def program_path(name: str, under_dynet: bool, folder: Path) -> Path:
    """The program, or (under DyNet) a copy in ``folder`` with the import line changed."""
    source = PROGRAMS / f"{name}.py"
    if not under_dynet:
        return source
    text = source.read_text()
    if text.count(IMPORT_LINE) != 1:
        raise ValueError(f"{source} must have the line {IMPORT_LINE.strip()!r} exactly once")
    copy = folder / f"{name}.py"
    copy.write_text(text.replace(IMPORT_LINE, "import dynet as dy\n"))
    return copy


class Rate(NamedTuple):
    """What a program printed last: ``per_second`` of its ``unit`` (``sentences``), and the
    milliseconds per step of each phase (``{"build": 29.0, ...}``; None from a program that
    does not print them, as an older checkout's, see ``against``)."""

    per_second: float
    unit: str
    phases: dict | None = None


def parse_phases(line: str) -> dict:
    """``"build 29.01, forward 18.24"`` -> ``{"build": 29.01, "forward": 18.24}``."""
    phases = {}
    for item in line.split(","):
        name, milliseconds = item.split()
        phases[name] = float(milliseconds)
    return phases


def run_once(path: Path, args: list, threads: int, root: Path = PROGRAMS.parents[1]) -> Rate:
    """The rate of one run of the program at ``path``, with the batchviz of the checkout at
    ``root`` (by default this one)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), PYTHONPATH=os.pathsep.join(
                   [str(root / "examples" / "dynet"), str(root),
                    os.environ.get("PYTHONPATH", "")]))
    autobatch = [] if "--dynet-autobatch" in args else ["--dynet-autobatch", "1"]
    done = subprocess.run([sys.executable, str(path)] + args + autobatch,
                          capture_output=True, text=True, env=env, cwd=path.parent)
    if done.returncode != 0:
        raise RuntimeError(f"{path.name} failed:\n{done.stderr[-3000:]}")
    found = RATE.findall(done.stdout)
    if not found:
        raise RuntimeError(f"{path.name} printed no rate:\n{done.stdout[-2000:]}")
    phases = PHASES.findall(done.stdout)
    return Rate(float(found[-1][0]), found[-1][1], parse_phases(phases[-1]) if phases else None)


@contextlib.contextmanager
def busy_neighbour(on: bool):
    """A process that keeps one core busy (``while True: pass``) for the block, as another
    user's job on a shared machine would: what it costs each system shows how each copes
    with a machine it does not have to itself."""
    if not on:
        yield
        return
    neighbour = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        neighbour.kill()
        neighbour.wait()


def run(quick: bool = False, rounds: int | None = None, threads: int = 1,
        rows: tuple | None = None, busy: bool = False) -> dict:
    from tqdm.auto import tqdm

    from . import harness

    rounds = 1 if quick else (rounds or harness.ROUNDS)
    sizes = QUICK if quick else FULL
    if rows and not quick:
        sizes = {name: FULL[name] for name in rows}
    with_dynet = dynet_available()
    results = {}
    systems = 2 if with_dynet else 1
    with tempfile.TemporaryDirectory() as tmp, busy_neighbour(busy), \
            tqdm(total=len(sizes) * rounds * systems, desc="dynet programs", disable=None) as bar:
        folder = Path(tmp)   # (the copies import toydata and steptimer from PROGRAMS)
        for name, (program, args) in sizes.items():
            bar.set_postfix_str(name)
            runs = {"batchviz": [], "dynet": []}
            for _ in range(rounds):  # alternating, so that both see the same machine
                runs["batchviz"].append(run_once(program_path(program, False, folder), args,
                                                 threads))
                bar.update()
                if with_dynet:
                    runs["dynet"].append(run_once(program_path(program, True, folder), args,
                                                  threads))
                    bar.update()
            results[name] = summarize(runs)
    rows, phase_rows = [], []
    for name, r in results.items():
        ratio = r["ratio"]
        rows.append([name, r["unit"], r["batchviz"], r["dynet"] if r["dynet"] else "not installed",
                     f"{ratio:.2f}" if ratio else "-"])
        for k, (phase, ms) in enumerate((r["phases"]["batchviz"] or {}).items()):
            theirs = (r["phases"]["dynet"] or {}).get(phase)
            phase_rows.append([name if k == 0 else "", phase, ms,
                               "-" if theirs is None else theirs,
                               f"{theirs / ms:.2f}" if theirs and ms else "-"])
    title = (f"DyNet programs, agenda (--dynet-autobatch 1) in both (rows *_noauto: no "
             f"autobatching in both), best of {rounds} "
             f"alternating runs, {threads} thread(s)"
             + (", a busy process beside them" if busy else ""))
    print(format_table(["program", "counts", "batchviz.dynet per s", "DyNet per s", "ratio"], rows,
                       title=title))
    print()
    print(format_table(["program", "phase", "batchviz.dynet ms", "DyNet ms",
                        "ratio (DyNet ms / batchviz ms)"], phase_rows,
                       title="Where a step's time goes: milliseconds per step of each phase, "
                             "from each system's fastest run"))
    if with_dynet and rounds > 1:
        print()
        print("round by round (batchviz.dynet against the DyNet run beside it; with 5 rounds "
              "or more, a 95% interval: one that holds 1 is a tie on this machine):")
        for name, r in results.items():
            r["paired"] = paired(r["rounds"])
            line = harness.paired_lines([r["paired"]])[0].strip()
            print(f"  {name}: " + line.replace("batchviz against dynet", "batchviz.dynet "
                                                "against DyNet"))
    info = machine_info()
    if with_dynet:
        info["dynet"] = _dynet_build()
        print(f"DyNet: {info['dynet']}")
    return {"task": "dynet", "quick": quick, "rounds": rounds, "threads": threads, "busy": busy,
            "sizes": sizes, "results": results, "machine": info}


def summarize(runs: dict) -> dict:
    """One program's result from its runs (``{"batchviz": [Rate, ...], "dynet": [...]}``):
    each system's best rate, the ratio of the two, every round's rate, and the phases of
    each system's fastest run."""
    result = {"unit": runs["batchviz"][0].unit, "rounds": {}, "phases": {}}
    for system, rates in runs.items():
        best = max(rates, key=lambda rate: rate.per_second) if rates else None
        result[system] = best.per_second if best else None
        result["rounds"][system] = [rate.per_second for rate in rates]
        result["phases"][system] = best.phases if best else None
    result["ratio"] = result["batchviz"] / result["dynet"] if result["dynet"] else None
    return result


def paired(rounds: dict) -> dict:
    """batchviz.dynet against DyNet round by round (:func:`.harness.paired_comparisons` of
    the times per instance of the runs that ran side by side): the median ratio, the
    rounds batchviz.dynet won, and with 5 rounds or more a 95% interval."""
    from .harness import paired_comparisons

    times = {system: [1.0 / rate for rate in rounds[system]] for system in ("dynet", "batchviz")}
    return paired_comparisons(times)[0]


def _dynet_build() -> str:
    """Which DyNet was compared with (its package's name and version)."""
    from importlib.metadata import PackageNotFoundError, version

    for package in ("dyNET38", "dyNET", "dynet"):
        try:
            return f"{package} {version(package)} (DyNet {_dynet_api_version()}, CPU)"
        except PackageNotFoundError:
            continue
    return "unknown build"


def _dynet_api_version() -> str:
    done = subprocess.run([sys.executable, "-c", "import dynet; print(dynet.__version__, "
                           "dynet.__gitversion__)"], capture_output=True, text=True)
    return done.stdout.strip() or "?"
