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

Cost: the backward walk is one sort per batch plus one visit per argument edge.
"""
from __future__ import annotations

import heapq
from array import array

from ..signature import size_of
from .agenda import AgendaBatching, AgendaStrategy, run_agenda
from .decisions import Rule
from .lookahead import LookaheadBatching, SafeFirst, SignatureLevels


def lay_out(view, batches: list) -> list:
    """``batches`` (a valid schedule of ``view``) laid out for their readers: the same
    batches, reordered, each with its nodes sorted by their first read, or by where their
    arguments lie for the batches that follow their arguments (see the module docstring)."""
    return walk_backward(view, batches).placed


def walk_backward(view, batches: list) -> "_Walk":
    """The backward walk over ``batches``, done: ``.placed``, the batches laid out;
    ``.follows``, per slot of a batch that follows its arguments, the position it follows
    (what a trace says about each batch)."""
    walk = _Walk(view, batches)
    for slot in range(len(batches) - 1, -1, -1):
        walk.place(slot)
    walk.follow_arguments()
    return walk


def batch_index(batches: list, start: int, n: int) -> array:
    """Per local id (node id - ``start``) of ``n`` nodes: the index of its batch in
    ``batches``, or -1 (a parameter, not scheduled)."""
    batch_of = array("q", [-1]) * n
    number_batches(batches, start, batch_of)
    return batch_of


def number_batches(batches: list, start: int, batch_of: array) -> None:
    """Write into ``batch_of`` (by local id) the index of each node's batch."""
    for k in range(len(batches)):
        for node in batches[k]:
            batch_of[node - start] = k


def count_up(values: array, first: int) -> None:
    """Set ``values`` to ``first, first + 1, ...``."""
    for k in range(len(values)):
        values[k] = first + k


def followers(view, batches: list) -> dict:
    """``{batch: position}``: the batches that may be laid out in the order of their
    arguments at ``position`` rather than for their readers (the walk decides after laying
    the batches out: when those arguments take one range of the laid-out schedule).

    A batch *gathers* at a position when its arguments there come from several batches
    (the output layer of a Tree-LSTM reads the ``h`` of every level's LSTM step). Laid out
    for its readers, its nodes are in an order that those batches, laid out for their own
    first readers, do not share: the gather is a copy. Sorted instead by where its
    arguments lie, it reads them as one view when they are back to back, and its readers
    copy instead. That is the cheaper side when what it gathers at its heaviest such
    position weighs more (in elements) than everything later batches read of it. (Batches
    that read all their arguments node after node, ``Op.one_gather``, never follow.)"""
    start = view.start
    batch_of = batch_index(batches, start, view.end - start)
    together = node_major_signatures(view)
    node_major = [view.signature[batch[0]] in together for batch in batches]
    return gatherers(view, batches, batch_of, node_major)


def gatherers(view, batches: list, batch_of: array, node_major: list) -> dict:
    """:func:`followers`, given each node's batch (``batch_of``, by local id) and whether
    each batch reads node after node (``node_major``). The elements are counted only for
    the positions that gather from several batches, and for their batches."""
    start, args, shapes = view.start, view.args, view.graph.shapes
    _, user_start, _ = view.dependencies()
    sizes: dict = {}  # shape -> its number of elements
    follows: dict = {}
    for k in range(len(batches)):
        if node_major[k]:
            continue
        batch = batches[k]
        heaviest = 0  # the weight at the position chosen so far
        read_weight = -1  # elements later batches read of batch k (counted when needed)
        for position in range(len(args[batch[0]])):  # (a signature's nodes: one arity)
            if not from_several(batch, position, args, batch_of, start):
                continue
            weight = 0
            for node in batch:
                a = args[node][position]
                if a >= start and batch_of[a - start] >= 0:  # (not a parameter, not done)
                    weight += elements(shapes[a], sizes)
            if read_weight < 0:
                read_weight = 0
                for node in batch:  # its size times its number of reads
                    read_weight += elements(shapes[node], sizes) * (
                        user_start[node - start + 1] - user_start[node - start])
            if weight > read_weight and weight > heaviest:
                follows[k], heaviest = position, weight
    return follows


def elements(shape: tuple, sizes: dict) -> int:
    """The number of elements of ``shape``, remembered in ``sizes``."""
    size = sizes.get(shape)
    if size is None:
        size = sizes[shape] = size_of(shape)
    return size


def from_several(batch: list, position: int, args: list, batch_of: array, start: int) -> bool:
    """Whether the arguments of ``batch`` at ``position`` that are computed in the schedule
    come from more than one batch."""
    first = -1  # the batch of the first of them
    for node in batch:
        a = args[node][position]
        if a >= start and batch_of[a - start] >= 0:
            if first < 0:
                first = batch_of[a - start]
            elif batch_of[a - start] != first:
                return True
    return False


