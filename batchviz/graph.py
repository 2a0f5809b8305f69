"""The lazy computation graph: its nodes, and how a node is added.

Building the graph is paid on every node of every minibatch (App. B), so a node is not an
object: it is one slot in each of a few parallel lists (op, arguments, attributes, shape,
signature, depth), and the user holds an expression, a two-field handle
``(graph, node id)``. Node ids are creation-order integers: stable from run to run, so that
reports and pictures can be compared.

Nothing is computed here: a :class:`LazyGraph` records what the user built, checks shapes
at the user's line, and gives every node its signature (§3.2) and depth. Running it is the
job of :class:`batchviz.runtime.Graph` (``bv.Graph``), which adds a strategy, memory and
lazy evaluation (§3.1) on top of these lists.

The *open graph* is the one that expressions built from parameters and data alone are
added to: a ``with bv.Graph():`` block opens one, :func:`open_graph` sets it. There is no
hidden global graph.

A graph can be marked and cut back to the mark (:meth:`LazyGraph.checkpoint`,
:meth:`LazyGraph.revert`: DyNet's ``cg_checkpoint``/``cg_revert``): the nodes made after
the mark are removed, and their expressions point to a :class:`RemovedNodes` instead of the
graph, so that using one raises instead of reading whatever node takes its id next.
"""
from __future__ import annotations

from contextlib import contextmanager

from .errors import BatchvizError, GraphFinishedError, NoGraphError
from .ops.base import FIXED_SIGNATURES, Op
from .ops.parameter import PARAMETER
from .signature import SignatureTable
from .sourcelines import recording, user_frame

_open: "LazyGraph | None" = None
_graph_counter = 0


class ExpressionBase:
    """What every expression is underneath: its graph and its node id.

    Op constructors recognise their arguments by this class. The operators (``+ @ *``)
    and ``value()`` come with :class:`batchviz.expression.Expression`, the class that a
    ``bv.Graph`` hands its nodes out as (:attr:`LazyGraph.expression_type`)."""

    __slots__ = ("graph", "node")

    def __init__(self, graph, node: int):
        self.graph = graph
        self.node = node

    @property
    def shape(self) -> tuple:
        return self.graph.shapes[self.node]


def shape_of(x) -> tuple:
    """``x.shape`` of an expression or a parameter (what op constructors take), an
    expression's read from its graph's list directly; a DyNet program asks for the shapes of
    a gate's factors at every gate."""
    if isinstance(x, ExpressionBase):
        e = x
        if isinstance(e.graph, LazyGraph):  # (not the RemovedNodes of a revert)
            graph = e.graph
            return graph.shapes[e.node]
    return x.shape


def live_graph(e: ExpressionBase) -> "LazyGraph":
    """The graph of the expression ``e``, which must be alive; raises (at the user's line)
    when the graph was finished or ``e``'s node was removed by a revert (its ``graph`` is
    then a :class:`RemovedNodes`). Op constructors ask this at every node: compiled, it
    reads the graph's ``finished`` field directly once the graph is known to be one."""
    graph = e.graph
    if isinstance(graph, LazyGraph):
        live = graph
        if not live.finished:
            return live
    graph.check_alive()  # (raises)
    raise GraphFinishedError(f"graph #{graph.number} is finished")


