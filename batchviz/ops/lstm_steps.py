"""An LSTM step in two nodes: what the builders (``batchviz.nn``) build.

:mod:`batchviz.ops.lstm` has DyNet's three fused ops (gates, cell, output). Every node costs
graph construction, scheduling and Python work per batch, and a BiLSTM tagger's minibatch
is mostly LSTM steps, so the builders use two nodes per step instead:

* ``lstm_step([b, W1, x1, W2, x2, ...], [c_1, ..., c_K], hidden)``: the gates
  ``sigmoid/tanh(b + sum_j W_j x_j)`` *and* the new cell ``c = i*u + f_1*c_1 + ... +
  f_K*c_K``, in one node laid out as ``[c, o, u, i, f_1, ..., f_K]`` (blocks of ``hidden``
  rows). The weights keep DyNet's gate order ``[i, f_1..f_K, o, u]``; only the node's
  memory is arranged so that the cell comes first and the output gate next to it.
* ``lstm_step_h(s)``: the output ``h = o * tanh(c)`` of a step node ``s``.

A previous cell ``c_k`` is either a plain vector of ``hidden`` rows or a previous step node,
whose cell is its first ``hidden`` rows. The step reads only that prefix of the previous
node (:meth:`~batchviz.ops.base.Op.prefix_reads`), and ``lstm_step_h`` reads only the
prefix ``[c, o]``: so a Tree-LSTM node batches with every other node whatever its
children are (leaves, with one block per gate fewer, or inner nodes), and no node is ever
added just to cut a cell out of another.

K = 1 is a sequence LSTM, K = 2 a binary Tree-LSTM node (Tai et al., 2015: a forget gate
per child), K = 0 a Tree-LSTM leaf. As for ``lstm_gates``, a bias or weight that is a model
parameter is a shared argument (Appendix A), inputs may be matrices whose columns are
instances (manual batching), and :func:`lstm_unit`, :class:`UnitBuilder` and
:func:`lstm_sequence` build many steps with the per-node checks done once.
"""
from __future__ import annotations

from ..errors import ShapeError
from ..expression import Expression, as_nodes
from ..model import ParameterBase
from .base import Op, register
from .linalg import AffineArguments
from .lstm import activated_gates, bias_gradient, gates_shape
from .structure import pick_range


def _positive(hidden, who: str) -> int:
    hidden = int(hidden)
    if hidden <= 0:
        raise ValueError(f"{who}: hidden must be positive, got {hidden}")
    return hidden


