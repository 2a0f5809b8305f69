"""``python -m benchmarks dynet``: DyNet programs under batchviz.dynet and under DyNet.

Five programs of examples/dynet (the BiLSTM tagger, the Tree-LSTM written with DyNet's
element-wise ops, the minibatched RNN language model, the encoder-decoder with attention,
whose nodes split into many small batches, and the CNN on MNIST-like images, one image per
expression) run as they are, ``import
batchviz.dynet as dy``, with the agenda (``--dynet-autobatch 1``), and, where the real DyNet
is installed, with that line changed to ``import dynet as dy`` and DyNet's autobatching
(``--dynet-autobatch 1``). DyNet fixes its autobatch setting when it is imported, so every
run is a fresh process; the runs alternate between the two, on the same data and the same
sizes, and each program reports the sentences (pairs, images) per second of its timed steps
(the first is not timed). The fastest of the rounds counts, as in the paper.

Both run on one core: DyNet's CPU build is single-threaded, and NumPy's BLAS is pinned to
one thread (``--threads`` changes both), so that the comparison is of the two runtimes and
not of how many cores each grabs on a shared machine.
"""
from __future__ import annotations

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
#: program -> its arguments (sizes, minibatch, steps), full and quick
FULL = {
    "bilstm_tagger": ["--embed", "128", "--hidden", "128", "--mlp", "32", "--batch", "64",
                      "--vocab", "10000", "--data", "640", "--steps", "6"],
    "treelstm": ["--embed", "128", "--hidden", "128", "--batch", "32", "--vocab", "5000",
                 "--data", "320", "--steps", "6"],
    "rnnlm_batch": ["--embed", "128", "--hidden", "256", "--batch", "64", "--vocab", "5000",
                    "--data", "640", "--steps", "6"],
    "attention": ["--embed", "32", "--hidden", "32", "--attention", "32", "--batch", "16",
                  "--data", "320", "--steps", "6"],
    "mnist": ["--conv", "--batch", "64", "--data", "640", "--steps", "6"],
}
QUICK = {name: ["--quick", "--steps", "3"] + [a for a in args if a == "--conv"]
         for name, args in FULL.items()}
RATE = re.compile(r"^\d+ \w+ in [\d.]+ s: ([\d.]+) (\w+)/s$", re.M)


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
    """What a program printed last: ``per_second`` of its ``unit`` (``sentences``)."""

    per_second: float
    unit: str


def run_once(path: Path, args: list, threads: int, root: Path = PROGRAMS.parents[1]) -> Rate:
    """The rate of one run of the program at ``path``, with the batchviz of the checkout at
    ``root`` (by default this one)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), PYTHONPATH=os.pathsep.join(
                   [str(root / "examples" / "dynet"), str(root),
                    os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(path)] + args + ["--dynet-autobatch", "1"],
                          capture_output=True, text=True, env=env, cwd=path.parent)
    if done.returncode != 0:
        raise RuntimeError(f"{path.name} failed:\n{done.stderr[-3000:]}")
    found = RATE.findall(done.stdout)
    if not found:
        raise RuntimeError(f"{path.name} printed no rate:\n{done.stdout[-2000:]}")
    return Rate(float(found[-1][0]), found[-1][1])



def run(quick: bool = False, rounds: int | None = None, threads: int = 1) -> dict:
    from . import harness

    rounds = 1 if quick else (rounds or harness.ROUNDS)
    sizes = QUICK if quick else FULL
    with_dynet = dynet_available()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "toydata.py").write_text((PROGRAMS / "toydata.py").read_text())
        for name, args in sizes.items():
            rates, unit = {"batchviz": [], "dynet": []}, "sentences"
            for _ in range(rounds):  # alternating, so that both see the same machine
                mine = run_once(program_path(name, False, folder), args, threads)
                rates["batchviz"].append(mine.per_second)
                unit = mine.unit
                if with_dynet:
                    rates["dynet"].append(
                        run_once(program_path(name, True, folder), args, threads).per_second)
            results[name] = {system: max(r) if r else None for system, r in rates.items()}
            results[name].update(rounds=rates, unit=unit)
    rows = []
    for name, r in results.items():
        ratio = r["batchviz"] / r["dynet"] if r["dynet"] else None
        r["ratio"] = ratio
        rows.append([name, r["unit"], r["batchviz"], r["dynet"] if r["dynet"] else "not installed",
                     f"{ratio:.2f}" if ratio else "-"])
    print(format_table(["program", "counts", "batchviz.dynet per s", "DyNet per s", "ratio"], rows,
                       title=f"DyNet programs, agenda (--dynet-autobatch 1) in both, best of "
                             f"{rounds} alternating runs, {threads} thread(s)"))
    info = machine_info()
    if with_dynet:
        info["dynet"] = _dynet_build()
        print(f"DyNet: {info['dynet']}")
    return {"task": "dynet", "quick": quick, "rounds": rounds, "threads": threads,
            "sizes": sizes, "results": results, "machine": info}


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