class LazyGraph:
    """A dynamic computation graph's nodes, as parallel lists indexed by node id.

    ``record_source=True`` remembers the user's source line of every node (for traces and
    explanations; it costs time at construction, so it is off by default; None: on inside
    ``with bv.recording_sources():``, see :func:`~batchviz.recording_sources`)."""

    #: the class of the handles :meth:`push` returns (``bv.Graph``: ``bv.Expression``)
    expression_type = ExpressionBase

    def __init__(self, record_source: bool | None = None):
        global _graph_counter
        if record_source is None:
            record_source = recording()
        _graph_counter += 1
        self.number = _graph_counter
        # --- the nodes, struct of arrays (index = node id) ---
        self.ops: list[Op] = []
        self.args: list[tuple] = []
        self.attrs: list = []
        self.shapes: list[tuple] = []
        self.sigs: list[int] = []
        self.depths: list[int] = []
        self.sources: list | None = [] if record_source else None
        # --- signatures and parameters ---
        self.sigtab = SignatureTable(FIXED_SIGNATURES)
        #: parameter -> node id, keyed by the parameter itself (parameters hash by
        #: identity): the constructor of every gate (``b + W x``) finds its parameters
        #: here, without making an int of an id() and comparing ints that collide (ids are
        #: aligned); :func:`~batchviz.ops._build.parameter_node_of` asks it of anything
        self.param_node: dict = {}
        self.param_of_node: dict[int, object] = {}  # node id -> parameter
        self.memo: dict = {}  # Op.memo_key -> (signature, shape), see Op.memo_key
        #: one tuple object per distinct shape, which the nodes of that shape share: two
        #: shapes (of an element-wise op's arguments, in memo keys) are then compared by
        #: identity, not element by element, at most nodes
        self.shape_objects: dict = {}
        self.finished = False
        self.finished_because = ""
        self._previous: "LazyGraph | None" = None
        #: the marks of :meth:`checkpoint` not reverted yet: (nodes, signatures) at the mark
        self.checkpoints: list[tuple] = []
        #: how many times :meth:`revert` has cut the graph back: what remembers node ids or
        #: signatures of this graph across calls (the LSTM builders' shortcuts) compares it
        self.revision = 0
        self._made = None  # while a mark is set: every expression handed out since
        #: :attr:`expression_type`, read once here rather than at every node
        self.expression_class = self.expression_type

    # --- building ---------------------------------------------------------------------
    def push(self, op: Op, args: tuple, attrs, shape: tuple, sig: int, depth: int):
        """Append one node and return its expression; every op constructor ends here."""
        node = len(self.ops)
        self.ops.append(op)
        self.args.append(args)
        self.attrs.append(attrs)
        self.shapes.append(shape)
        self.sigs.append(sig)
        self.depths.append(depth)
        if self.sources is not None:
            self.sources.append(user_source_line())
        return self.expression(node)

    def expression(self, node: int):
        """The expression of ``node``, of the graph's :attr:`expression_type`. While a mark
        is set (:meth:`checkpoint`), it is remembered, to be told if its node is removed."""
        # an expression is its two fields, set here: a call of the class (which runs its
        # __init__) would cost a third of a node's time
        kind = self.expression_class
        e = kind.__new__(kind)
        e.graph, e.node = self, node
        if self._made is not None:
            self._made.append(e)
        return e

    def push_many(self, ops: list, args: list, attrs: list, shapes: list, sigs: list,
                  depths: list) -> int:
        """Append many nodes at once (parallel lists, one item per node, already checked by
        the caller); return the id of the first. A whole sequence's LSTM steps are known
        together, and extending each list once costs a fraction of one push per node."""
        first = len(self.ops)
        if self.sources is not None:
            self.sources.extend([user_source_line()] * len(ops))
        self.ops.extend(ops)
        self.args.extend(args)
        self.attrs.extend(attrs)
        self.shapes.extend(shapes)
        self.sigs.extend(sigs)
        self.depths.extend(depths)
        return first

    def add(self, op: Op, args: tuple, attrs=None):
        """Build a node of ``op`` over argument node ids ``args``: infer its shape (raising at
        the user's line), compute its signature and depth, and append it."""
        key = op.memo_key(self, args, attrs)
        known = self.memo.get(key) if key is not None else None
        if known is not None:
            sig, shape = known
        else:
            shape = op.infer_shape([self.shapes[a] for a in args], attrs)
            shape = self.shape_objects.setdefault(shape, shape)
            sig = self._signature(op, args, attrs, shape)
            if key is not None:
                self.memo[key] = (sig, shape)
        depths, depth = self.depths, 0  # one deeper than the deepest argument (0: none)
        for a in args:
            d = depths[a]
            if d >= depth:
                depth = d + 1
        return self.push(op, args, attrs, shape, sig, depth)

    def _signature(self, op: Op, args: tuple, attrs, shape: tuple) -> int:
        """The interned signature of a new node (App. A)."""
        sig = op.fixed_signature
        if sig is not None:
            return sig
        if op.batchable:
            key, shared = op.signature(self, args, attrs, shape)
        else:  # App. A: unbatchable ops get a signature no other node has
            key, shared = (op.name, "unbatchable", len(self.ops)), ()
        return self.sigtab.intern(key, op, shared, shape, attrs, len(args))

    def add_memoized(self, op: Op, args: tuple, attrs, depth: int):
        """:meth:`add` for a constructor that has checked its arguments and knows the node's
        depth: when this graph has built a node with the same ``op.memo_key`` before, its
        signature and shape are known, and adding is a dict lookup and a push (a word's
        lookup or loss is built thousands of times per minibatch). Otherwise :meth:`add`,
        which checks the shapes and remembers them."""
        return self.add_known(op, args, attrs, depth, op.memo_key(self, args, attrs))

    def add_known(self, op, args: tuple, attrs, depth: int, key):
        """:meth:`add_memoized` for a constructor that has computed ``key``,
        ``op.memo_key(self, args, attrs)``, itself (without a call of the op's method: a
        gate of a Tree-LSTM is built hundreds of times per tree)."""
        known = self.memo.get(key)
        if known is None:
            return self.add(op, args, attrs)
        return self.push(op, args, attrs, known[1], known[0], depth)

    def parameter_node(self, param) -> int:
        """The node of ``param`` in this graph, created on first use (one per graph)."""
        node = self.param_node.get(param)
        if node is None:
            self.check_alive()
            node = len(self.ops)
            sig = self.sigtab.intern(("parameter", "node", node), PARAMETER, arity=0)
            shape = tuple(param.shape)
            self.push(PARAMETER, (), param, self.shape_objects.setdefault(shape, shape), sig, 0)
            self.param_node[param] = node
            self.param_of_node[node] = param
        return node

    # --- lifetime ---------------------------------------------------------------------
    def check_alive(self) -> None:
        if self.finished:
            raise GraphFinishedError(
                f"this expression belongs to graph #{self.number}, which was finished "
                f"{self.finished_because}; expressions cannot outlive their graph. Build it "
                "again inside the graph that uses it."
            )

    def finish(self, because: str = "by graph.finish()") -> None:
        """End the graph: its expressions can no longer be used."""
        self.finished = True
        self.finished_because = because
        if self._made is not None:  # marks never reverted: forget them, and the expressions
            self._made, self.checkpoints = None, []  # kept for them (which hold the graph)

    # --- checkpoints --------------------------------------------------------------------
    def checkpoint(self) -> int:
        """Mark the graph as it is now, so that :meth:`revert` can remove every node made
        after this point (DyNet's ``cg_checkpoint``); marks stack. Returns the number of
        nodes at the mark.

        While a mark is set, every expression the graph hands out is remembered: node ids
        are list positions, so the nodes made after a revert reuse the removed nodes' ids,
        and a removed node's expression must be found to be told that it was removed."""
        self.check_alive()
        if self._made is None:
            self._made = []  # (filled by expression())
        self.checkpoints.append((len(self.ops), len(self.sigtab)))
        return len(self.ops)

    def revert(self) -> int:
        """Remove every node made since the last :meth:`checkpoint` (and that mark), as if
        they had never been built (DyNet's ``cg_revert``); returns how many were removed.

        Their expressions raise :class:`~batchviz.GraphFinishedError` when used; the
        nodes made before the mark, and their expressions, are untouched."""
        self.check_alive()
        if not self.checkpoints:
            raise BatchvizError("revert(): this graph has no checkpoint to go back to; call "
                                "checkpoint() first")
        nodes, signatures = self.checkpoints.pop()
        removed = len(self.ops) - nodes
        self._cut(nodes, signatures)
        return removed

    def _cut(self, nodes: int, signatures: int) -> None:
        """Keep the first ``nodes`` nodes and ``signatures`` signatures, and everything
        that refers to them only."""
        gone = RemovedNodes(self, nodes, len(self.ops))
        oldest = self.checkpoints[0][0] if self.checkpoints else None
        kept = []
        for e in self._made:
            if e.node >= nodes:
                e.graph = gone
            elif oldest is not None and e.node >= oldest:
                kept.append(e)  # an older mark may remove it yet
        if oldest is None:  # no mark left: stop remembering expressions
            self._made = None
        else:
            self._made[:] = kept
        for column in (self.ops, self.args, self.attrs, self.shapes, self.sigs, self.depths):
            del column[nodes:]
        if self.sources is not None:
            del self.sources[nodes:]
        for node in [n for n in self.param_of_node if n >= nodes]:
            del self.param_node[self.param_of_node.pop(node)]
        self.sigtab.truncate(signatures)
        self.memo.clear()  # (its keys may hold removed parameter nodes, its values signatures)
        self.revision += 1

    def __enter__(self):
        self.check_alive()
        self._previous = open_graph(self)
        return self

    def __exit__(self, *exc) -> None:
        self.finish("when its `with bv.Graph(...)` block ended")
        open_graph(self._previous)
        self._previous = None

    def __len__(self) -> int:
        return len(self.ops)

    def signature_name(self, sig: int) -> str:
        return self.sigtab[sig].describe(self)

    def __repr__(self) -> str:
        state = "finished" if self.finished else "open"
        return f"<{type(self).__name__} #{self.number} nodes={len(self.ops)} {state}>"


