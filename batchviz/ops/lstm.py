"""Fused LSTM ops: three nodes per LSTM step instead of about fifteen.

Written naively, one LSTM step is an affine transform, a slice per gate, three sigmoids, a
tanh, three products, a sum and another tanh: about fifteen nodes. Every node costs graph
construction, scheduling and a kernel launch, so (like DyNet's ``vanilla_lstm_*``) batchviz
offers the step as three ops whose signatures still batch across instances:

* ``lstm_gates([b, W1, x1, W2, x2, ...], hidden)``: the pre-activations ``b + sum W_j x_j``
  passed through the gate nonlinearities. The result has ``k`` blocks of ``hidden`` rows:
  every block but the last is a sigmoid gate, the last is the tanh *candidate* ``u``.
* ``lstm_c([c_1, ..., c_K], gates)``: the new memory cell ``i*u + f_1*c_1 + ... + f_K*c_K``
  for a gate layout ``[i, f_1, ..., f_K, o, u]`` (K = 1: a sequence LSTM; K = 2: a binary
  Tree-LSTM node of Tai et al., 2015, with one forget gate per child; K = 0: a Tree-LSTM
  leaf).
* ``lstm_h(c, gates)``: the output ``o * tanh(c)``; ``o`` is always the second-to-last block.

Signatures follow the paper's Appendix A like ``affine_transform``: a weight or bias that is
a model parameter is a *shared* argument (its node id is in the signature), so the gates of
all instances at one step become one matrix-matrix product ``W @ [x_1 ... x_n]``.

Inputs are vectors ``(d,)``, or matrices ``(d, m)`` whose ``m`` columns are instances
(manual batching): the bias ``(k*hidden,)`` is then added to every column.
"""
from __future__ import annotations

import numpy as np

from ..expression import Expression
from ..model import ParameterBase
from .base import BlockGradient, Op, register
from ._build import build
from .linalg import AffineArguments, _mm_shape


def _columns(op, shapes, what):
    """The trailing (column) dimensions shared by all of ``shapes``: ``()`` or ``(m,)``."""
    tails = {s[1:] for s in shapes}
    if len(tails) != 1:
        raise op.error(f"{what} must all be vectors or all have the same number of columns, "
                       "got shapes " + ", ".join(str(s) for s in shapes))
    tail = tails.pop()
    if len(tail) > 1:
        raise op.error(f"{what} must be vectors or matrices, got shapes {shapes}")
    return tail


def _bias_view(b, out):
    """``b`` shaped to broadcast against ``out``: shared ``(D,)`` or stacked ``(n, D)``
    biases, for vector outputs ``(n, D)`` or column outputs ``(n, D, m)``."""
    if out.ndim == 3:
        return b[..., None]
    return b


def _sigmoid_(x, xp):
    """In-place logistic sigmoid ``1 / (1 + exp(-x))``. For x < -88 (float32) ``exp``
    overflows to inf and the result is the correct 0; NumPy's warning about it is silenced.
    (``exp`` is about 1.5x faster than ``tanh`` in NumPy, and this runs on every gate.)"""
    xp.negative(x, out=x)
    if xp is np:
        with np.errstate(over="ignore"):
            np.exp(x, out=x)
    else:
        xp.exp(x, out=x)
    x += 1.0
    xp.reciprocal(x, out=x)


def _scale_by_derivative(d, g, out, hidden, xp):
    """``d = g * activation'`` from the stored activations ``out``: ``s (1 - s)`` for the
    sigmoid gates, ``1 - t^2`` for the tanh candidate; in place, without temporaries.
    The sigmoid form is applied to the whole contiguous block first and the candidate's
    columns are then overwritten: about twice as fast as working on column slices."""
    xp.subtract(1.0, out, out=d)
    d *= out
    d *= g
    dt, t = d[:, -hidden:], out[:, -hidden:]
    xp.multiply(t, t, out=dt)
    xp.subtract(1.0, dt, out=dt)
    dt *= g[:, -hidden:]


