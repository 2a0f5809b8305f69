"""A deliberately simple time model: every kernel launch costs a fixed overhead, every
floating-point operation (and every element copied) a fixed time.

Both constants are measured once on this machine - a tiny NumPy op for the launch overhead,
a large matrix product for the arithmetic rate - and cached on disk, so reports are fast and
stable. The result is an *estimate*, labelled so everywhere: it shows why fewer, larger
batches win (the paper's point), not what a profiler would measure.
"""
from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

_cached: "CostModel | None" = None


@dataclass(frozen=True)
class CostModel:
    launch_seconds: float      # one tiny NumPy call
    flops_per_second: float    # a large matrix product's rate

    def estimate(self, kernels: int, flops: float) -> float:
        return kernels * self.launch_seconds + flops / self.flops_per_second


def cache_file() -> Path:
    """``$BATCHVIZ_CACHE_DIR``, else ``$XDG_CACHE_HOME/batchviz``, else ``~/.cache/batchviz``."""
    base = os.environ.get("BATCHVIZ_CACHE_DIR")
    if base is None:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                            "batchviz")
    return Path(base) / "cost-model.json"


def _machine() -> dict:
    return {"numpy": np.__version__, "machine": platform.machine(), "node": platform.node()}


def calibrate() -> CostModel:
    """Measure the two constants (about 50 ms)."""
    a = np.ones(1, dtype=np.float32)
    out = np.empty_like(a)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(200):
            np.add(a, a, out=out)
        best = min(best, (time.perf_counter() - t0) / 200)
    launch = best
    n = 384
    A = np.ones((n, n), dtype=np.float32)
    B = np.ones((n, n), dtype=np.float32)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        A @ B
        best = min(best, time.perf_counter() - t0)
    rate = 2.0 * n ** 3 / max(best - launch, 1e-9)
    return CostModel(launch_seconds=launch, flops_per_second=rate)


def cost_model() -> CostModel:
    """The calibrated model: from memory, else from the disk cache, else measured now (and
    saved; an unwritable cache directory only means measuring again next time)."""
    global _cached
    if _cached is not None:
        return _cached
    path = cache_file()
    try:
        data = json.loads(path.read_text())
        if data.get("machine") == _machine():
            _cached = CostModel(float(data["launch_seconds"]), float(data["flops_per_second"]))
            return _cached
    except (OSError, ValueError, KeyError, TypeError):
        pass
    _cached = calibrate()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({**asdict(_cached), "machine": _machine()}))
    except OSError:
        pass
    return _cached


def forget_cached_model() -> None:
    """Drop the in-memory model (tests; a new machine)."""
    global _cached
    _cached = None
