"""Layout batching: the lookahead's batches, laid out in memory the way they will be read.

A schedule answers two questions. *Which nodes run together?* - that decides the number of
batches, and the lookahead's rule (:mod:`batchviz.schedule.lookahead`) answers it with the
fewest possible on the models we batch: it meets the lower bound. *In what order?* - the
order of the batches, and of the nodes inside each batch. That second answer looks like a
detail, but it is the memory layout: every batch's outputs go into one segment of the
arena, batch after batch, nodes in batch order (§3.3, :mod:`batchviz.plan.layout`). A later
batch whose arguments at one position lie back to back there, in its own node order, reads
them as a *view*; anywhere else they are *copied* into a fresh block first (a gather
forward, a scatter backward). The lookahead, which lists its nodes in the order they became
ready, pays for its fewer batches with twice the agenda's copies on a BiLSTM.

The layout policy keeps the lookahead's batches and chooses the order, in a second pass
that walks the schedule *backwards*, from the last batch to the first:

* **nodes in the order they are read.** When a batch is laid out, every batch that reads
  it has been laid out already. So its nodes are sorted by where they are read *first*:
  the batch that reads them (earliest first), then the argument position, then the place
  of the reading node in that batch. The readers at one position of one later batch then
  find their arguments back to back, in their own order - a view - and so do the readers
  at the other positions, since they are sorted the same way (their arguments are
  *aligned*: the ``i``-th reader's ``h`` and ``c`` sit at the ``i``-th place of both).
* **batches just before their readers.** Batches are placed from the end, each as late
  as its readers allow: the next one placed (i.e. the one right before those placed so
  far) is, among the batches whose readers are all placed, the one whose first read comes
  last. Batches that one later batch reads together then sit side by side, in the order
  it reads them - the 8 gate transforms of a naive LSTM step, which one ``logistic`` batch
  and one ``tanh`` batch read, become one view each. Batches of one signature keep their
  order (the first, the second, ... batch of a signature, as the lookahead counts them).

Then one pass forward, from the first batch to the last, for the batches that *gather*:

* **a gatherer follows its arguments, where they are heavier.** The output layer of a
  Tree-LSTM reads the ``h`` of every LSTM step, from a batch per level. Those batches are
  laid out for their first readers, the parents' steps, so the output layer, laid out for
  its own reader, copies all of ``h``. A batch that gathers at one position from several
  batches more elements than later batches read of it (:func:`followers`) is laid out
  instead in the order its arguments there lie, when they take one range of the schedule
  (consecutive batches: back to back in the arena, LSTM steps included, whose values a
  run of batches keeps together, :mod:`batchviz.plan.layout`). It reads them as one view;
  its readers copy its outputs, the lighter side (5 scores per node instead of 256
  values on the Tree-LSTM).

This reorders nothing a node depends on: a batch is placed only after all batches that
read it, so every argument still runs first, and the batches themselves, the sets of
nodes, are the lookahead's. (One shortcut: on a view of a few hundred nodes - a parser
runs forward at every step - the agenda's batches are taken when they are one batch per
signature, since no schedule has fewer, and the agenda costs half as much as the
lookahead's look down the graph.)

The traces show the result: the strategy runs its plan on the agenda
(:class:`PlannedLayout`), and each step says whether the batch was *safe* (cost no batch
beyond the bound) and which batch reads it first, or which argument it follows.

What it cannot avoid: a batch that merges nodes reading different producers at one
position (a naive LSTM's ``f*c`` and ``i*u`` in one ``cmult`` batch: ``c`` comes from the
previous step, ``u`` from this one) copies there, since the producers are separate batches
that cannot be adjacent; the agenda, running them as two batches, reads two views. And a
node read by several batches in different orders is laid out for its first reader
(or, when it follows its arguments, copied by all of them).

Related work: ED-Batch (Chen et al., ICML 2023) learns the batching policy as a finite
state machine by reinforcement learning and plans memory with PQ-trees, which find an
order satisfying a set of "these must be adjacent" constraints. Here the batching rule is
the lookahead's, and the order constraints come one reader at a time, from the last
reader backwards, which needs no search: a sort per batch.

Cost: the backward walk (:mod:`batchviz.schedule.walk`) is one sort per batch plus one
visit per argument edge.
"""
from __future__ import annotations

from .agenda import AgendaBatching, AgendaStrategy, run_agenda
from .decisions import Rule
from .lookahead import LookaheadBatching, SafeFirst, SignatureLevels
from .walk import followers, lay_out, walk_backward  # noqa: F401  (the layout's walk)


def one_batch_per_signature(signatures: list) -> bool:
    """Whether a schedule whose batches have these ``signatures`` runs each signature in one
    batch: then no schedule has fewer batches (each signature needs at least one)."""
    return len(set(signatures)) == len(signatures)


