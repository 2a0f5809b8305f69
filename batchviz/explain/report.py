"""The result of ``bv.explain``: numbers as plain fields, rendered three ways.

``str(explanation)`` is the terminal report (coloured with ``rich`` when printing to a
terminal, unless ``NO_COLOR`` is set; plain aligned text otherwise), ``_repr_html_`` the
Jupyter table, ``to_html(path)`` a standalone page, ``to_dict()`` the numbers for scripts.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .html import render_html, standalone_page
from .sources import SplitNote  # noqa: F401  (part of the report: Explanation.split)
from .text import render_text


@dataclass
class StrategyResult:
    name: str
    batches: int
    kernels: int              # one per batch plus one per copy (a gather kernel)
    copies: int               # argument blocks that had to be copied together
    copies_avoided: int       # argument blocks read in place (a view), §3.3
    bytes_copied: int
    estimated_seconds: float  # the cost model's estimate, not a measurement
    above_lower_bound: int    # batches - lower bound
    ran: bool = False         # the numbers of the graph's own runs (else: a dry run)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SignatureRow:
    id: int
    name: str
    op: str
    nodes: int
    min_depth: int
    max_depth: int
    average_depth: float
    chain_bound: int          # its longest dependency chain: at least this many batches
    batches: dict             # strategy name -> batches of this signature
    display_name: str = ""    # its short name (``name`` is the full description)


@dataclass
class BatchNote:
    name: str
    size: int
    step: int


@dataclass
class SmallBatchNote:
    name: str
    nodes: int
    batches: int
    reason: str


@dataclass
class Explanation:
    nodes: int                # scheduled nodes (parameters are done from the start)
    parameters: int
    signatures: int
    lower_bound: int          # no schedule needs fewer batches (see explain/bound.py)
    strategies: dict          # name -> StrategyResult
    reference: str            # the strategy the batch notes below describe
    rows: list                # SignatureRow, the signatures with most nodes
    more_signatures: int      # signatures not in ``rows``
    more_signature_nodes: int
    largest: list             # BatchNote: the reference strategy's largest batches
    small: list               # SmallBatchNote: signatures left in many small batches, and why
    more_small: int
    unbatchable: int          # nodes of unbatchable ops
    verdict: str
    launch_seconds: float     # the cost model's constants
    flops_per_second: float
    flops: float
    seconds: float            # how long explain took
    optimum: object = None    # an Optimum (bv.optimal_schedule's result), where computed
    optimum_note: str = ""    # why there is none
    sources_recorded: bool = False  # the graph recorded its nodes' lines (record_source)
    #: strategy -> SplitNote: the lines whose nodes it split, worst first ("none" splits all)
    split: dict = field(default_factory=dict)
    _arrays: object = field(default=None, repr=False, compare=False)
    _graph: object = field(default=None, repr=False, compare=False)
    _strips: dict = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> dict:
        return {
            "nodes": self.nodes, "parameters": self.parameters, "signatures": self.signatures,
            "lower_bound": self.lower_bound,
            "optimum": None if self.optimum is None else self.optimum.to_dict(schedule=False),
            "strategies": {n: r.to_dict() for n, r in self.strategies.items()},
            "reference": self.reference,
            "top_signatures": [asdict(r) for r in self.rows],
            "largest_batches": [asdict(b) for b in self.largest],
            "small_batches": [asdict(s) for s in self.small],
            "unbatchable": self.unbatchable, "verdict": self.verdict,
            "sources_recorded": self.sources_recorded,
            "split_by_line": {name: [asdict(n) for n in notes]
                              for name, notes in self.split.items()},
            "cost_model": {"launch_seconds": self.launch_seconds,
                           "flops_per_second": self.flops_per_second, "flops": self.flops},
            "explain_seconds": self.seconds,
        }

    def to_text(self, color: bool | None = None, width: int | None = None) -> str:
        """The terminal report; ``color=None`` colours it only when stdout is a terminal
        and ``NO_COLOR`` is not set (and ``rich`` is installed)."""
        return render_text(self, color=color, width=width)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        best = min(self.strategies.values(), key=lambda r: r.kernels)
        return (f"<bv.Explanation nodes={self.nodes} signatures={self.signatures} "
                f"lower_bound={self.lower_bound} best={best.name!r}>")

    def _repr_html_(self) -> str:
        return render_html(self)

    def to_html(self, path=None) -> str:
        """A standalone HTML page of the report; also written to ``path`` when given."""
        page = standalone_page(self)
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(page)
        return page
