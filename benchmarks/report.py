"""The results writer: ``benchmarks/results/*.json`` -> a Markdown table and a plot.

Every task saves ``results/<task>.json`` after a full run (``results/gpu/<task>.json`` on
CuPy). This task gathers the current backend's files into ``benchmarks.md`` (sentences/s,
speed-up over no batching, efficiency, batches and their lower bound, bytes copied and
kernels per minibatch, next to the paper's CPU or GPU numbers) and ``benchmarks.png``
(sentences/s per task and strategy), which the docs and notebooks reuse.
"""
from __future__ import annotations

import json
from pathlib import Path

from batchviz.words import bytes_text

from .common import results_dir

TASK_ORDER = ("synthetic", "bilstm", "bilstm-char", "treelstm", "parser")
TASK_TITLES = {"synthetic": "Synthetic BiLSTM (§4.1)", "bilstm": "BiLSTM", "bilstm-char": "BiLSTM w/char",
               "treelstm": "Tree-LSTM", "parser": "Transition parser"}
#: the paper's CPU numbers (sentences/s): Figure 2 / §4.1 and Table 1
PAPER_CPU = {
    "synthetic": {"none": 5.17, "agenda": 59.3},
    "bilstm": {"none": 16.8, "depth": 139, "agenda": 156},
    "bilstm-char": {"none": 15.7, "depth": 93.8, "agenda": 132},
    "treelstm": {"none": 50.2, "depth": 348, "agenda": 357},
    "parser": {"none": 16.8, "depth": 61.0, "agenda": 61.2},
}
#: the paper's GPU numbers (a Tesla K80): §4.1 and Table 1
PAPER_GPU = {
    "synthetic": {"none": 18.3, "agenda": 198},
    "bilstm": {"none": 56.2, "depth": 337, "agenda": 367},
    "bilstm-char": {"none": 43.2, "depth": 183, "agenda": 275},
    "treelstm": {"none": 76.5, "depth": 672, "agenda": 661},
    "parser": {"none": 33.0, "depth": 89.5, "agenda": 90.1},
}

#: DyNet's C++ implementation on the machine the targets were set on (sentences/s)
DYNET_CPP = {
    "synthetic": {"none": 46, "depth": 90, "agenda": 92, "manual+none": 120},
    "treelstm": {"none": 209, "depth": 392, "agenda": 418},
}
MODE_ORDER = ("none", "depth", "agenda", "lookahead", "layout", "manual+none", "manual+depth",
              "manual+agenda")


def ordered_modes(modes: dict) -> list:
    return sorted(modes, key=lambda m: (MODE_ORDER.index(m) if m in MODE_ORDER else len(MODE_ORDER), m))


def load_results(directory: Path | None = None) -> dict:
    """``{task: payload}`` for every task result file found (full runs only)."""
    directory = results_dir() if directory is None else directory
    found = {}
    for task in TASK_ORDER:
        path = Path(directory) / f"{task}.json"
        if path.exists():
            found[task] = json.loads(path.read_text())
    return found


def markdown_table(results: dict) -> str:
    """One row per task and mode."""
    gpu = any(p["machine"].get("backend") == "cupy" for p in results.values())
    paper_numbers = PAPER_GPU if gpu else PAPER_CPU
    lines = [f"| task | mode | sent/s | vs none | efficiency | batches | lower bound | bytes copied "
             f"| kernels | paper {'GPU' if gpu else 'CPU'} | DyNet C++ (CPU) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for task, payload in results.items():
        modes = payload["results"]
        none = modes.get("none", {}).get("sentences_per_s")
        for mode in ordered_modes(modes):
            r = modes[mode]
            speedup = f"{r['sentences_per_s'] / none:.1f}x" if none else ""
            paper = paper_numbers.get(task, {}).get(mode, "")
            dynet = DYNET_CPP.get(task, {}).get(mode, "")
            copied = bytes_text(r["bytes_copied"]) if "bytes_copied" in r else ""
            lines.append(f"| {TASK_TITLES.get(task, task)} | {mode} | {r['sentences_per_s']:.1f} | "
                         f"{speedup} | {r['efficiency']:.3f} | {r['batches_per_minibatch']} | "
                         f"{r.get('lower_bound', '')} | {copied} | {r['kernels']} | {paper} | "
                         f"{dynet} |")
    return "\n".join(lines)


def machine_line(results: dict) -> str:
    for payload in results.values():
        m = payload["machine"]
        return (f"{m.get('cpus')} CPUs ({m.get('processor')}), {m.get('platform')}, Python "
                f"{m.get('python')}, NumPy {m.get('numpy')} ({m.get('blas', '?')}), backend "
                f"{m.get('backend')} {m.get('dtype')} on {m.get('device', 'cpu')}")
    return "no results"


def plot(results: dict, path: Path) -> Path | None:
    """Grouped bars of sentences/s (log scale) per task and mode; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'batchviz[bench]'): no plot")
        return None
    modes = []
    for payload in results.values():
        modes += [m for m in ordered_modes(payload["results"]) if m not in modes]
    tasks = list(results)
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(tasks) + 2), 4))
    width = 0.8 / max(len(modes), 1)
    for k, mode in enumerate(modes):
        xs = [i + (k - (len(modes) - 1) / 2) * width for i in range(len(tasks))]
        ys = [results[t]["results"].get(mode, {}).get("sentences_per_s", 0) for t in tasks]
        ax.bar(xs, ys, width, label=mode)
    ax.set_xticks(range(len(tasks)))
    ax.set_xticklabels([TASK_TITLES.get(t, t) for t in tasks], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("sentences (trees) / s, training")
    ax.legend(fontsize=7, ncol=2)
    device = next(iter(results.values()))["machine"].get("device", "cpu")
    ax.set_title("batchviz training throughput by batching strategy"
                 + ("" if device == "cpu" else f"\n{device}, CuPy"), fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def run(quick: bool = False, directory: Path | None = None) -> dict:
    """Write ``benchmarks.md`` and ``benchmarks.png`` next to the JSON results (a quick run
    prints the table and leaves the files alone)."""
    directory = results_dir() if directory is None else directory
    results = load_results(directory)
    if not results:
        print(f"no results in {directory}; run `python -m benchmarks all` first")
        return {"task": "report", "tasks": []}
    table = markdown_table(results)
    text = (f"# batchviz benchmark results\n\nMachine: {machine_line(results)}\n\n{table}\n\n"
            "Efficiency = model training FLOP/s / the backend's float32 GEMM FLOP/s at the model's "
            "shapes (64 columns).\n")
    print(text)
    payload = {"task": "report", "tasks": list(results), "markdown": table}
    if not quick:
        md = Path(directory) / "benchmarks.md"
        md.write_text(text)
        png = plot(results, Path(directory) / "benchmarks.png")
        print(f"wrote {md}" + (f" and {png}" if png else ""))
        payload["files"] = [str(md)] + ([str(png)] if png else [])
    return payload