class LSTMStep(AffineArguments):
    """``[b, W1, x1, ..., c_1, ..., c_K] -> [c, o, u, i, f_1..f_K]``: gates and new cell.

    Attributes ``(hidden, K)``. Argument positions: the terms ``[b, W1, x1, ...]`` first
    (their bias and weights shared when they are parameters, as in ``lstm_gates``), then the
    ``K`` previous cells, of which the first ``hidden`` rows are read."""

    name = "lstm_step"
    cheap = False
    arity = None
    writes_output = True

    def infer_shape(self, shapes, attrs):
        hidden, K = attrs
        terms, cells = shapes[:len(shapes) - K], shapes[len(shapes) - K:]
        gates = gates_shape(self, terms, hidden, blocks=K + 3)
        tail = gates[1:]
        for c in cells:
            if c[1:] != tail or not (c[0] == hidden or (c[0] % hidden == 0 and c[0] >= 4 * hidden)):
                raise self.error(f"previous cell of shape {c} is neither a cell {(hidden,) + tail} "
                                 f"nor an lstm_step node of hidden={hidden} with the inputs' "
                                 f"columns {tail}")
        return ((K + 4) * hidden,) + tail

    def signature(self, graph, args, attrs, shape):
        hidden, K = attrs
        parts, shared = self.terms_signature(graph, args[:len(args) - K])
        cell = (hidden,) + shape[1:]  # what is read of every previous cell
        return (self.name, hidden, K, *parts) + (cell,) * K, shared

    def prefix_reads(self, key):
        K = key[2]
        T = len(key) - 3 - K
        return {T + k: key[3 + T + k] for k in range(K)}

    def memo_key(self, graph, args, attrs):
        K = attrs[1]
        T = len(args) - K
        shapes = graph.shapes
        return (self, attrs, args[0], args[1:T:2], tuple(map(shapes.__getitem__, args[2:T:2])),
                tuple(map(shapes.__getitem__, args[T:])))

    def forward(self, xp, ins, attrs, n, out=None):
        H, K = attrs[0]
        T = len(ins) - K
        gates = activated_gates(self, xp, ins[:T], H)     # [i, f_1..f_K, o, u]
        split = (K + 1) * H
        if out is None:
            out = xp.empty((n, (K + 4) * H) + gates.shape[2:], dtype=gates.dtype)
        out[:, H:3 * H] = gates[:, split:]                # o, u
        out[:, 3 * H:] = gates[:, :split]                 # i, f_1..f_K
        c = out[:, :H]
        xp.multiply(out[:, 3 * H:4 * H], out[:, 2 * H:3 * H], out=c)   # i * u
        for k in range(K):
            c += out[:, (4 + k) * H:(5 + k) * H] * ins[T + k]
        return out

    def backward(self, xp, ins, out, g, attrs, n, needs):
        H, K = attrs[0]
        T = len(ins) - K
        split = (K + 1) * H
        gc = g[:, :H]
        # d loss / d gate activations, back in the weights' order [i, f_1..f_K, o, u]
        d = xp.empty((n, (K + 3) * H) + g.shape[2:], dtype=g.dtype)
        d[:, :split] = g[:, 3 * H:]
        d[:, split:] = g[:, H:3 * H]
        d[:, :H] += gc * out[:, 2 * H:3 * H]     # d i += dc * u
        d[:, -H:] += gc * out[:, 3 * H:4 * H]    # d u += dc * i
        grads = [None] * len(ins)
        for k in range(K):
            d[:, (k + 1) * H:(k + 2) * H] += gc * ins[T + k]   # d f_k += dc * c_k
            if needs[T + k]:
                grads[T + k] = gc * out[:, (4 + k) * H:(5 + k) * H]   # d c_k = dc * f_k
        # times the activations' derivatives, s (1 - s) for the sigmoids and 1 - t^2 for
        # the candidate u, computed in the node's order [o, u, i, f...] and applied rotated
        acts = out[:, H:]
        slope = xp.subtract(1.0, acts)
        slope *= acts
        u, du = out[:, 2 * H:3 * H], slope[:, H:2 * H]
        xp.multiply(u, u, out=du)
        xp.subtract(1.0, du, out=du)
        d[:, :split] *= slope[:, 2 * H:]
        d[:, split:] *= slope[:, :2 * H]
        if needs[0]:
            grads[0] = bias_gradient(ins[0], d)
        return self.products_backward(xp, ins[:T], d, needs, grads)

    def describe_signature(self, key, graph=None):
        """``lstm_step-h256-K1-...``: hidden size, number of previous cells, then the terms
        and the cells read, as for any op."""
        rest = super().describe_signature((key[0],) + key[3:], graph)[len(key[0]):]
        return f"{key[0]}-h{key[1]}-K{key[2]}{rest}"


class LSTMStepOutput(Op):
    """``s -> o * tanh(c)`` for a step node ``s = [c, o, ...]``; attribute ``hidden``."""

    name = "lstm_step_h"
    cheap = True   # element-wise arithmetic: the agenda's tie-break runs it early
    arity = 1
    writes_output = True

    def infer_shape(self, shapes, attrs):
        s = shapes[0]
        if len(s) not in (1, 2) or s[0] % attrs or s[0] < 4 * attrs:
            raise self.error(f"reads an lstm_step node of hidden={attrs}, got shape {s}")
        return (attrs,) + s[1:]

    def signature(self, graph, args, attrs, shape):
        return (self.name, attrs, (2 * attrs,) + shape[1:]), ()

    def describe_signature(self, key, graph=None):
        return super().describe_signature(key, graph).replace("lstm_step_h-", "lstm_step_h-h", 1)

    def prefix_reads(self, key):
        return {0: key[2]}   # [c, o]: whatever the step's number of cells

    def memo_key(self, graph, args, attrs):
        return (self, attrs, graph.shapes[args[0]])

    def forward(self, xp, ins, attrs, n, out=None):
        H = attrs[0]
        co = ins[0]
        h = xp.tanh(co[:, :H], out=out)
        h *= co[:, H:]
        return h

    def backward(self, xp, ins, out, g, attrs, n, needs):
        H = attrs[0]
        co = ins[0]
        t = xp.tanh(co[:, :H])
        d = xp.empty_like(co)
        xp.multiply(g, t, out=d[:, H:])        # d o = g tanh(c)
        dc = d[:, :H]
        xp.multiply(t, t, out=dc)              # d c = g o (1 - tanh(c)^2)
        xp.subtract(1.0, dc, out=dc)
        dc *= co[:, H:]
        dc *= g
        return [d]