class LSTMGates(AffineArguments):
    """``[b, W1, x1, ...] -> sigmoid/tanh(b + sum_j W_j x_j)`` in blocks of ``hidden`` rows."""

    name = "lstm_gates"
    cheap = False
    arity = None

    def infer_shape(self, shapes, attrs):
        hidden = attrs
        if len(shapes) < 3 or len(shapes) % 2 == 0:
            raise self.error("takes [b, W1, x1, W2, x2, ...]: an odd number (>= 3) of "
                             f"expressions, got {len(shapes)}")
        b = shapes[0]
        if len(b) != 1:
            raise self.error(f"the bias must be a vector, got shape {b}")
        if b[0] % hidden or b[0] // hidden < 3:
            raise self.error(f"the bias has {b[0]} rows, which is not 3 or more blocks of "
                             f"hidden={hidden} rows (gates [i, f..., o, u])")
        tail = _columns(self, list(shapes[2::2]), "the inputs x_j")
        for i in range(1, len(shapes), 2):
            term = _mm_shape(self, shapes[i], shapes[i + 1])
            if term[0] != b[0]:
                raise self.error(f"term {i // 2 + 1} (W{shapes[i]} @ x{shapes[i + 1]}) has "
                                 f"{term[0]} rows but the bias has {b[0]}")
        return b + tail

    def signature_prefix(self, attrs):
        return (attrs,)

    def forward(self, xp, ins, attrs, n):
        hidden = attrs[0]
        total = self.products(xp, ins)
        total += _bias_view(ins[0], total)
        # tanh(x) = 2 sigmoid(2x) - 1: one sigmoid over the whole contiguous block is
        # faster than a sigmoid and a tanh over column slices of every row
        u = total[:, -hidden:]
        u *= 2.0
        _sigmoid_(total, xp)
        u *= 2.0
        u -= 1.0
        return total

    def backward(self, xp, ins, out, g, attrs, n, needs):
        hidden = attrs[0]
        d = xp.empty_like(g)  # d loss / d pre-activation
        _scale_by_derivative(d, g, out, hidden, xp)
        grads = [None] * len(ins)
        if needs[0]:
            b = ins[0]
            if b.ndim == 1:  # shared bias: summed over the batch (and over columns)
                grads[0] = d.sum(axis=(0, 2)) if d.ndim == 3 else d.sum(axis=0)
            else:
                grads[0] = d.sum(axis=2) if d.ndim == 3 else d
        return self.products_backward(xp, ins, d, needs, grads)

    def describe_signature(self, key, graph=None):
        return super().describe_signature(key, graph).replace("lstm_gates-", "lstm_gates-h", 1)


def _blocks(op, gates_shape, hidden):
    rows = gates_shape[0]
    if rows % hidden:
        raise op.error(f"gates have {rows} rows, not a multiple of the cell size {hidden}")
    return rows // hidden


