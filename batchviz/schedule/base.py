"""Strategies: how pending nodes are grouped into batches (§3.2 "Determining execution order").

A strategy is a pure function of a read-only :class:`PendingView` of the nodes that have not
run yet; it returns the *schedule*: a list of batches in execution order, each a list of node
ids that share one signature. The executor runs it; traces and widgets look at it. Nothing in
a strategy executes or allocates arrays, so anyone can write one::

    class Reverse(bv.Strategy):
        name = "my-strategy"
        def schedule(self, view):
            ...
            return batches

    with bv.Graph(strategy=Reverse()): ...

Schedules from strategies that are not built in are checked (every node exactly once,
one signature per batch, arguments before users) before they run, so a buggy strategy
fails loudly instead of computing wrong numbers.
"""
from __future__ import annotations

import struct
from functools import cached_property, reduce
from itertools import chain
from operator import iconcat
from typing import NamedTuple

import numpy as np

from ..errors import ScheduleError

Schedule = list  # list[list[int]]: batches of node ids, in execution order


class FlatSchedule(NamedTuple):
    """A schedule as two arrays: ``order``, every node id in execution order, batch after
    batch; ``sizes``, the number of nodes of each batch. The same thing as a list of lists,
    in the form that whole-schedule analyses (``bv.explain``) read with NumPy, without a
    Python object per node."""
    order: np.ndarray
    sizes: np.ndarray

    @classmethod
    def of(cls, batches) -> "FlatSchedule":
        """The flat form of a list of batches."""
        sizes = np.fromiter(map(len, batches), dtype=np.int64, count=len(batches))
        order = np.fromiter(chain.from_iterable(batches), dtype=np.int64, count=int(sizes.sum()))
        return cls(order, sizes)

    def __len__(self) -> int:
        return len(self.sizes)

    def starts(self) -> np.ndarray:
        """Where each batch begins in ``order``."""
        return np.cumsum(self.sizes) - self.sizes

    def batches(self) -> Schedule:
        """The list-of-lists form (node ids as Python ints)."""
        order = self.order.tolist()
        ends = np.cumsum(self.sizes).tolist()
        return [order[i - k:i] for i, k in zip(ends, self.sizes.tolist())]