_STEP = register(LSTMStep())
_STEP_H = register(LSTMStepOutput())


def _check_cells(graph, cells, hidden: int) -> None:
    """A previous cell must be a cell (``hidden`` rows) or an ``lstm_step`` node of the same
    ``hidden``: any other node of 4, 5, ... blocks would otherwise be read as one."""
    for c in cells:
        if graph.shapes[c][:1] != (hidden,) and not (graph.ops[c] is _STEP
                                                    and graph.attrs[c][0] == hidden):
            raise ShapeError(f"lstm_step: previous cell node {c} of shape {graph.shapes[c]} is "
                             f"neither a cell of {hidden} rows nor an lstm_step node of "
                             f"hidden={hidden}")


def lstm_step(terms, cells, hidden: int):
    """One LSTM step's gates and new cell as one node ``[c, o, u, i, f_1..f_K]`` (see the
    module's docstring): ``terms = [b, W1, x1, ...]`` with the bias and weights in the gate
    order ``[i, f_1..f_K, o, u]``, ``cells`` the K previous cells or step nodes."""
    hidden = _positive(hidden, "lstm_step")
    terms, cells = list(terms), list(cells)
    graph, ids = as_nodes(terms + cells)
    _check_cells(graph, ids[len(terms):], hidden)
    return graph.add(_STEP, ids, (hidden, len(cells)))


def lstm_step_h(s):
    """The output ``o * tanh(c)`` of the ``lstm_step`` node ``s``."""
    if type(s) is not Expression or s.graph.ops[s.node] is not _STEP:
        raise ShapeError("lstm_step_h: reads an lstm_step node, got "
                         + (f"a {s.graph.ops[s.node].name} node" if type(s) is Expression
                            else type(s).__name__))
    return s.graph.add(_STEP_H, (s.node,), s.graph.attrs[s.node][0])


def lstm_step_cell(s):
    """The cell ``c`` (``hidden`` rows) of the ``lstm_step`` node ``s`` as an expression of
    its own (a ``pick_range`` node); a plain cell is returned as it is. Only needed to look
    at a cell: the next step reads it from ``s`` directly."""
    if type(s) is Expression and s.graph.ops[s.node] is _STEP:
        return pick_range(s, 0, s.graph.attrs[s.node][0])
    return s


_UNIT = object()  # first element of lstm_unit's memo keys (never equal to an Op's key)


def lstm_unit(b, weights, inputs, cells, hidden: int) -> tuple:
    """``(h, s)`` of one LSTM unit: ``s = lstm_step([b, W1, x1, ...], cells, hidden)`` and
    ``h = lstm_step_h(s)``. Pass ``s`` on as the next unit's cell.

    A sequence LSTM step is ``weights = [Wx, Wh]``, ``inputs = [x, h_prev]``,
    ``cells = [s_prev]``; a binary Tree-LSTM node is ``[U_L, U_R]``, ``[h_L, h_R]``,
    ``[s_L, s_R]``; a Tree-LSTM leaf is ``[W]``, ``[x]``, ``[]``.

    The nodes are exactly those the two functions build, but construction is paid on every
    step of every sentence, so after the first unit of a given kind the shapes and
    signatures come from the graph's memo instead of being checked and hashed again."""
    args = _unit_args(b, weights, inputs, cells, hidden)
    if args is None:  # not all plain parameters and valid expressions of one graph
        return _build_unit(b, weights, inputs, cells, hidden)
    graph = inputs[0].graph
    shapes, depths = graph.shapes, graph.depths
    cell_nodes = tuple(c.node for c in cells)
    key = (_UNIT, hidden, args[0], tuple(args[1::2]), tuple(shapes[a] for a in args[2::2]),
           tuple(shapes[c] for c in cell_nodes))
    known = graph.memo.get(key)
    if known is None:  # first unit of this kind in the graph: build it the checked way
        h, s = _build_unit(b, weights, inputs, cells, hidden)
        graph.memo[key] = (graph.sigs[s.node], shapes[s.node], graph.attrs[s.node],
                           graph.sigs[h.node], shapes[h.node])
        return h, s
    step_sig, step_shape, step_attrs, h_sig, h_shape = known
    depth = 0
    for a in args[2::2] + list(cell_nodes):
        if depths[a] > depth:
            depth = depths[a]
    s = graph.push(_STEP, tuple(args) + cell_nodes, step_attrs, step_shape, step_sig, depth + 1)
    h = graph.push(_STEP_H, (s.node,), hidden, h_shape, h_sig, depth + 2)
    return h, s