class LSTMCell(Op):
    """``(c_1, ..., c_K, gates) -> i*u + sum_k f_k*c_k`` for gates ``[i, f_1..f_K, o, u]``."""

    name = "lstm_c"
    cheap = True   # element-wise arithmetic: the agenda's tie-break runs it early
    arity = None

    def infer_shape(self, shapes, attrs):
        *cells, gates = shapes
        if len(gates) not in (1, 2):
            raise self.error(f"gates must be a vector or a matrix, got shape {gates}")
        k = len(cells)
        if gates[0] % (k + 3):
            raise self.error(f"with {k} previous cells the gates need {k + 3} blocks "
                             f"[i, f x{k}, o, u], but {gates[0]} rows do not split into {k + 3}")
        hidden = gates[0] // (k + 3)
        expected = (hidden,) + gates[1:]
        for c in cells:
            if c != expected:
                raise self.error(f"previous cell of shape {c} does not match gates of shape "
                                 f"{gates} (expected {expected})")
        return expected

    def memo_key(self, graph, args, attrs):
        shapes = graph.shapes
        return (self,) + tuple(shapes[a] for a in args)

    def forward(self, xp, ins, attrs, n):
        *cells, G = ins
        hidden = G.shape[1] // (len(cells) + 3)
        c = G[:, :hidden] * G[:, -hidden:]
        for k, prev in enumerate(cells, start=1):
            c += G[:, k * hidden:(k + 1) * hidden] * prev
        return c

    def backward(self, xp, ins, out, g, attrs, n, needs):
        *cells, G = ins
        hidden = G.shape[1] // (len(cells) + 3)
        grads = []
        for k, prev in enumerate(cells, start=1):
            grads.append(g * G[:, k * hidden:(k + 1) * hidden] if needs[k - 1] else None)
        if needs[-1]:
            K = len(cells)
            dG = xp.empty_like(G)
            xp.multiply(g, G[:, -hidden:], out=dG[:, :hidden])               # d i = g u
            for k, prev in enumerate(cells, start=1):
                xp.multiply(g, prev, out=dG[:, k * hidden:(k + 1) * hidden])  # d f_k = g c_k
            dG[:, (K + 1) * hidden:(K + 2) * hidden] = 0.0                    # o: not used here
            xp.multiply(g, G[:, :hidden], out=dG[:, -hidden:])               # d u = g i
            grads.append(dG)
        else:
            grads.append(None)
        return grads


class LSTMOutput(Op):
    """``(c, gates) -> o * tanh(c)``; ``o`` is the second-to-last block of the gates."""

    name = "lstm_h"
    cheap = True   # element-wise arithmetic: the agenda's tie-break runs it early
    arity = 2

    def infer_shape(self, shapes, attrs):
        c, gates = shapes
        if len(c) not in (1, 2) or c[1:] != gates[1:]:
            raise self.error(f"cell {c} and gates {gates} must both be vectors or have the "
                             "same number of columns")
        if _blocks(self, gates, c[0]) < 3:
            raise self.error(f"gates of shape {gates} have fewer than 3 blocks of {c[0]} rows")
        return c

    def memo_key(self, graph, args, attrs):
        shapes = graph.shapes
        return (self, shapes[args[0]], shapes[args[1]])

    def forward(self, xp, ins, attrs, n):
        c, G = ins
        hidden = c.shape[1]
        h = xp.tanh(c)
        h *= G[:, -2 * hidden:-hidden]
        return h

    def backward(self, xp, ins, out, g, attrs, n, needs):
        c, G = ins
        hidden = c.shape[1]
        t = xp.tanh(c)
        o = G[:, -2 * hidden:-hidden]
        dG = None
        if needs[1]:  # only the o block of the gates reaches the output
            rows = G.shape[1]
            dG = BlockGradient(G.shape, rows - 2 * hidden, rows - hidden, g * t)
        dc = None
        if needs[0]:
            xp.multiply(t, t, out=t)      # t is ours: reuse it for 1 - t^2
            xp.subtract(1.0, t, out=t)
            t *= o
            t *= g
            dc = t
        return [dc, dG]


_GATES = register(LSTMGates())
_CELL = register(LSTMCell())
_OUTPUT = register(LSTMOutput())


def lstm_gates(terms, hidden: int):
    """Gate activations from ``[b, W1, x1, W2, x2, ...]``: ``b + sum W_j x_j`` in blocks of
    ``hidden`` rows, sigmoid on every block but the last, tanh on the last (the candidate)."""
    hidden = int(hidden)
    if hidden <= 0:
        raise ValueError(f"lstm_gates: hidden must be positive, got {hidden}")
    return build(_GATES, list(terms), hidden)


def lstm_c(cells, gates):
    """New memory cell ``i*u + f_1*c_1 + ... + f_K*c_K`` from gates ``[i, f_1..f_K, o, u]``."""
    return build(_CELL, list(cells) + [gates])


def lstm_h(c, gates):
    """LSTM output ``o * tanh(c)``, ``o`` being the second-to-last block of ``gates``."""
    return build(_OUTPUT, (c, gates))


