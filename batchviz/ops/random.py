"""Dropout, reproducible whatever the batching.

A node's mask must not depend on which other nodes share its batch, or the strategies
would give different results. So each node gets its own seed at construction, and the mask
is a counter-based hash of (seed, element index) - computed for the whole batch at once on
the device, with no random-number state and no host transfer.
"""
from __future__ import annotations

import numpy as np

from .. import backend
from .base import Op, register
from ._build import build

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _uniform(xp, seeds, size):
    """``(n, size)`` uniforms in [0, 1) from per-row seeds (splitmix64 finalizer)."""
    z = seeds[:, None] * _GOLDEN + xp.arange(size, dtype=xp.uint64)[None, :]
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(xp.float64) * (1.0 / (1 << 53))


class Dropout(Op):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``
    (inverted dropout)."""

    name = "dropout"

    def infer_shape(self, shapes, attrs):
        return shapes[0]

    def _mask(self, xp, x, attrs):
        n = x.shape[0]
        size = x.size // n
        seeds = backend.to_device_index(np.array([s for _, s in attrs], dtype=np.uint64))
        keep = 1.0 - backend.to_device(np.array([p for p, _ in attrs])).reshape(n, 1)
        mask = (_uniform(xp, seeds, size) < keep) / keep
        return mask.reshape(x.shape).astype(x.dtype)

    def forward(self, xp, ins, attrs, n):
        return ins[0] * self._mask(xp, ins[0], attrs)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * self._mask(xp, ins[0], attrs)]


_DROPOUT = register(Dropout())
_seed_source = np.random.default_rng()


def seed(value: int) -> None:
    """Seed the source of dropout seeds (for reproducible training runs)."""
    global _seed_source
    _seed_source = np.random.default_rng(value)


def dropout(x, p, seed=None):
    """Inverted dropout with drop probability ``p`` in [0, 1). ``seed`` fixes this node's mask."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    node_seed = int(_seed_source.integers(0, 2**63)) if seed is None else int(seed) & (2**64 - 1)
    return build(_DROPOUT, (x,), (float(p), node_seed))


__all__ = ["dropout", "seed"]