class UnitBuilder:
    """Builds many LSTM units of one kind - one bias, one list of weights - like
    :func:`lstm_unit`, with the per-unit bookkeeping done once.

    The first unit is built by :func:`lstm_unit` (every check, and the graph's memo). When
    the bias and weights are model parameters, their node ids, the input shapes and the two
    signatures are then known for the whole graph, so a later unit whose inputs are
    expressions of that graph with the same shapes, and whose cells are cells or step nodes
    of the same size, is two pushes. Anything else goes through :func:`lstm_unit` again,
    which reports mistakes at the user's line. The nodes are exactly those
    :func:`lstm_unit` builds. (Per-instance code: a sequence or a tree of one instance; the
    runtime still does the batching across instances.)"""

    def __init__(self, b, weights, hidden: int):
        self.b, self.weights, self.hidden = b, list(weights), int(hidden)
        self.graph = None  # the graph whose unit of this kind was learnt from

    def __call__(self, inputs, cells) -> tuple:
        """``(h, s)`` of one unit: ``inputs`` matched with the weights, previous ``cells``."""
        graph = self.graph
        if graph is not None and not graph.finished:
            xs = _nodes_of(graph, inputs, self.input_shapes)
            if xs is not None:
                cs = self._cell_nodes(graph, cells)
                if cs is not None:
                    return self._push(graph, xs, cs)
        h, s = lstm_unit(self.b, self.weights, list(inputs), tuple(cells), self.hidden)
        self._learn(h, s)
        return h, s

    def _learn(self, h, s) -> None:
        graph = h.graph
        step = s.node
        self.step_attrs = graph.attrs[step]
        K = self.step_attrs[1]
        args = graph.args[step]
        terms = args[:len(args) - K]
        if any(a not in graph.param_of_node for a in (terms[0],) + terms[1::2]):
            self.graph = None  # a bias or weight that is an expression: no shortcut
            return
        shapes, sigs = graph.shapes, graph.sigs
        self.graph = graph
        self.template = list(terms)  # [b, W1, x1, ...]: the x slots change per unit
        self.input_shapes = [shapes[a] for a in terms[2::2]]
        self.n_cells = K
        self.tail = shapes[step][1:]
        self.kinds = (sigs[step], shapes[step], sigs[h.node], shapes[h.node])

    def _cell_nodes(self, graph, cells):
        """The node ids of ``cells`` when each is a cell or a step node that this unit reads
        like the learnt one (same ``hidden`` and columns); None otherwise."""
        hidden, tail = self.hidden, self.tail
        ops, shapes, attrs = graph.ops, graph.shapes, graph.attrs
        nodes = []
        for c in cells:
            if type(c) is not Expression or c.graph is not graph:
                return None
            n = c.node
            shape = shapes[n]
            if shape[1:] != tail or (shape[0] != hidden
                                     and (ops[n] is not _STEP or attrs[n][0] != hidden)):
                return None
            nodes.append(n)
        return nodes if len(nodes) == self.n_cells else None

    def _push(self, graph, xs, cs) -> tuple:
        step_sig, step_shape, h_sig, h_shape = self.kinds
        depths, push = graph.depths, graph.push
        template = self.template
        template[2::2] = xs
        depth = 0
        for a in xs + cs:
            if depths[a] > depth:
                depth = depths[a]
        s = push(_STEP, tuple(template + cs), self.step_attrs, step_shape, step_sig, depth + 1)
        h = push(_STEP_H, (s.node,), self.hidden, h_shape, h_sig, depth + 2)
        return h, s

    def sequence(self, steps, h, s) -> list:
        """``[(h_1, s_1), ..., (h_T, s_T)]``: a sequence LSTM's units from the state
        ``(h, s)``, step ``t`` reading the input pieces ``steps[t]`` (see
        :func:`lstm_sequence`).

        Once the builder knows this graph's unit, ``h`` and ``s`` are nodes it built, so
        only the input pieces need checking: every following step whose pieces pass is
        appended in one ``push_steps``. A step whose pieces do not pass goes through the
        checked path (which reports the mistake at the user's line, or builds it the general
        way)."""
        return self._sequence(steps, h, s, states=True)

    def outputs(self, steps, h, s) -> list:
        """``[h_1, ..., h_T]``: the same nodes as :meth:`sequence`, only the outputs handed
        back (a BiLSTM's ``transduce`` needs nothing else: no expression is made for the
        step nodes)."""
        return self._sequence(steps, h, s, states=False)

    def _sequence(self, steps, h, s, states: bool) -> list:
        steps = list(steps)
        out: list = []
        ours = False  # whether (h, s) came from this builder, in self.graph
        t = 0
        while t < len(steps):
            graph = self.graph
            if ours and not graph.finished:
                checked = _checked_steps(graph, steps, t, self.input_shapes[:-1])
                if checked:
                    first = self.push_steps(graph, checked, h.node, s.node)
                    n_steps = len(checked) // (len(self.input_shapes) - 1)
                    last = first + 2 * n_steps
                    if states:
                        out += [(Expression(graph, n + 1), Expression(graph, n))
                                for n in range(first, last, 2)]
                    else:
                        out += [Expression(graph, n) for n in range(first + 1, last, 2)]
                    h, s = Expression(graph, last - 1), Expression(graph, last - 2)
                    t += n_steps
                    continue
            h, s = self(list(steps[t]) + [h], (s,))
            ours = self.graph is not None
            out.append((h, s) if states else h)
            t += 1
        return out

    def push_steps(self, graph, inputs: list, h: int, s: int) -> int:
        """Sequence steps from the state ``(h, s)`` (node ids of this graph that this
        builder made) reading ``inputs``, the checked input node ids of all steps, one after
        another (as many per step as the unit has input pieces besides ``h``): the nodes
        :meth:`_push` would append step by step, appended to the graph's lists at once.
        Returns the first new node id: step ``t``'s step node is ``first + 2 t``, its output
        the next."""
        step_sig, step_shape, h_sig, h_shape = self.kinds
        step_attrs, hidden = self.step_attrs, self.hidden
        template = self.template
        depths = graph.depths
        first = node = len(graph.ops)
        args, node_depths = [], []
        dh = depths[h]  # (the output is always one deeper than its step node)
        k = len(template) // 2 - 1  # input pieces per step, h aside
        if k == 1:    # [b, W, x, Wh, h]: a first layer; written out, without the slicing
            b, W, Wh = template[0], template[1], template[3]
            for x in inputs:
                d = depths[x]
                d = (d if d > dh else dh) + 1     # the step's
                dh = d + 1                        # the output's
                args += ((b, W, x, Wh, h, s), (node,))
                node_depths += (d, dh)
                s, h = node, node + 1
                node += 2
        elif k == 2:  # [b, Wf, f, Wb, b, Wh, h]: a BiLSTM's upper layer, likewise
            b, Wf, Wb, Wh = template[0], template[1], template[3], template[5]
            for j in range(0, len(inputs), 2):
                f, x = inputs[j], inputs[j + 1]
                d, dx = depths[f], depths[x]
                d = (d if d > dx else dx)
                d = (d if d > dh else dh) + 1
                dh = d + 1
                args += ((b, Wf, f, Wb, x, Wh, h, s), (node,))
                node_depths += (d, dh)
                s, h = node, node + 1
                node += 2
        else:
            for j in range(0, len(inputs), k):
                xs = inputs[j:j + k]
                d = max(map(depths.__getitem__, xs))
                template[2::2] = xs + [h]
                d = (d if d > dh else dh) + 1
                dh = d + 1
                args += (tuple(template) + (s,), (node,))
                node_depths += (d, dh)
                s, h = node, node + 1
                node += 2
        T = (node - first) // 2
        graph.push_many([_STEP, _STEP_H] * T, args, [step_attrs, hidden] * T,
                        [step_shape, h_shape] * T, [step_sig, h_sig] * T, node_depths)
        return first