class PendingView:
    """What a strategy may look at: the nodes to schedule and their signatures, depths and
    dependencies. Parameters and nodes run by an earlier ``value()`` are already *done*.

    Attributes (lists indexed by node id, covering the whole graph):
    ``signature``, ``depth``, ``args``; and ``nodes``: the pending node ids in creation order.
    """

    def __init__(self, graph, start: int | None = None):
        self.graph = graph
        self.start = graph.n_evaluated if start is None else start
        self.end = len(graph.ops)
        self.signature = graph.sigs
        self.depth = graph.depths
        self.args = graph.args
        self._params = graph.param_of_node
        self._users = None
        self._nodes = None
        self._arrays = None
        self._user_lists = None

    @property
    def nodes(self) -> list:
        """The pending node ids, in creation order (computed once)."""
        if self._nodes is None:
            if self._arrays is not None:
                self._nodes = self._arrays.nodes.tolist()
            elif self.is_small():  # a few nodes: a membership loop costs less than NumPy
                params = self._params
                self._nodes = [i for i in range(self.start, self.end) if i not in params]
            else:
                self._nodes = (np.flatnonzero(self._pending_mask()) + self.start).tolist()
        return self._nodes

    def _pending_mask(self) -> np.ndarray:
        """Per node id from ``start`` to ``end``: True unless it is a parameter. (Sized by
        the nodes added since the last run, not by the whole graph: a parser runs forward
        after every step of a graph that grows to tens of thousands of nodes.)"""
        start = self.start
        pending = np.ones(self.end - start, dtype=bool)
        inside = [p - start for p in self._params if p >= start]
        if inside:
            pending[inside] = False
        return pending

    def __len__(self) -> int:
        return len(self.nodes)

    def is_pending(self, node: int) -> bool:
        """True if ``node`` is part of this schedule (not a parameter, not already run)."""
        return node >= self.start and node not in self._params

    def pending_args(self, node: int) -> tuple:
        """The arguments of ``node`` that are themselves pending: its unresolved dependencies."""
        start, params = self.start, self._params
        return tuple(a for a in self.args[node] if a >= start and a not in params)

    def users(self) -> dict:
        """``{node: [pending nodes that use it]}``, computed once."""
        if self._users is None:
            users: dict[int, list] = {}
            start, params, args = self.start, self._params, self.args
            for i in self.nodes:
                for a in args[i]:
                    if a >= start and a not in params:
                        lst = users.get(a)
                        if lst is None:
                            users[a] = [i]
                        else:
                            lst.append(i)
            self._users = users
        return self._users

    def arrays(self) -> "PendingArrays":
        """The view as NumPy arrays (computed once), for strategies and analyses that work on
        whole batches at a time instead of node by node; see :class:`PendingArrays`."""
        if self._arrays is None:
            self._arrays = PendingArrays(self)
        return self._arrays

    def user_arrays(self) -> tuple:
        """``(user_start, users)`` as arrays of local ids (node id - ``start``), computed once:
        the pending users of local node ``k`` are ``users[user_start[k]:user_start[k + 1]]``,
        in creation order (a user that reads ``k`` twice is listed twice)."""
        if self._user_lists is None:
            a = self.arrays()
            self._user_lists = users_by_argument(a.edge_user, a.edge_arg, self.end - self.start)
        return self._user_lists

    def unresolved(self) -> np.ndarray:
        """Per local id (node id - ``start``): how many pending arguments the node waits for
        (an argument used twice counts twice). A fresh array: callers may count it down."""
        return np.bincount(self.arrays().edge_user, minlength=self.end - self.start)

    def dependencies(self) -> tuple[list, list, list]:
        """``(unresolved, user_start, users)`` as plain lists (see :meth:`unresolved` and
        :meth:`user_arrays`): ``unresolved[i - start]`` is how many pending arguments node
        ``i`` waits for; the users of node ``a`` are (node ids, not local ids)
        ``users[user_start[a - start]:user_start[a - start + 1]]``, in creation order. Lists,
        because a scheduling loop reads them one item at a time, which is faster on lists
        than on arrays."""
        if self.is_small():
            return self._small_dependencies()
        user_start, users = self.user_arrays()
        return self.unresolved().tolist(), user_start.tolist(), (users + self.start).tolist()

    #: pending sets up to this size are handled with Python loops (NumPy's per-call cost
    #: is more than a loop over a few dozen nodes; a parser runs thousands of such steps)
    SMALL = 128

    def is_small(self) -> bool:
        return self.end - self.start <= self.SMALL

    def _small_dependencies(self) -> tuple[list, list, list]:
        """:meth:`dependencies` with plain Python loops, for small pending sets."""
        start, params, args = self.start, self._params, self.args
        n = self.end - start
        unresolved = [0] * n
        users_of: list[list] = [[] for _ in range(n)]
        for i in self.nodes:
            for a in args[i]:
                if a >= start and a not in params:
                    unresolved[i - start] += 1
                    users_of[a - start].append(i)
        user_start = [0] * (n + 1)
        users: list = []
        for k, lst in enumerate(users_of):
            users += lst
            user_start[k + 1] = len(users)
        return unresolved, user_start, users

    def is_cheap(self, sig: int) -> bool:
        """The paper's tie-break class: element-wise ops are cheap, matmuls are heavy."""
        return self.graph.sigtab[sig].cheap

    def signature_name(self, sig: int) -> str:
        return self.graph.signature_name(sig)

    def op_name(self, node: int) -> str:
        return self.graph.ops[node].name


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

    def __init__(self, view: PendingView):
        start, end = view.start, view.end
        n = end - start
        self._view = view
        self.start = start
        self.sig = int64_array(_part(view.signature, start, end), n)
        self.depth = int64_array(_part(view.depth, start, end), n)
        self.pending = view._pending_mask()
        self.nodes = np.flatnonzero(self.pending)
        self.nodes += start

    @cached_property
    def arity(self) -> np.ndarray:
        """Per local id: the node's number of arguments, read from its signature (all nodes
        of a signature have as many: a batch reads its arguments position by position), or
        from the node itself for a signature without one (``Op.any_arity``)."""
        infos = self._view.graph.sigtab.infos
        of_signature = np.fromiter((info.arity for info in infos), dtype=np.int64,
                                   count=len(infos))
        arity = of_signature[self.sig]
        unknown = np.flatnonzero(arity < 0)  # sums of any number of arguments: node by node
        if len(unknown):
            args, start = self._view.args, self.start
            arity[unknown] = [len(args[start + k]) for k in unknown.tolist()]
        return arity

    @cached_property
    def arg_ptr(self) -> np.ndarray:
        arg_ptr = np.zeros(len(self.sig) + 1, dtype=np.int64)
        np.cumsum(self.arity, out=arg_ptr[1:])
        return arg_ptr

    @cached_property
    def arg_flat(self) -> np.ndarray:
        args = _part(self._view.args, self.start, self._view.end)
        flat = flatten(args)
        if len(flat) != int(self.arg_ptr[-1]):  # some node has another number of arguments
            raise _mixed_arity(self._view, args, self.arity)  # than its signature says
        return int64_array(flat, len(flat))

    @cached_property
    def _pending_args(self) -> tuple:
        """``(edge_arg, edge_user)`` (parameters have no arguments: every user is
        pending). One lookup per argument entry, in a mask over node ids: an argument may be
        any earlier node."""
        pending = np.zeros(self._view.end, dtype=bool)
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