_UNIT = object()  # first element of lstm_unit's memo keys (never equal to an Op's key)


def lstm_unit(b, weights, inputs, cells, hidden: int) -> tuple:
    """``(h, c)`` of one LSTM unit: the three nodes ``lstm_gates([b, W1, x1, ...])``,
    ``lstm_c(cells, gates)`` and ``lstm_h(c, gates)`` built in one call.

    A sequence LSTM step is ``weights = [Wx, Wh]``, ``inputs = [x, h_prev]``,
    ``cells = [c_prev]``; a binary Tree-LSTM node is ``[U_L, U_R]``, ``[h_L, h_R]``,
    ``[c_L, c_R]``; a Tree-LSTM leaf is ``[W]``, ``[x]``, ``[]``.

    The nodes are exactly those the three functions build, but construction is paid on
    every step of every sentence, so after the first unit of a given shape the shapes and
    signatures come from the graph's memo instead of being checked and hashed again.
    """
    args = _unit_args(b, weights, inputs, cells)
    if args is None:  # not all plain parameters and expressions of one graph
        return _build_unit(b, weights, inputs, cells, hidden)
    graph = inputs[0].graph
    shapes, depths = graph.shapes, graph.depths
    cell_nodes = tuple(c.node for c in cells)
    key = (_UNIT, hidden, args[0], tuple(args[1::2]), tuple(shapes[a] for a in args[2::2]),
           tuple(shapes[c] for c in cell_nodes))
    known = graph.memo.get(key)
    if known is None:  # first unit of this kind in the graph: build it the checked way
        h, c = _build_unit(b, weights, inputs, cells, hidden)
        gates = graph.args[h.node][1]
        sigs = graph.sigs
        graph.memo[key] = (sigs[gates], shapes[gates], sigs[c.node], shapes[c.node], sigs[h.node])
        return h, c
    gates_sig, gates_shape, c_sig, c_shape, h_sig = known
    depth = 0
    for a in args[2::2]:
        if depths[a] > depth:
            depth = depths[a]
    gates = graph.push(_GATES, tuple(args), hidden, gates_shape, gates_sig, depth + 1)
    depth += 1
    for a in cell_nodes:
        if depths[a] > depth:
            depth = depths[a]
    c = graph.push(_CELL, cell_nodes + (gates.node,), None, c_shape, c_sig, depth + 1)
    h = graph.push(_OUTPUT, (c.node, gates.node), None, c_shape, h_sig, depth + 2)
    return h, c


