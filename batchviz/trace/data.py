"""What a trace holds: plain dataclasses that survive a JSON round trip unchanged.

A :class:`Trace` is the graph's nodes (op, shape, signature, depth, arguments) and one
:class:`Step` per scheduling decision of one strategy: for a graph that ran with that
strategy, the decisions and reads of its runs (``Step.run``), else a dry run
(``Trace.dry_run``). It holds no arrays and no reference to the graph, so it can be saved,
diffed, loaded in another process, and drawn (``bv.render``) or stepped through (the
widgets).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .export import to_networkx
from .timeline import Timeline

#: bump when the dictionary layout changes, so that old files are refused with a clear error
FORMAT_VERSION = 2


@dataclass
class NodeInfo:
    """One node of the graph, as the strategy and the executor saw it."""

    id: int
    op: str
    shape: tuple
    signature: int          # the interned signature integer (App. A)
    signature_name: str     # its readable form, e.g. ``matmul-W#3-7x1``
    depth: int              # longest path from a leaf (parameters and inputs have depth 0)
    args: tuple             # argument node ids, in position order
    source: str | None = None     # ``file:line`` of the user's code (record_source=True)
    parameter: str | None = None  # the parameter's name for parameter nodes (done from the start)

    @property
    def is_parameter(self) -> bool:
        return self.parameter is not None

    def to_dict(self) -> dict:
        return {"id": self.id, "op": self.op, "shape": list(self.shape),
                "signature": self.signature, "signature_name": self.signature_name,
                "depth": self.depth, "args": list(self.args), "source": self.source,
                "parameter": self.parameter}

    @classmethod
    def from_dict(cls, d: dict) -> "NodeInfo":
        return cls(id=d["id"], op=d["op"], shape=tuple(d["shape"]), signature=d["signature"],
                   signature_name=d["signature_name"], depth=d["depth"], args=tuple(d["args"]),
                   source=d.get("source"), parameter=d.get("parameter"))


@dataclass
class SignatureSummary:
    """One signature of the traced graph."""

    id: int
    name: str
    op: str
    cheap: bool           # the agenda's tie-break class: cheap (element-wise) before heavy
    nodes: int            # scheduled nodes with this signature (parameters are not scheduled)
    average_depth: float  # the agenda's priority: average depth of those nodes
    shared: tuple = ()    # argument positions every node of a batch shares (``W`` in ``W @ h``)

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "op": self.op, "cheap": self.cheap,
                "nodes": self.nodes, "average_depth": self.average_depth,
                "shared": list(self.shared)}

    @classmethod
    def from_dict(cls, d: dict) -> "SignatureSummary":
        return cls(id=d["id"], name=d["name"], op=d["op"], cheap=d["cheap"], nodes=d["nodes"],
                   average_depth=d["average_depth"], shared=tuple(d.get("shared", ())))


@dataclass
class AgendaGroup:
    """The agenda nodes of one signature at one step, as the strategy saw them."""

    signature: int
    name: str
    key: tuple        # what the strategy ranks by (the trace's ``key_names``); lowest runs
    size: int         # how many of them are on the agenda now
    note: str = ""    # why this group runs now, or why it waits, in the strategy's words

    def to_dict(self) -> dict:
        return {"signature": self.signature, "name": self.name, "key": list(self.key),
                "size": self.size, "note": self.note}

    @classmethod
    def from_dict(cls, d: dict) -> "AgendaGroup":
        return cls(signature=d["signature"], name=d["name"], key=tuple(d["key"]),
                   size=d["size"], note=d.get("note", ""))


@dataclass
class ArgumentRead:
    """How a batch obtained one argument position (§3.3): the plan's read, in words.

    ``kind`` is ``"shared"`` (one node for the whole batch, e.g. a parameter ``W``),
    ``"view"`` (no copy: the arguments lie back to back in memory, or evenly spaced for a
    kernel with a batch axis or as scalars) or ``"copy"`` (a copy kernel moved them into
    one block); ``read`` names the plan's read exactly (``View``, ``Strided``, ``Copy``,
    ``Concat``, ``CopyFromArenas``, ``Stack``, ``Shared``: :mod:`batchviz.plan.reads`) and
    ``detail`` says more. ``positions``: how many argument positions, from ``position`` on,
    the read covers: 1, or all of them for an op that reads its arguments with one gather
    (``Op.one_gather``, e.g. ``esum``)."""

    position: int
    kind: str
    bytes_copied: int = 0
    detail: str = ""
    positions: int = 1
    read: str = ""

    def to_dict(self) -> dict:
        return {"position": self.position, "kind": self.kind,
                "bytes_copied": self.bytes_copied, "detail": self.detail,
                "positions": self.positions, "read": self.read}

    @classmethod
    def from_dict(cls, d: dict) -> "ArgumentRead":
        return cls(**d)


@dataclass
class Step:
    """One scheduling decision: the agenda, the signature chosen and why, the batch run."""

    index: int
    agenda: list            # list[AgendaGroup], in the strategy's order (lowest key first)
    signature: int          # the signature of the batch
    signature_name: str
    reason: str             # why this signature, in words
    batch: list             # node ids computed by this step, in batch order
    done: int               # scheduled nodes computed before this step
    on_agenda: int          # nodes whose arguments are all computed (this batch included)
    waiting: int            # nodes still waiting for an argument
    arguments: list = field(default_factory=list)  # list[ArgumentRead], by position
    run: int | None = None  # the graph's forward run that ran it; None: a dry run

    @property
    def copies(self) -> int:
        return sum(1 for a in self.arguments if a.kind == "copy")

    @property
    def bytes_copied(self) -> int:
        return sum(a.bytes_copied for a in self.arguments)

    @property
    def kernels(self) -> int:
        """Kernel launches of this step: the batch's own kernel plus one per copy."""
        return 1 + self.copies

    def to_dict(self) -> dict:
        return {"index": self.index, "agenda": [g.to_dict() for g in self.agenda],
                "signature": self.signature, "signature_name": self.signature_name,
                "reason": self.reason, "batch": list(self.batch), "done": self.done,
                "on_agenda": self.on_agenda, "waiting": self.waiting,
                "arguments": [a.to_dict() for a in self.arguments], "run": self.run}

    @classmethod
    def from_dict(cls, d: dict) -> "Step":
        return cls(index=d["index"], agenda=[AgendaGroup.from_dict(g) for g in d["agenda"]],
                   signature=d["signature"], signature_name=d["signature_name"],
                   reason=d["reason"], batch=list(d["batch"]), done=d["done"],
                   on_agenda=d["on_agenda"], waiting=d["waiting"],
                   arguments=[ArgumentRead.from_dict(a) for a in d["arguments"]],
                   run=d.get("run"))