def _mixed_arity(view, args: list, recorded: np.ndarray) -> ScheduleError:
    """The error for a signature whose nodes have different numbers of arguments: a batch
    of them would read its arguments position by position and drop some."""
    counts = int64_array(map(len, args), len(args))
    k = int(np.flatnonzero(counts != recorded)[0])
    node = view.start + k
    sig = view.signature[node]
    return ScheduleError(
        f"node {node} ({view.op_name(node)}) has {int(counts[k])} argument(s), but its "
        f"signature {view.signature_name(sig)!r} was made for nodes of {int(recorded[k])}: an "
        f"op's signature() must tell apart nodes with different numbers of arguments")


def users_by_argument(edge_user: np.ndarray, edge_arg: np.ndarray, n: int) -> tuple:
    """``(user_start, users)`` of edges ``(user, argument)`` between ``n`` local ids, given
    by user: the users of ``k`` are ``users[user_start[k]:user_start[k + 1]]``, in the
    edges' order (one stable sort by argument)."""
    order = stable_argsort(edge_arg, n)
    user_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(edge_arg, minlength=n), out=user_start[1:])
    return user_start, edge_user[order]


def stable_argsort(keys: np.ndarray, bound: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for keys in ``range(bound)``.

    NumPy sorts 16-bit integers stably with a radix sort, two passes over the data, and
    wider ones with timsort; so keys that fit in 16 bits (the nodes of a graph of up to
    65,536, a schedule's (depth, signature) pairs) are sorted as such. Measured on the
    benchmarks' minibatches: depth's keys of a Tree-LSTM, 247 to 60 µs; the synthetic
    BiLSTM's 36k edges by argument, 505 to 285 µs; the Tree-LSTM's edges, which come in
    long runs that timsort finds, no faster."""
    if bound <= 1 << 16:
        keys = keys.astype(np.uint16)
    return np.argsort(keys, kind="stable")


def flatten(sequences) -> list:
    """The items of all ``sequences``, one after another, as one list: what
    ``list(chain.from_iterable(sequences))`` gives, twice as fast on many short tuples
    (one C ``extend`` per tuple, where ``chain`` makes an iterator per tuple: a Tree-LSTM
    minibatch's 8,498 argument tuples, 0.27 ms instead of 0.54)."""
    return reduce(iconcat, sequences, [])


def int64_array(ints, count: int) -> np.ndarray:
    """``count`` Python ints (a list or any iterable) as a read-only int64 array.

    ``struct.pack`` converts them in one C loop over its argument tuple, two to three times
    faster than ``np.fromiter``, which pulls them through the iterator protocol one at a time
    (a Tree-LSTM minibatch's 25k argument entries, measured alone: 0.6 ms instead of 1.2)."""
    return np.frombuffer(struct.pack(f"{count}q", *ints), dtype=np.int64)


def _part(items: list, start: int, end: int) -> list:
    """``items[start:end]``, without copying the list when that is all of it."""
    return items if start == 0 and end == len(items) else items[start:end]


class Strategy:
    """Base class of scheduling strategies. Subclasses set ``name`` and define ``schedule``."""

    name = "?"
    #: built-in strategies are proven by the test suite; others are validated on every run
    trusted = False
    #: the backward pass sums each shared W's gradient over all its batches in one GEMM
    #: (a batching of the weight gradients; the "none" strategy switches it off)
    batches_weight_gradients = True

    def schedule(self, view: PendingView) -> Schedule:
        raise NotImplementedError

    def schedule_flat(self, view: PendingView) -> FlatSchedule:
        """The same schedule as :meth:`schedule`, as a :class:`FlatSchedule`. Built-in
        strategies compute it directly with NumPy; call :func:`flat_schedule`, which uses
        this method only where it is the flat form of the ``schedule`` in force."""
        return FlatSchedule.of(self.schedule(view))

    def __repr__(self) -> str:
        return f"<strategy {self.name}>"


def flat_schedule(strategy, view: PendingView) -> FlatSchedule:
    """``strategy``'s schedule of ``view`` as a :class:`FlatSchedule`.

    A subclass that overrides ``schedule`` but inherits a built-in's ``schedule_flat`` would
    get the built-in's schedule from it, so ``schedule_flat`` is used only when the class
    that defines ``schedule`` also defines ``schedule_flat``; otherwise the lists from
    ``schedule`` are converted."""
    for cls in type(strategy).__mro__:
        if "schedule" in cls.__dict__:
            if "schedule_flat" in cls.__dict__:
                return strategy.schedule_flat(view)
            break
    return FlatSchedule.of(strategy.schedule(view))


def validate_schedule(view: PendingView, batches) -> list:
    """Check ``batches`` against ``view``; return it as a list of lists or raise ScheduleError
    naming the first problem (a missing or repeated node, a mixed batch, an argument
    scheduled after its user)."""
    batches = [list(b) for b in batches]
    sig = view.signature
    position: dict[int, int] = {}
    for k, batch in enumerate(batches):
        if not batch:
            raise ScheduleError(f"batch {k} is empty")
        s = sig[batch[0]]
        for node in batch:
            if not view.is_pending(node):
                raise ScheduleError(f"batch {k} contains node {node}, which is not pending")
            if node in position:
                raise ScheduleError(f"node {node} is scheduled twice (batches {position[node]} and {k})")
            if sig[node] != s:
                raise ScheduleError(
                    f"batch {k} mixes signatures: node {batch[0]} is {view.signature_name(s)} but "
                    f"node {node} is {view.signature_name(sig[node])}")
            position[node] = k
    missing = [n for n in view.nodes if n not in position]
    if missing:
        raise ScheduleError(f"{len(missing)} pending nodes are never scheduled, e.g. node {missing[0]}")
    for node, k in position.items():
        for a in view.pending_args(node):
            if position[a] >= k:
                raise ScheduleError(
                    f"node {node} (batch {k}) uses node {a}, which runs in batch {position[a]}: "
                    "arguments must run in an earlier batch")
    return batches
