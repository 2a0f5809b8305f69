"""What ``explain``'s whole-graph analyses need of every node and argument, as NumPy arrays:
the pending view's arrays (:class:`~batchviz.schedule.arrays.PendingArrays`, built once)
and, per node, its size and first dimension and the kind of op it is.

``explain`` looks at every node several times (the lower bound, the flop count, the lines
of code whose nodes split); doing that in Python would cost more than building the graph
did. The arrays are a read-only copy: the graph is never changed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..signature import size_of
from ..schedule import PendingView


@dataclass
class GraphArrays:
    n: int
    sig: np.ndarray          # signature per node
    depth: np.ndarray        # depth per node
    size: np.ndarray         # number of elements per node (its value)
    rows: np.ndarray         # first dimension of each node's shape (1 for a scalar)
    is_param: np.ndarray     # parameters are never scheduled (done from the start)
    elementwise: np.ndarray  # per node: its op reads flat blocks (the executor's sizes rule)
    one_gather: np.ndarray   # per node: its op reads all its arguments with one gather
    arg_ptr: np.ndarray      # node i's arguments are arg_flat[arg_ptr[i]:arg_ptr[i + 1]]
    arg_flat: np.ndarray     # argument node ids, node after node
    arity: np.ndarray        # number of arguments per node
    edge_ptr: np.ndarray     # node i's scheduled arguments (not parameters) are
    edge_arg: np.ndarray     #   edge_arg[edge_ptr[i]:edge_ptr[i + 1]], in argument order

    @property
    def scheduled(self) -> np.ndarray:
        return np.flatnonzero(~self.is_param)

    def by_position(self, nodes: np.ndarray):
        """``(p, users, entries)`` for ``p = 0, 1, ...``: the nodes of ``nodes`` (in their
        order) that have an argument at position ``p``, and where those arguments are in
        ``arg_flat``. Analyses go position by position so that their arrays are as long as
        the nodes, not as all the argument entries together."""
        users, p = nodes[self.arity[nodes] > 0], 0
        while len(users):
            yield p, users, self.arg_ptr[users] + p
            p += 1
            users = users[self.arity[users] > p]

    @property
    def arg_user(self) -> np.ndarray:
        """Per entry of ``arg_flat``: the node using it. (Computed when asked for: the
        analyses go position by position instead, with arrays as long as the nodes.)"""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.arity)


def graph_arrays(graph, view: PendingView | None = None) -> GraphArrays:
    """The arrays of every node of ``graph``. ``view``: a ``PendingView(graph, start=0)``
    whose :meth:`~batchviz.schedule.PendingView.arrays` to reuse (``explain`` schedules
    that view too, so the graph's lists are read once)."""
    if view is None or view.start != 0:
        view = PendingView(graph, start=0)
    v = view.arrays()
    n = view.end
    infos = graph.sigtab.infos
    sig_elementwise = np.array([bool(info.op.elementwise) for info in infos], dtype=bool)
    sig_one_gather = np.array([bool(info.op.one_gather) for info in infos], dtype=bool)
    size, rows = _sizes_and_rows(graph.shapes if n == len(graph.shapes) else graph.shapes[:n])
    return GraphArrays(
        n=n, sig=v.sig, depth=v.depth, size=size, rows=rows, is_param=~v.pending,
        elementwise=sig_elementwise[v.sig], one_gather=sig_one_gather[v.sig],
        arg_ptr=v.arg_ptr, arg_flat=v.arg_flat, arity=np.diff(v.arg_ptr),
        edge_ptr=v.edge_ptr, edge_arg=v.edge_arg)


class _ShapeTable:
    """Numbers for shapes, kept between calls, with each number's size and first dimension.

    A graph has few distinct shapes, and a session few more, so a node's size is one
    dictionary lookup (in C) of its shape's number, and two small arrays do the rest. The
    first call of a session numbers the shapes it meets; later calls hash each shape once."""

    #: more distinct shapes than this (a session of ever-new shapes): start afresh
    MAX_SHAPES = 100_000

    def __init__(self):
        self.number: dict[tuple, int] = {}
        self.size = np.zeros(0, dtype=np.int64)
        self.rows = np.zeros(0, dtype=np.int64)

    def numbers(self, shapes: list) -> np.ndarray:
        """Each shape's number."""
        try:
            return self._look_up(shapes)
        except KeyError:  # shapes not seen before: number them, then look up again
            self._add(list(dict.fromkeys(shapes)))
            return self._look_up(shapes)

    def _look_up(self, shapes: list) -> np.ndarray:
        return np.fromiter(map(self.number.__getitem__, shapes), dtype=np.int64,
                           count=len(shapes))

    def _add(self, distinct: list) -> None:
        new = [s for s in distinct if s not in self.number]
        if len(self.number) + len(new) > self.MAX_SHAPES:
            self.__init__()
            new = distinct
        first = len(self.number)
        self.number.update((s, first + k) for k, s in enumerate(new))
        self.size = np.r_[self.size, np.array([size_of(s) for s in new], dtype=np.int64)]
        self.rows = np.r_[self.rows, np.array([s[0] if s else 1 for s in new], dtype=np.int64)]


_SHAPES = _ShapeTable()


def _sizes_and_rows(shapes: list) -> tuple:
    """Elements and first dimension of each shape."""
    ids = _SHAPES.numbers(shapes)
    return _SHAPES.size[ids], _SHAPES.rows[ids]