class UnitBuilder:
    """Builds many LSTM units of one kind - one bias, one list of weights - like
    :func:`lstm_unit`, with the per-unit bookkeeping done once.

    The first unit is built by :func:`lstm_unit` (every check, and the graph's memo). When
    the bias and weights are model parameters, their node ids, the input and cell shapes and
    the three signatures are then known for the whole graph, so a later unit whose inputs
    and cells are expressions of that graph with the same shapes is three pushes. Anything
    else goes through :func:`lstm_unit` again, which reports mistakes at the user's line.
    The nodes are exactly those :func:`lstm_unit` builds. (Per-instance code: a sequence or
    a tree of one instance; the runtime still does the batching across instances.)"""

    def __init__(self, b, weights, hidden: int):
        self.b, self.weights, self.hidden = b, list(weights), int(hidden)
        self.graph = None  # the graph whose unit of this kind was learnt from

    def __call__(self, inputs, cells) -> tuple:
        """``(h, c)`` of one unit: ``inputs`` matched with the weights, previous ``cells``."""
        graph = self.graph
        if graph is not None and not graph.finished:
            xs = _nodes_of(graph, inputs, self.input_shapes)
            if xs is not None:
                cs = _nodes_of(graph, cells, self.cell_shapes)
                if cs is not None:
                    return self._push(graph, xs, cs)
        h, c = lstm_unit(self.b, self.weights, list(inputs), tuple(cells), self.hidden)
        self._learn(h, c)
        return h, c

    def _learn(self, h, c) -> None:
        graph = h.graph
        gates = graph.args[h.node][1]
        args = graph.args[gates]
        if any(a not in graph.param_of_node for a in (args[0],) + args[1::2]):
            self.graph = None  # a bias or weight that is an expression: no shortcut
            return
        shapes, sigs = graph.shapes, graph.sigs
        self.graph = graph
        self.template = list(args)  # [b, W1, x1, ...]: the x slots change per unit
        self.input_shapes = [shapes[a] for a in args[2::2]]
        self.cell_shapes = [shapes[a] for a in graph.args[c.node][:-1]]
        self.kinds = (sigs[gates], shapes[gates], sigs[c.node], shapes[c.node], sigs[h.node])

    def _push(self, graph, xs, cs) -> tuple:
        gates_sig, gates_shape, c_sig, c_shape, h_sig = self.kinds
        depths, push = graph.depths, graph.push
        template = self.template
        template[2::2] = xs
        depth = 0
        for a in xs:
            if depths[a] > depth:
                depth = depths[a]
        depth += 1  # the gates'
        g = push(_GATES, tuple(template), self.hidden, gates_shape, gates_sig, depth).node
        for a in cs:
            if depths[a] > depth:
                depth = depths[a]
        c = push(_CELL, tuple(cs) + (g,), None, c_shape, c_sig, depth + 1)
        h = push(_OUTPUT, (c.node, g), None, c_shape, h_sig, depth + 2)
        return h, c

    def sequence(self, steps, h, c) -> list:
        """``[(h_1, c_1), ..., (h_T, c_T)]``: a sequence LSTM's units from the state
        ``(h, c)``, step ``t`` reading the input pieces ``steps[t]`` (see
        :func:`lstm_sequence`).

        Once the builder knows this graph's unit, ``h`` and ``c`` are nodes of the learnt
        shapes, so only the input pieces need checking: every following step whose pieces
        pass is appended in one ``push_steps``. A step whose pieces do not pass goes through
        the checked path (which reports the mistake at the user's line, or builds it the
        general way)."""
        steps = list(steps)
        out: list = []
        ours = False  # whether (h, c) came from this builder, in self.graph
        t = 0
        while t < len(steps):
            graph = self.graph
            if ours and not graph.finished:
                checked = _checked_steps(graph, steps, t, self.input_shapes[:-1])
                if checked:
                    out += self.push_steps(graph, checked, h.node, c.node)
                    t += len(checked)
                    h, c = out[-1]
                    continue
            h, c = self(list(steps[t]) + [h], (c,))
            ours = self.graph is not None
            out.append((h, c))
            t += 1
        return out

    def push_steps(self, graph, inputs: list, h: int, c: int) -> list:
        """Sequence steps from the state ``(h, c)`` (node ids of this graph, of the learnt
        shapes), one per item of ``inputs`` (the checked input node ids of each step, without
        ``h``): the nodes :meth:`_push` would append step by step, appended to the graph's
        lists at once. Returns the ``(h, c)`` expressions of every step."""
        gates_sig, gates_shape, c_sig, c_shape, h_sig = self.kinds
        template = self.template
        depths = graph.depths
        first = g = len(graph.ops)
        args, node_depths = [], []
        dh, dc = depths[h], depths[c]
        one_piece = len(template) == 5
        if one_piece:
            b, W, Wh = template[0], template[1], template[3]
        for xs in inputs:
            if one_piece:  # [b, W, x, Wh, h]: the common case, without the slicing
                x = xs[0]
                d = depths[x]
                gates_args = (b, W, x, Wh, h)
            else:
                d = max(map(depths.__getitem__, xs))
                template[2::2] = xs + [h]
                gates_args = tuple(template)
            d = (d if d > dh else dh) + 1     # the gates'
            dc = (d if d > dc else dc) + 1    # the cell's
            dh = dc + 1                       # the output's
            args += (gates_args, (c, g), (g + 1, g))
            node_depths += (d, dc, dh)
            c, h = g + 1, g + 2
            g += 3
        T = len(inputs)
        graph.push_many([_GATES, _CELL, _OUTPUT] * T, args, [self.hidden, None, None] * T,
                        [gates_shape, c_shape, c_shape] * T, [gates_sig, c_sig, h_sig] * T,
                        node_depths)
        return [(Expression(graph, n + 2), Expression(graph, n + 1))
                for n in range(first, g, 3)]


