"""The layout pass's backward walk: a schedule's batches reordered, and the nodes of each
sorted, for the way later batches read them (the rules are in
:mod:`batchviz.schedule.layout`'s docstring).

From the last batch to the first: place the available batch read last, sort its nodes by
their first read, record where its arguments are read. Then one pass forward for the
batches that follow their arguments. Compiled as written (``walk.pxd`` gives the C types
of its counters): reads are ints, and per-node state lives in int64 arrays.
"""
from __future__ import annotations

import heapq
from array import array

from ..signature import size_of


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
    if lowest < 0:
        return False
    seen = bytearray(len(places))  # per place of the range: taken already?
    for place in places:
        if place - lowest >= len(places) or seen[place - lowest]:
            return False
        seen[place - lowest] = 1
    return True


def node_major_signatures(view) -> set:
    """The signatures whose batches read all arguments in one block, node after node
    (``Op.one_gather``, e.g. ``esum``): their arguments are laid out node by node."""
    infos = view.graph.sigtab.infos
    return {s for s, info in enumerate(infos) if info.op.one_gather}


def previous_of_signature(signatures: list) -> list:
    """Per batch (given the signature of each), the index of the batch of the same signature
    before it, or -1."""
    last: dict = {}
    previous = []
    for k, s in enumerate(signatures):
        previous.append(last.get(s, -1))
        last[s] = k
    return previous