def _nodes_of(graph, expressions, shapes_wanted):
    """The node ids of ``expressions`` when they are expressions of ``graph`` with the
    shapes ``shapes_wanted``; None otherwise."""
    nodes = [e.node for e in expressions if type(e) is Expression and e.graph is graph]
    if len(nodes) != len(expressions) or [graph.shapes[a] for a in nodes] != shapes_wanted:
        return None
    return nodes


def lstm_sequence(b, weights, steps, h, s, hidden: int) -> list:
    """``[(h_1, s_1), ..., (h_T, s_T)]`` of a sequence LSTM started from ``(h, s)`` (``s``
    a cell or a step node): ``lstm_unit(b, weights, steps[t] + [h_{t-1}], (s_{t-1},),
    hidden)`` for every step (``steps[t]``: the list of input pieces at step ``t``;
    ``weights``: one matrix per piece, then ``Wh``), built by one :class:`UnitBuilder`
    (see its ``sequence``)."""
    return UnitBuilder(b, weights, hidden).sequence(steps, h, s)


def _checked_steps(graph, steps, t: int, shapes_wanted) -> list:
    """The node ids of the input pieces of ``steps[t]``, ``steps[t + 1]``, ...: as many
    steps as pass :func:`_nodes_of` in a row (possibly none), as one flat list (``k`` ids
    per step, ``k = len(shapes_wanted)``).

    Usually every step passes: the pieces of all steps are then checked together (one list
    of node ids, one comparison of their shapes), and step by step only when some fail."""
    rest = steps[t:]
    k = len(shapes_wanted)
    flat = [e for pieces in rest if len(pieces) == k for e in pieces]
    if len(flat) == k * len(rest):
        nodes = [e.node for e in flat if type(e) is Expression and e.graph is graph]
        if (len(nodes) == len(flat)
                and list(map(graph.shapes.__getitem__, nodes)) == shapes_wanted * len(rest)):
            return nodes
    checked = []
    for pieces in rest:
        xs = _nodes_of(graph, pieces, shapes_wanted)
        if xs is None:
            break
        checked += xs
    return checked