@dataclass
class Trace:
    """The graph snapshot and every scheduling decision of one strategy on it.

    Build one with ``bv.trace(loss, strategy=...)``. ``trace.batches`` is the schedule,
    ``trace.steps[k]`` the k-th decision, ``trace.to_networkx()`` the graph for networkx's
    algorithms, ``bv.render(trace, step=k)`` the picture."""

    strategy: str
    nodes: list          # list[NodeInfo], indexed by node id
    signatures: list     # list[SignatureSummary] of the scheduled nodes, by signature id
    steps: list          # list[Step], in execution order
    loss: int | None = None   # the node the trace was asked for
    itemsize: int = 4         # bytes per element of the graph's dtype (for bytes copied)
    key_names: tuple = ()     # the columns of the strategy's key (AgendaGroup.key)
    #: ``{signature: short name}`` for tables and pictures (:mod:`batchviz.signature_names`)
    display_names: dict = field(default_factory=dict)
    _timeline: object = field(default=None, init=False, repr=False, compare=False)
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # pictures

    # --- the schedule and its totals ------------------------------------------------------
    @property
    def batches(self) -> list:
        """The schedule: batches of node ids, in execution order."""
        return [step.batch for step in self.steps]

    @property
    def copies(self) -> int:
        return sum(step.copies for step in self.steps)

    @property
    def copies_avoided(self) -> int:
        return sum(1 for step in self.steps for a in step.arguments if a.kind == "view")

    @property
    def bytes_copied(self) -> int:
        return sum(step.bytes_copied for step in self.steps)

    @property
    def kernels(self) -> int:
        return sum(step.kernels for step in self.steps)

    @property
    def scheduled_nodes(self) -> int:
        return sum(1 for n in self.nodes if not n.is_parameter)

    def signature(self, sig: int) -> SignatureSummary:
        for s in self.signatures:
            if s.id == sig:
                return s
        raise KeyError(f"signature {sig} does not occur among the scheduled nodes of this trace")

    def display_name(self, sig: int) -> str:
        """The signature's short name (``matmul·W``); its full description is
        ``signature_name`` on the trace's nodes and steps."""
        name = self.display_names.get(sig)
        if name is None:
            name = next(n.signature_name for n in self.nodes if n.signature == sig)
        return name

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def dry_run(self) -> bool:
        """Whether no step of this trace ran: the strategy's schedule of a graph that did not
        run with it (another strategy's, or a graph not run yet), planned from scratch."""
        return all(step.run is None for step in self.steps)

    @property
    def runs(self) -> int:
        """How many forward runs of the graph the trace's steps come from (0: a dry run)."""
        return len({step.run for step in self.steps if step.run is not None})

    @property
    def label(self) -> str:
        """``"as it ran"`` or ``"dry run"``: the short form of :attr:`provenance`."""
        return "dry run" if self.dry_run else "as it ran"

    @property
    def provenance(self) -> str:
        """In words: what the trace shows, the run or a dry run, for titles and reports."""
        if self.dry_run:
            return "dry run: the schedule it would make, planned from scratch"
        dry = sum(1 for step in self.steps if step.run is None)
        runs = "its run" if self.runs == 1 else f"its {self.runs} runs"
        return f"as the graph ran ({runs})" + (f"; the last {dry} steps not run yet (dry run)"
                                               if dry else "")

    def __repr__(self) -> str:
        return (f"<bv.Trace strategy={self.strategy!r} ({self.label}) nodes={len(self.nodes)} "
                f"steps={len(self.steps)} copies={self.copies}>")

    # --- node states per step (shared with the renderer and the widgets) -------------------
    def timeline(self):
        """When each node joins the agenda and when it runs (computed once, cached)."""
        if self._timeline is None:
            self._timeline = Timeline(self)
        return self._timeline

    def states(self, step: int) -> list:
        """Per node id: ``"done"``, ``"batch"`` (run by this step), ``"agenda"`` or
        ``"waiting"`` just before step ``step`` runs (``step == len(trace)``: all done)."""
        return self.timeline().states(step)

    # --- export ------------------------------------------------------------------------
    def to_networkx(self):
        """A ``networkx.DiGraph`` with an edge from every argument to its user; nodes carry
        ``op``, ``signature``, ``signature_name``, ``depth``, ``shape`` and ``parameter``."""
        return to_networkx(self)

    def to_dict(self) -> dict:
        return {"format": FORMAT_VERSION, "strategy": self.strategy, "loss": self.loss,
                "itemsize": self.itemsize, "key_names": list(self.key_names),
                "display_names": {str(s): n for s, n in self.display_names.items()},
                "nodes": [n.to_dict() for n in self.nodes],
                "signatures": [s.to_dict() for s in self.signatures],
                "steps": [s.to_dict() for s in self.steps]}

    @classmethod
    def from_dict(cls, d: dict) -> "Trace":
        if not isinstance(d, dict) or "steps" not in d or "nodes" not in d:
            raise ValueError("not a batchviz trace: expected a dict with 'nodes' and 'steps'")
        if d.get("format") != FORMAT_VERSION:
            raise ValueError(f"trace format {d.get('format')!r} is not supported "
                             f"(this batchviz reads format {FORMAT_VERSION})")
        return cls(strategy=d["strategy"], loss=d.get("loss"), itemsize=d.get("itemsize", 4),
                   key_names=tuple(d.get("key_names", ())),
                   display_names={int(s): n for s, n in d.get("display_names", {}).items()},
                   nodes=[NodeInfo.from_dict(n) for n in d["nodes"]],
                   signatures=[SignatureSummary.from_dict(s) for s in d["signatures"]],
                   steps=[Step.from_dict(s) for s in d["steps"]])

    def to_json(self, path=None, indent: int | None = None) -> str:
        """The trace as JSON text; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent)
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return text

    @classmethod
    def from_json(cls, text_or_path) -> "Trace":
        """Load a trace from JSON text or from a file path."""
        text = str(text_or_path)
        if not text.lstrip().startswith("{"):
            with open(text_or_path, encoding="utf-8") as f:
                text = f.read()
        return cls.from_dict(json.loads(text))
