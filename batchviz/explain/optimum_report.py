"""The result of ``bv.optimal_schedule``: the schedule, its count, and how sure we are.

``str(result)`` is a short terminal report, ``_repr_html_`` a small Jupyter table,
``to_dict()`` the numbers (and the schedule) for scripts.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from ..words import counted


@dataclass
class Optimum:
    batches: list             # the best schedule found: batches of node ids, in execution order
    lower_bound: int          # proven: no schedule of these nodes has fewer batches
    chain_bound: int          # per signature its longest dependency chain, summed (bv.explain's)
    proven: bool              # ``batches`` is optimal (then ``count == lower_bound``)
    seconds: float            # how long the solver searched (0 where a strategy met the bound)
    time_limit: float
    strategies: dict          # strategy name -> its number of batches (the starting points)
    found_by: str             # who found ``batches``: a strategy's name, or "CP-SAT"
    nodes: int
    proof: str = ""           # why ``batches`` is optimal, when it is
    solved: bool = False      # the solver ran (else a strategy met the lower bound)
    note: str = ""            # why the solver could not search, when the time ran out first

    @property
    def count(self) -> int:
        return len(self.batches)

    @property
    def status(self) -> str:
        """``"optimal"``, or ``"not proven within N s"``."""
        return "optimal" if self.proven else f"not proven within {self.time_limit:g} s"

    def summary(self) -> str:
        """One line: the optimum (or the range it lies in) and why."""
        if self.proven:
            took = f"; {_seconds(self.seconds)}" if self.solved else ""
            return f"optimum: {counted(self.count, 'batch')} (optimal: {self.proof}{took})"
        note = f"; {self.note}" if self.note else ""
        return (f"optimum: between {self.lower_bound} and {counted(self.count, 'batch')} "
                f"({self.status}; the best schedule found is {self.found_by}'s, a "
                f"time-limited best that another run may better{note})")

    def strategy_line(self) -> str:
        ranked = sorted(self.strategies.items(), key=lambda kv: kv[1])
        return "strategies: " + ", ".join(f"{name} {n}" for name, n in ranked)

    def __str__(self) -> str:
        return "\n".join([
            self.summary(),
            f"lower bound: {counted(self.chain_bound, 'batch')} (per signature its longest "
            "dependency chain, summed over signatures)",
            self.strategy_line()])

    def __repr__(self) -> str:
        return (f"<bv.Optimum batches={self.count} lower_bound={self.lower_bound} "
                f"status={self.status!r}>")

    def _repr_html_(self) -> str:
        rows = [("optimum" if self.proven else "best found", self.count),
                ("proven lower bound", self.lower_bound),
                ("lower bound (longest chains)", self.chain_bound)]
        rows += [(f"strategy {name}", n) for name, n in sorted(self.strategies.items(),
                                                                key=lambda kv: kv[1])]
        body = "".join(f"<tr><td>{escape(label)}</td><td>{n}</td></tr>" for label, n in rows)
        return (f"<div class='bv-optimum'><p><b>{escape(self.summary())}</b></p>"
                f"<table>{body}</table></div>")

    def to_dict(self, schedule: bool = True) -> dict:
        """The numbers, and with ``schedule`` the batches (lists of node ids)."""
        d = {"batches": self.count, "lower_bound": self.lower_bound,
             "chain_bound": self.chain_bound, "status": self.status, "proven": self.proven,
             "proof": self.proof, "found_by": self.found_by, "solved": self.solved,
             "seconds": self.seconds, "time_limit": self.time_limit,
             "strategies": dict(self.strategies), "nodes": self.nodes, "note": self.note}
        if schedule:
            d["schedule"] = [list(b) for b in self.batches]
        return d


def _seconds(s: float) -> str:
    return f"solved in {s * 1e3:.0f} ms" if s < 1 else f"solved in {s:.1f} s"
