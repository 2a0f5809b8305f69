"""The lazy computation graph: struct-of-arrays node storage and tiny Expression handles.

Building the graph is paid on every node of every minibatch (App. B), so a node is not an
object: it is one slot in each of a few parallel lists (op, arguments, attributes, shape,
signature, depth), and the user holds an :class:`Expression`, a two-field handle
``(graph, node id)``. Node ids are creation-order integers: stable from run to run, so that
reports and pictures can be compared.

Nothing is computed while the graph is built. ``expr.value()`` runs the nodes added since
the last run (the paper's §3.1: "further calls will lazily evaluate the delta"), scheduled
into batches by the graph's strategy.
"""
from __future__ import annotations

import sys

from .errors import GraphFinishedError
from .ops.base import FIXED_SIGNATURES, Op
from .signature import SignatureTable

_current: "Graph | None" = None
_graph_counter = 0


class Graph:
    """A dynamic computation graph, built lazily and executed in batches.

    Use it as a context manager (``with bv.Graph(strategy="agenda"): ...``) or through
    :func:`new_graph`. ``strategy`` is ``"none"``, ``"depth"``, ``"agenda"``, another
    registered name, or any :class:`~batchviz.Strategy` object.
    ``record_source=True`` remembers the user's source line of every node (for traces; it
    costs time at construction, so it is off by default).
    """

    def __init__(self, strategy="agenda", record_source: bool = False):
        global _graph_counter
        from .schedule import resolve_strategy

        self.strategy = resolve_strategy(strategy)
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
        self.param_node: dict[int, int] = {}        # id(Parameters) -> node id
        self.param_of_node: dict[int, object] = {}  # node id -> Parameters
        self.memo: dict = {}  # Op.memo_key -> (signature, shape), see Op.memo_key
        # --- execution state, owned by the executor ---
        self.n_evaluated = 0
        self.memory = None        # created by the executor on the first run
        self.finished = False
        self.finished_because = ""
        self.tracer = None        # set by batchviz.trace while recording
        self.last_stats = None
        #: compute every node's gradient, constants' too, and keep them after a backward
        #: pass in ``gradients`` (DyNet's ``backward(full=True)``; set before the forward
        #: pass): ``(first address, one flat array laid out like the address space)``
        self.keep_gradients = False
        self.gradients = None
        self._previous: "Graph | None" = None
        if record_source:
            self.push = self._push_recording  # type: ignore[method-assign]

    # --- building ---------------------------------------------------------------------
    def push(self, op: Op, args: tuple, attrs, shape: tuple, sig: int, depth: int) -> "Expression":
        """Append one node; every op constructor ends here."""
        node = len(self.ops)
        self.ops.append(op)
        self.args.append(args)
        self.attrs.append(attrs)
        self.shapes.append(shape)
        self.sigs.append(sig)
        self.depths.append(depth)
        return Expression(self, node)

    def _push_recording(self, op, args, attrs, shape, sig, depth):
        self.sources.append(_user_source_line())
        return Graph.push(self, op, args, attrs, shape, sig, depth)

    def push_many(self, ops: list, args: list, attrs: list, shapes: list, sigs: list,
                  depths: list) -> int:
        """Append many nodes at once (parallel lists, one item per node, already checked by
        the caller); return the id of the first. A whole sequence's LSTM steps are known
        together, and extending each list once costs a fraction of one push per node."""
        first = len(self.ops)
        if self.sources is not None:
            self.sources.extend([_user_source_line()] * len(ops))
        self.ops.extend(ops)
        self.args.extend(args)
        self.attrs.extend(attrs)
        self.shapes.extend(shapes)
        self.sigs.extend(sigs)
        self.depths.extend(depths)
        return first

    def add(self, op: Op, args: tuple, attrs=None) -> "Expression":
        """Build a node of ``op`` over argument node ids ``args``: infer its shape (raising at
        the user's line), compute its signature and depth, and append it."""
        key = op.memo_key(self, args, attrs)
        known = self.memo.get(key) if key is not None else None
        if known is not None:
            sig, shape = known
        else:
            shapes = self.shapes
            shape = op.infer_shape([shapes[a] for a in args], attrs)
            sig = op.fixed_signature
            if sig is None:
                if op.batchable:
                    sig_key, shared = op.signature(self, args, attrs, shape)
                else:  # App. A: unbatchable ops get a signature no other node has
                    sig_key, shared = (op.name, "unbatchable", len(self.ops)), ()
                sig = self.sigtab.intern(sig_key, op, shared, shape, attrs, len(args))
            if key is not None:
                self.memo[key] = (sig, shape)
        depths = self.depths
        if len(args) == 1:
            depth = depths[args[0]] + 1
        elif args:
            depth = 1 + max(map(depths.__getitem__, args))
        else:
            depth = 0
        return self.push(op, args, attrs, shape, sig, depth)

    def add_memoized(self, op: Op, args: tuple, attrs, depth: int) -> "Expression":
        """:meth:`add` for a constructor that has checked its arguments and knows the node's
        depth: when this graph has built a node with the same ``op.memo_key`` before, its
        signature and shape are known, and adding is a dict lookup and a push (a word's
        lookup or loss is built thousands of times per minibatch). Otherwise :meth:`add`,
        which checks the shapes and remembers them."""
        known = self.memo.get(op.memo_key(self, args, attrs))
        if known is None:
            return self.add(op, args, attrs)
        return self.push(op, args, attrs, known[1], known[0], depth)

    def parameter_node(self, param) -> int:
        """The node of ``param`` in this graph, created on first use (one per graph)."""
        node = self.param_node.get(id(param))
        if node is None:
            self.check_alive()
            from .ops.leaves import PARAMETER

            node = len(self.ops)
            key = ("parameter", "node", node)
            sig = self.sigtab.intern(key, PARAMETER, arity=0)
            self.push(PARAMETER, (), param, tuple(param.shape), sig, 0)
            self.param_node[id(param)] = node
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
        """End the graph: its expressions can no longer be used, and its memory is freed."""
        self.finished = True
        self.finished_because = because
        if self.memory is not None:
            self.memory.release()
        self.memory = None

    def __enter__(self) -> "Graph":
        global _current
        self.check_alive()
        self._previous = _current
        _current = self
        return self

    def __exit__(self, *exc) -> None:
        global _current
        self.finish("when its `with bv.Graph(...)` block ended")
        _current = self._previous
        self._previous = None

    # --- running ----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ops)

    def forward(self) -> None:
        """Run every node added since the last run, batched by the graph's strategy."""
        self.check_alive()
        if self.n_evaluated < len(self.ops):
            from .execute.executor import run_forward

            run_forward(self)

    def recompute(self, inputs: dict | None = None) -> None:
        """Forget every computed value, so that the next run computes the whole graph again
        (DyNet's ``forward(recalculate=True)``); ``inputs``: ``{node: data}``, new data for
        input nodes (of their shapes) first (DyNet's ``set()`` of an input)."""
        self.check_alive()
        for node, data in (inputs or {}).items():
            self.attrs[node] = data
        if self.memory is not None:
            self.memory.release()
        self.memory = None
        self.n_evaluated = 0

    def backward(self, node: int) -> None:
        """Accumulate d(node)/d(parameter) into every parameter's ``grad``."""
        self.forward()
        from .execute.executor import run_backward

        run_backward(self, node)

    def signature_name(self, sig: int) -> str:
        return self.sigtab[sig].describe(self)

    def __repr__(self) -> str:
        state = "finished" if self.finished else f"{self.n_evaluated}/{len(self.ops)} evaluated"
        return f"<bv.Graph #{self.number} strategy={self.strategy.name!r} nodes={len(self.ops)} {state}>"


def _user_source_line() -> str:
    """``file:line`` of the first stack frame outside the batchviz package."""
    frame = sys._getframe(2)
    pkg = __name__.rsplit(".", 1)[0].replace(".", "/")
    while frame is not None and f"/{pkg}/" in frame.f_code.co_filename.replace("\\", "/"):
        frame = frame.f_back
    if frame is None:
        return "?"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def current_graph() -> Graph:
    """The graph new expressions are added to; one is created (agenda batching) if none is."""
    global _current
    if _current is None or _current.finished:
        _current = Graph()
    return _current


def new_graph(strategy="agenda", record_source: bool = False) -> Graph:
    """Finish the current graph and start a new one (DyNet's ``renew_cg``)."""
    global _current
    if _current is not None and not _current.finished:
        _current.finish("when bv.new_graph() started a new one")
    _current = Graph(strategy, record_source=record_source)
    return _current


from .expression import Expression  # noqa: E402  (Expression needs Graph's module loaded)
