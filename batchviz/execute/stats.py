"""Counters the executor keeps for every run: what the introspection layer reports."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..words import counted


@dataclass
class PassStats:
    """One forward or backward pass over a schedule."""

    nodes: int = 0
    batches: int = 0           # compute kernels: one per batch
    copies: int = 0            # gathers that had to copy arguments into a contiguous block
    copies_avoided: int = 0    # arguments already consecutive in memory: read as a view
    bytes_copied: int = 0
    seconds: float = 0.0
    schedule_seconds: float = 0.0
    plan_seconds: float = 0.0
    host_to_device: int = 0    # index/data uploads (CuPy only; inputs and gather indices)
    device_to_host: int = 0    # must stay 0: nothing inside a pass reads values back

    @property
    def kernels(self) -> int:
        """Kernel launches: one per batch plus one per gather copy."""
        return self.batches + self.copies

    def to_dict(self) -> dict:
        d = asdict(self)
        d["kernels"] = self.kernels
        return d


@dataclass
class RunStats:
    """The latest forward and backward passes of one graph."""

    strategy: str
    forward: PassStats = field(default_factory=PassStats)
    backward: PassStats = field(default_factory=PassStats)

    def to_dict(self) -> dict:
        return {"strategy": self.strategy, "forward": self.forward.to_dict(),
                "backward": self.backward.to_dict()}

    def __str__(self) -> str:
        f, b = self.forward, self.backward
        return (f"strategy {self.strategy}: forward {counted(f.nodes, 'node')} in "
                f"{counted(f.batches, 'batch')}, {counted(f.copies, 'copy')} "
                f"({counted(f.bytes_copied, 'byte')}), {f.copies_avoided} avoided; "
                f"backward {counted(b.batches, 'batch')}, {counted(b.copies, 'scatter')}")


_last: RunStats | None = None


def last_run_stats() -> RunStats | None:
    """Counters of the most recent run (forward and backward) of any graph."""
    return _last


def set_last(stats: RunStats) -> None:
    global _last
    _last = stats