class PlannedLayout(Rule):
    """The layout policy's plan, run on the agenda: at each step the plan's next batch. The
    key says when the plan runs each group on the agenda (its next batch there) and whether
    that batch is *safe* (the lookahead's test: no node due in it still waits, so it costs
    no batch beyond the bound); the words say which batch reads it first."""

    key_names = ("planned batch", "safe")

    def __init__(self, batches: list, view, safety: SafeFirst, follows: dict | None = None):
        self.batches, self.signature, self.safety = batches, view.signature, safety
        self.follows = follows or {}  # batch -> the argument position it follows
        self.step = 0
        self.upcoming: dict = {}  # signature -> its batches' indices in the plan, in order
        for k, batch in enumerate(batches):
            self.upcoming.setdefault(self.signature[batch[0]], []).append(k)
        self.first_reader = first_readers(view, batches)

    def choose(self, agenda) -> int:
        return self.signature[self.batches[self.step][0]]

    def nodes(self, signature, agenda):
        return self.batches[self.step]

    def key(self, signature, agenda) -> tuple:
        return (self.next_batch(signature), "yes" if self.safety.safe(signature) else "no")

    def next_batch(self, signature) -> int:
        upcoming = self.upcoming[signature]
        return upcoming[self.safety.runs[signature]]

    def ran(self, signature, batch, ready) -> None:
        self.safety.ran(signature, batch, ready)
        self.step += 1

    def reason(self, chosen, other_keys) -> str:
        safe = ("safe" if chosen.key[1] == "yes"
                else "not safe (no group was: this batch is one beyond the bound)")
        return f"planned now, {safe}; {self.read_by(chosen.key[0])}"

    def waits(self, candidate, chosen) -> str:
        k = candidate.key[0]
        if candidate.key[1] == "no":
            return (f"waits: not safe (nodes due in its next batch still wait for "
                    f"arguments); planned as batch {k}")
        return f"waits: planned as batch {k}, {self.read_by(k)}"

    def read_by(self, k: int) -> str:
        if k in self.follows:
            return (f"laid out in the order of its argument {self.follows[k]}, which it "
                    f"gathers from several batches: that weighs more than what later "
                    f"batches read of it")
        reader = self.first_reader[k]
        if reader < 0:
            return "its outputs are not read by a later batch"
        return f"laid out for batch {reader}, which reads it first"


def first_readers(view, batches: list) -> list:
    """Per batch, the index of the first batch that reads one of its nodes, or -1."""
    batch_of = {node: k for k, batch in enumerate(batches) for node in batch}
    first = [-1] * len(batches)
    for k, batch in enumerate(batches):
        for node in batch:
            for a in view.pending_args(node):
                producer = batch_of[a]
                if first[producer] < 0:
                    first[producer] = k
    return first


class LayoutBatching(AgendaStrategy):
    """The lookahead's batches, laid out for their readers: each batch's nodes in the order
    they are read first, each batch as late as its readers allow (the module
    ``batchviz.schedule.layout`` and the concept page "Laying out batches for their
    readers" explain why)."""

    name = "layout"
    trusted = True

    def __init__(self):
        self.batching = LookaheadBatching()
        self.agenda = AgendaBatching()

    #: on a view of fewer nodes than this, the agenda's batches are taken when they are one
    #: batch per signature (see :meth:`batches`)
    AGENDA_FIRST_BELOW = 2000

    def schedule(self, view):
        if view.decisions is not None:  # a trace: run the plan on the agenda, recording it
            return run_agenda(view, self.rule(view), view.decisions)
        return lay_out(view, self.batches(view))

    def batches(self, view) -> list:
        """Which nodes run together: the lookahead's batches; or, on a view of fewer than
        :data:`AGENDA_FIRST_BELOW` nodes, the agenda's when they are one batch per
        signature - no schedule has fewer, and the agenda costs less than the lookahead's
        look down the graph (a parser runs forward at every step on a few hundred nodes)."""
        if view.end - view.start < self.AGENDA_FIRST_BELOW:
            batches = run_agenda(view, self.agenda.rule(view))  # (never recorded)
            if one_batch_per_signature([view.signature[b[0]] for b in batches]):
                return batches
        return run_agenda(view, self.batching.rule(view))

    def rule(self, view) -> Rule:
        """The plan, run on the agenda for a trace: the same batches and walk as
        :meth:`schedule`, which also says which batches follow their arguments."""
        walk = walk_backward(view, self.batches(view))
        safety = SafeFirst(SignatureLevels(view), view, AgendaBatching().priority(view))
        return PlannedLayout(walk.placed, view, safety, walk.follows)