class RemovedNodes:
    """What the expressions of nodes removed by :meth:`LazyGraph.revert` hold instead of
    their graph: it is ``finished``, so the checks that stop an expression of a finished
    graph stop these too, and any other use (its shapes, its values) raises the same
    error, saying that the node was reverted."""

    finished = True

    def __init__(self, graph: LazyGraph, first: int, end: int):
        self.number = graph.number
        self.finished_because = (f"nodes {first} to {end - 1} of graph #{graph.number} were "
                                 "removed by revert() (DyNet's cg_revert()), which drops every "
                                 "node made after the last checkpoint")

    def check_alive(self) -> None:
        raise GraphFinishedError(f"this expression was built after a checkpoint and its node "
                                 f"is gone: {self.finished_because}. Build it again after the "
                                 "revert.")

    def __getattr__(self, name: str):
        if name.startswith("__"):  # (copy, pickle and friends probe for these)
            raise AttributeError(name)
        self.check_alive()

    def __repr__(self) -> str:
        return f"<removed nodes of graph #{self.number}>"


def user_source_line() -> str:
    """``file:line`` of the first stack frame outside the batchviz package."""
    where = user_frame()
    return "?" if where is None else f"{where[0]}:{where[1]}"


def current_graph() -> LazyGraph:
    """The open graph: the one that expressions of parameters and data alone go to."""
    graph = _open
    if graph is None or graph.finished:
        raise NoGraphError(
            "no graph is open: build expressions inside `with bv.Graph(strategy=...):`, or "
            "open one with `bv.new_graph()` (DyNet's renew_cg)")
    return graph


def open_graph(graph: "LazyGraph | None") -> "LazyGraph | None":
    """Make ``graph`` the open graph (``None``: no graph is open); returns the graph that
    was open before, so that a caller can put it back."""
    global _open
    previous, _open = _open, graph
    return previous


@contextmanager
def graph_scope(graph: LazyGraph):
    """Make ``graph`` the open graph for a block, without finishing it at the end (as a
    ``with graph:`` block would): for building more of a graph that is run later."""
    previous = open_graph(graph)
    try:
        yield graph
    finally:
        open_graph(previous)