class _Walk:
    """The backward walk's state. Per-node arrays are indexed by local id,
    ``node - view.start``.

    A read (of an argument, by a node of a placed batch) is one int, which orders reads as
    the tuple (slot of the reader, position, place of the reader in its batch) does - (slot,
    place, position) for a batch that reads node after node: ``slot * P * M + position * M
    + place``, where ``M`` is more than any place or local id, ``P`` more than any
    position."""

    def __init__(self, view, batches: list):
        self.batches, self.args, self.start = batches, view.args, view.start
        n = view.end - view.start
        self.batch_of = batch_index(batches, self.start, n)
        together = node_major_signatures(view)
        self.node_major = [view.signature[batch[0]] in together for batch in batches]
        # a batch can be placed once every read of its nodes is placed, and the next batch
        # of its signature (batches of one signature keep their order)
        self.unplaced = array("q", bytes(8 * len(batches)))
        self.M, self.P = max(n, 1), 1 + self.count_reads()
        if (len(batches) + 1) * self.P * self.M >= 1 << 62:
            raise OverflowError("too many batches, positions and nodes for the reads' codes")
        self.previous = previous_of_signature([view.signature[b[0]] for b in batches])
        for k in self.previous:
            if k >= 0:
                self.unplaced[k] += 1
        # per node, its first read placed so far; nodes never read come after every read,
        # in creation order
        self.first_read = array("q", bytes(8 * n))
        count_up(self.first_read, len(batches) * self.P * self.M)
        self.available: list = []  # per batch (its first read negated, k): the last on top
        for k in range(len(batches)):
            if self.unplaced[k] == 0:
                self.make_available(k)
        self.placed: list = [None] * len(batches)
        # batch -> the position it may follow
        self.may_follow = gatherers(view, batches, self.batch_of, self.node_major)
        self.follows: dict = {}  # slot -> the position its batch follows (follow_arguments)
        self.slot_of = [-1] * len(batches)

    def count_reads(self) -> int:
        """``unplaced[k]``: the reads of batch ``k``'s nodes by the schedule's batches.
        Returns the most arguments of a node (a batch that reads node after node may hold
        nodes of several numbers of arguments)."""
        args, batch_of, unplaced, start = self.args, self.batch_of, self.unplaced, self.start
        most = 0
        for batch in self.batches:
            for node in batch:
                most = max(most, len(args[node]))
                for a in args[node]:
                    if a >= start and batch_of[a - start] >= 0:  # (not a parameter, not done)
                        unplaced[batch_of[a - start]] += 1
        return most

    def make_available(self, k: int) -> None:
        first_read, start = self.first_read, self.start
        first = -1
        for node in self.batches[k]:
            if first < 0 or first_read[node - start] < first:
                first = first_read[node - start]
        heapq.heappush(self.available, (-first, k))

    def place(self, slot: int) -> None:
        """Place the available batch read last at ``slot``: its nodes in the order of their
        first read; then record its reads of its arguments."""
        k = heapq.heappop(self.available)[1]
        args, batch_of, first_read, start = self.args, self.batch_of, self.first_read, self.start
        nodes = sorted(self.batches[k], key=self.first_read_of)
        self.placed[slot] = nodes
        self.slot_of[k] = slot
        reads_at = slot * self.P * self.M
        node_major = self.node_major[k]
        for index in range(len(nodes)):
            node_args = args[nodes[index]]
            for position in range(len(node_args)):
                a = node_args[position]
                if a >= start and batch_of[a - start] >= 0:  # (not a parameter, not done)
                    if node_major:
                        read = reads_at + index * self.P + position
                    else:
                        read = reads_at + position * self.M + index
                    if read < first_read[a - start]:
                        first_read[a - start] = read
                    self.release(batch_of[a - start])
        if self.previous[k] >= 0:
            self.release(self.previous[k])

    def first_read_of(self, node: int) -> int:
        return self.first_read[node - self.start]

    def follow_arguments(self) -> None:
        """After the walk, from the first slot to the last: a batch that may follow its
        arguments (:func:`followers`) does so when its arguments at that position take
        every place of one range of the laid-out schedule, once each (so they can lie back
        to back: a view). Its nodes are then sorted by where those arguments lie."""
        candidates = {self.slot_of[k]: position for k, position in self.may_follow.items()}
        rank = array("q", [-1]) * len(self.batch_of)  # per node: its place in the schedule
        args, start, ranked = self.args, self.start, 0
        for slot in range(len(self.placed)):
            nodes = self.placed[slot]
            position = candidates.get(slot)
            if position is not None:
                places = []  # where its argument at ``position`` lies, per node
                for node in nodes:
                    a = args[node][position]
                    places.append(rank[a - start] if a >= start else -1)
                if whole_consecutive(places):  # each node goes where its argument lies
                    self.follows[slot] = position
                    lowest, following = min(places), nodes
                    nodes = [0] * len(following)
                    for index in range(len(following)):
                        nodes[places[index] - lowest] = following[index]
                    self.placed[slot] = nodes
            for node in nodes:
                rank[node - start] = ranked
                ranked += 1

    def release(self, k: int) -> None:
        """One more read of batch ``k`` (or its successor) is placed."""
        self.unplaced[k] -= 1
        if self.unplaced[k] == 0:
            self.make_available(k)


def whole_consecutive(places: list) -> bool:
    """Whether ``places`` (in the laid-out schedule; -1: not in it) are each place of one
    range exactly once."""
    lowest = min(places)
    return lowest >= 0 and sorted(places) == list(range(lowest, lowest + len(places)))


def node_major_signatures(view) -> set:
    """The signatures whose batches read all arguments in one block, node after node
    (``Op.one_gather``, e.g. ``esum``): their arguments are laid out node by node."""
    infos = view.graph.sigtab.infos
    return {s for s, info in enumerate(infos) if info.op.one_gather}


def one_batch_per_signature(signatures: list) -> bool:
    """Whether a schedule whose batches have these ``signatures`` runs each signature in one
    batch: then no schedule has fewer batches (each signature needs at least one)."""
    return len(set(signatures)) == len(signatures)


def previous_of_signature(signatures: list) -> list:
    """Per batch (given the signature of each), the index of the batch of the same signature
    before it, or -1."""
    last: dict = {}
    previous = []
    for k, s in enumerate(signatures):
        previous.append(last.get(s, -1))
        last[s] = k
    return previous


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
