"""What every benchmark shares: the machine's description, timing, tables and JSON output.

Benchmarks print tables and ratios measured in one run; absolute times on a small, noisy
machine mean little, ratios between strategies measured side by side mean more.
"""
from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import numpy as np

RESULTS_DIR = Path(__file__).parent / "results"


def results_dir() -> Path:
    """Where full runs save their JSON: ``results/`` on NumPy, ``results/gpu/`` on CuPy, so
    that a GPU run never overwrites the CPU table (and the report never mixes the two)."""
    import batchviz as bv

    return RESULTS_DIR if bv.get_backend() == "numpy" else RESULTS_DIR / "gpu"


def machine_info() -> dict:
    """What the numbers were measured on."""
    info = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
    }
    try:
        import batchviz as bv

        info["backend"] = bv.get_backend()
        info["dtype"] = str(bv.get_dtype())
        info["device"] = bv.backend.device_name()
        if info["backend"] == "cupy":
            info["cupy"] = bv.backend.state.xp.__version__
    except Exception:  # pragma: no cover - benchmarks without batchviz importable
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        info["blas"] = f"{blas.get('name')} {blas.get('version', '')}".strip()
    except Exception:
        pass
    return info


def best_of(fn, repeat: int = 3, warmup: int = 1):
    """Run ``fn`` ``warmup`` times, then ``repeat`` times; return (best seconds, last result).

    The paper reports the fastest of three runs to control for noise; so do we."""
    result = None
    for _ in range(warmup):
        result = fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def format_table(headers: list[str], rows: list[list], title: str | None = None) -> str:
    """A plain aligned text table (numbers right-aligned)."""
    def cell(v):
        if isinstance(v, float):
            return f"{v:,.3g}" if abs(v) < 100 else f"{v:,.0f}"
        return str(v)

    body = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(headers)]
    lines = []
    if title:
        lines.append(title)
    lines.append("  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths))))
    lines.append("  ".join("-" * w for w in widths))
    for row in body:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)


def write_json(path, payload: dict) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    return path