def _nodes_of(graph, expressions, shapes_wanted):
    """The node ids of ``expressions`` when they are expressions of ``graph`` with the
    shapes ``shapes_wanted``; None otherwise."""
    nodes = [e.node for e in expressions if type(e) is Expression and e.graph is graph]
    if len(nodes) != len(expressions) or [graph.shapes[a] for a in nodes] != shapes_wanted:
        return None
    return nodes


def lstm_sequence(b, weights, steps, h, c, hidden: int) -> list:
    """``[(h_1, c_1), ..., (h_T, c_T)]`` of a sequence LSTM started from ``(h, c)``:
    ``lstm_unit(b, weights, steps[t] + [h_{t-1}], (c_{t-1},), hidden)`` for every step
    (``steps[t]``: the list of input pieces at step ``t``; ``weights``: one matrix per
    piece, then ``Wh``), built by one :class:`UnitBuilder` (see its ``sequence``)."""
    return UnitBuilder(b, weights, hidden).sequence(steps, h, c)


def _checked_steps(graph, steps, t: int, shapes_wanted) -> list:
    """The node ids of the input pieces of ``steps[t]``, ``steps[t + 1]``, ...: as many
    steps as pass :func:`_nodes_of` in a row (possibly none)."""
    checked = []
    for pieces in steps[t:]:
        xs = _nodes_of(graph, pieces, shapes_wanted)
        if xs is None:
            break
        checked.append(xs)
    return checked


def _build_unit(b, weights, inputs, cells, hidden):
    terms = [b]
    for W, x in zip(weights, inputs):
        terms += [W, x]
    gates = lstm_gates(terms, hidden)
    c = lstm_c(cells, gates)
    return lstm_h(c, gates), c


def _unit_args(b, weights, inputs, cells):
    """The gates node's argument ids ``[b, W1, x1, ...]`` when every weight is a parameter and
    every input and cell an expression of one live graph; None otherwise."""
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
    for c in cells:
        if type(c) is not Expression or c.graph is not graph:
            return None
    return args


def vanilla_lstm_gates(x, h_prev, Wx, Wh, b):
    """DyNet's ``vanilla_lstm_gates``: gates ``[i, f, o, g]`` of one LSTM step.

    ``x`` may be a list of input pieces (e.g. the forward and backward states of a lower
    BiLSTM layer); then ``Wx`` is a list with one matrix per piece, which saves the
    ``concatenate`` node. ``h_prev=None`` leaves out the recurrent term (a first step)."""
    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    Ws = list(Wx) if isinstance(Wx, (list, tuple)) else [Wx]
    if len(xs) != len(Ws):
        raise ValueError(f"vanilla_lstm_gates: {len(xs)} input pieces but {len(Ws)} input "
                         "weight matrices; give one matrix per piece")
    terms = [b]
    for W, xi in zip(Ws, xs):
        terms += [W, xi]
    if h_prev is not None:
        terms += [Wh, h_prev]
    hidden = Wh.shape[1]
    return lstm_gates(terms, hidden)


def vanilla_lstm_c(c_prev, gates):
    """DyNet's ``vanilla_lstm_c``: ``f * c_prev + i * g``."""
    return lstm_c([c_prev], gates)


def vanilla_lstm_h(c, gates):
    """DyNet's ``vanilla_lstm_h``: ``o * tanh(c)``."""
    return lstm_h(c, gates)


__all__ = ["lstm_gates", "lstm_c", "lstm_h", "lstm_unit", "lstm_sequence", "UnitBuilder", "vanilla_lstm_gates", "vanilla_lstm_c",
           "vanilla_lstm_h"]