def _build_unit(b, weights, inputs, cells, hidden):
    if len(weights) != len(inputs):
        raise ValueError(f"lstm_unit: {len(weights)} weight matrices but {len(inputs)} inputs; "
                         "give one matrix per input")
    terms = [b]
    for W, x in zip(weights, inputs):
        terms += [W, x]
    s = lstm_step(terms, cells, hidden)
    return lstm_step_h(s), s


def _unit_args(b, weights, inputs, cells, hidden):
    """The step node's term ids ``[b, W1, x1, ...]`` when every weight is a parameter, every
    input an expression of one live graph and every cell a cell or step node of it that the
    step can read; None otherwise."""
    first = inputs[0] if inputs else None
    if type(first) is not Expression or len(weights) != len(inputs):
        return None
    graph = first.graph
    if graph.finished:
        return None
    param_node = graph.param_node
    node = param_node.get(id(b))
    if node is None:
        if not isinstance(b, ParameterBase):
            return None
        node = graph.parameter_node(b)
    args = [node]
    for W, x in zip(weights, inputs):
        node = param_node.get(id(W))
        if node is None:
            if not isinstance(W, ParameterBase):
                return None
            node = graph.parameter_node(W)
        if type(x) is not Expression or x.graph is not graph:
            return None
        args.append(node)
        args.append(x.node)
    ops, shapes, attrs = graph.ops, graph.shapes, graph.attrs
    for c in cells:
        if type(c) is not Expression or c.graph is not graph:
            return None
        n = c.node
        if shapes[n][:1] != (hidden,) and (ops[n] is not _STEP or attrs[n][0] != hidden):
            return None  # the checked path says what is wrong
    return args


__all__ = ["lstm_step", "lstm_step_h", "lstm_step_cell", "lstm_unit", "lstm_sequence",
           "UnitBuilder"]
