"""The pending nodes as NumPy arrays: what lets a strategy or an analysis work on a
100k-node graph in C loops instead of Python ones.

Speed machinery only: every array here is a form of what :class:`~batchviz.schedule.view.
PendingView` holds as lists, built once per view, with the conversions that turned out to
be fast.
"""
from __future__ import annotations

from functools import cached_property, reduce
from operator import iconcat

import numpy as np

from ..errors import ScheduleError


class PendingArrays:
    """A :class:`PendingView` as NumPy arrays, built from the graph's lists once.

    Per-node arrays are indexed by *local* id, ``node id - start`` (covering every node from
    ``start`` on, parameters included); ``nodes`` holds global ids. Whole-graph tools
    (``bv.explain``) and batch-at-a-time strategies read these instead of looping over
    nodes in Python, which on a 100k-node graph costs more than building the graph did.

    ``sig``, ``depth``: signature and depth per local id; ``pending``: whether the node is
    scheduled (not a parameter); ``nodes``: the pending node ids in creation order.
    Computed when first read (a strategy that only sorts nodes never needs them):
    ``arity``: per local id, its number of arguments (from its signature);
    ``arg_ptr``, ``arg_flat``: local node ``k``'s arguments (global ids, parameters and
    done nodes included) are ``arg_flat[arg_ptr[k]:arg_ptr[k + 1]]``; ``edge_arg``,
    ``edge_user``: one pair of local ids per pending argument of a pending node, ordered by
    user (creation order), then argument position; ``edge_ptr``: local node ``k``'s pending
    arguments are ``edge_arg[edge_ptr[k]:edge_ptr[k + 1]]``.
    """

    def __init__(self, view):
        start, end = view.start, view.end
        n = end - start
        # the view's graph and bounds, not the view: the view keeps these arrays, and a
        # reference back would make a cycle that holds the whole graph (its lists, plans
        # and layout) after the program drops it, until a full collection of the
        # garbage collector, which such cycles make slower and more frequent
        self._graph = view.graph
        self.start, self.end = start, end
        self.sig = int64_array(_part(view.signature, start, end), n)
        self.depth = int64_array(_part(view.depth, start, end), n)
        self.pending = np.frombuffer(view.pending_mask(), dtype=bool).copy()
        self.nodes = np.flatnonzero(self.pending)
        self.nodes += start

    @cached_property
    def arity(self) -> np.ndarray:
        """Per local id: the node's number of arguments, read from its signature (all nodes
        of a signature have as many: a batch reads its arguments position by position), or
        from the node itself for a signature without one (``Op.any_arity``)."""
        infos = self._graph.sigtab.infos
        of_signature = np.fromiter((info.arity for info in infos), dtype=np.int64,
                                   count=len(infos))
        arity = of_signature[self.sig]
        unknown = np.flatnonzero(arity < 0)  # sums of any number of arguments: node by node
        if len(unknown):
            args, start = self._graph.args, self.start
            arity[unknown] = [len(args[start + k]) for k in unknown.tolist()]
        return arity

    @cached_property
    def arg_ptr(self) -> np.ndarray:
        arg_ptr = np.zeros(len(self.sig) + 1, dtype=np.int64)
        np.cumsum(self.arity, out=arg_ptr[1:])
        return arg_ptr

    @cached_property
    def arg_flat(self) -> np.ndarray:
        args = _part(self._graph.args, self.start, self.end)
        flat = flatten(args)
        # some node has another number of arguments than its signature says
        if len(flat) != int(self.arg_ptr[-1]):
            raise _mixed_arity(self._graph, self.start, args, self.arity)
        return int64_array(flat, len(flat))

    @cached_property
    def _pending_args(self) -> tuple:
        """``(edge_arg, edge_user)`` (parameters have no arguments: every user is
        pending). One lookup per argument entry, in a mask over node ids: an argument may be
        any earlier node."""
        pending = np.zeros(self.end, dtype=bool)
        pending[self.start:] = self.pending
        keep = np.flatnonzero(pending[self.arg_flat])  # (positions, then take: twice as
        edge_arg = self.arg_flat.take(keep)             # fast as two boolean masks)
        edge_arg -= self.start
        return edge_arg, self.arg_user.take(keep)

    @property
    def edge_arg(self) -> np.ndarray:
        return self._pending_args[0]

    @cached_property
    def edge_ptr(self) -> np.ndarray:
        edge_ptr = np.zeros(len(self.sig) + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.edge_user, minlength=len(self.sig)), out=edge_ptr[1:])
        return edge_ptr

    @property
    def edge_user(self) -> np.ndarray:
        return self._pending_args[1]

    @property
    def arg_user(self) -> np.ndarray:
        """Per entry of ``arg_flat``: the local id of the node it is an argument of."""
        return np.repeat(np.arange(len(self.sig), dtype=np.int64), self.arity)


def _mixed_arity(graph, start: int, args: list, recorded: np.ndarray) -> ScheduleError:
    """The error for a signature whose nodes have different numbers of arguments: a batch
    of them would read its arguments position by position and drop some."""
    counts = int64_array(map(len, args), len(args))
    k = int(np.flatnonzero(counts != recorded)[0])
    node = start + k
    sig = graph.sigs[node]
    return ScheduleError(
        f"node {node} ({graph.ops[node].name}) has {int(counts[k])} argument(s), but its "
        f"signature {graph.signature_name(sig)!r} was made for nodes of {int(recorded[k])}: an "
        f"op's signature() must tell apart nodes with different numbers of arguments")


def flatten(sequences) -> list:
    """The items of all ``sequences``, one after another, as one list: what
    ``list(chain.from_iterable(sequences))`` gives, about twice as fast on many short tuples
    (one C ``extend`` per tuple, where ``chain`` makes an iterator per tuple)."""
    return reduce(iconcat, sequences, [])


def int64_array(ints, count: int) -> np.ndarray:
    """``count`` Python ints (a list or any iterable) as a read-only int64 array."""
    ints = ints if isinstance(ints, list) else list(ints)
    if len(ints) != count:
        raise ValueError(f"int64_array: {len(ints)} ints where {count} were expected")
    values = np.empty(count, dtype=np.int64)
    copy_ints(ints, values)
    values.flags.writeable = False
    return values


def copy_ints(ints: list, values: np.ndarray) -> None:
    """Write ``ints`` into ``values``, one after another."""
    for k in range(len(ints)):
        values[k] = ints[k]


def _part(items: list, start: int, end: int) -> list:
    """``items[start:end]``, without copying the list when that is all of it."""
    return items if start == 0 and end == len(items) else items[start:end]
