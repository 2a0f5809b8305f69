"""An LSTM step as one node: what the builders (``batchviz.nn``) build.

:mod:`batchviz.ops.lstm` has DyNet's three fused ops (gates, cell, output). Every node costs
graph construction, scheduling and Python work per batch, and a BiLSTM tagger's minibatch
is mostly LSTM steps, so the builders make each step one node:

``lstm_step([b, W1, x1, W2, x2, ...], [c_1, ..., c_K], hidden)`` computes the gates
``sigmoid/tanh(b + sum_j W_j x_j)``, the new cell ``c = i*u + f_1*c_1 + ... + f_K*c_K``
and the output ``h = o * tanh(c)``. Its *value* is ``h``: any op that reads the node reads
``h``, the next step's ``W_h h`` included. But the node *keeps* more than its value
(:meth:`~batchviz.ops.base.Op.storage_blocks`, DyNet's auxiliary memory per node): the
blocks ``[h, c, i, f_1..f_K, o, u]`` (each of the value's shape), the cell for the next
step and the gates for the backward pass, in the weights' gate order ``[i, f_1..f_K, o, u]``.
A batch lays them out block by block, so a batch's ``h`` are back to back like any values.

A previous cell ``c_k`` is either a plain vector of ``hidden`` rows or a previous step
node, of which the step reads block 1, the cell
(:meth:`~batchviz.ops.base.Op.block_reads`): so a Tree-LSTM node batches with every other
node whatever its children are (leaves, which keep one gate block fewer, or inner nodes),
and no node is ever added just to cut a cell out of another.
:func:`lstm_step_cell` is that cut, for a user who wants to look at a cell.

K = 1 is a sequence LSTM, K = 2 a binary Tree-LSTM node (Tai et al., 2015: a forget gate
per child), K = 0 a Tree-LSTM leaf. As for ``lstm_gates``, a bias or weight that is a model
parameter is a shared argument (Appendix A), inputs may be matrices whose columns are
instances (manual batching), and :func:`lstm_unit` and :class:`UnitBuilder` build many
units with the per-node checks done once.

A sequence LSTM's step is built as two nodes (:func:`sequence_step`): its input projection
``p = b + W_x x``, which needs only the input, and ``lstm_step([p, W_h, h], [c])``, whose
bias ``p`` is then one per node (a vector, or a matrix with the inputs' columns). The agenda
runs all the projections of a minibatch as one large product instead of one small product
per step batch. :class:`SequenceBuilder` and :func:`lstm_sequence` build whole sequences
of such steps with the checks done once.
"""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..graph import ExpressionBase
from ..parameters import ParameterBase
from ._build import as_nodes
from ._build import expression_list
from .base import Op, register
from .columns import affine_batch
from .linalg import AffineArguments, affine_terms, affine_transform
from . import lstm_kernels
from .lstm import activated_gates_into, bias_gradient, gates_as_rows, gates_shape


def _positive(hidden, who: str) -> int:
    hidden = int(hidden)
    if hidden <= 0:
        raise ValueError(f"{who}: hidden must be positive, got {hidden}")
    return hidden


#: what a step's signature names for a previous cell that is a step node: it reads block 1
CELL_OF_STEP = "cell of lstm_step"


class LSTMStep(AffineArguments):
    """``[b, W1, x1, ..., c_1, ..., c_K] -> h``, keeping ``[h, c, i, f_1..f_K, o, u]``.

    Attributes ``(hidden, K)``. Argument positions: the terms ``[b, W1, x1, ...]`` first
    (their bias and weights shared when they are parameters, as in ``lstm_gates``), then the
    ``K`` previous cells: plain cells, read as they are, or step nodes, of which block 1,
    the cell, is read (the signature says which, so a batch reads all its cells one way).

    A batch of ``n`` nodes keeps its memory block by block (``Op.storage_blocks``): the
    kernel writes an array ``(K + 5, n) + shape``, whose block ``k`` is the ``(n,) + shape``
    array of every node's ``k``-th block. So the outputs ``h`` of a batch lie back to
    back (the next step's ``W_h h`` reads them as a view) and every gate is one contiguous
    array for the element-wise work, as if the batch had been written by hand."""

    name = "lstm_step"
    cheap = False
    arity = None
    writes_output = True
    shares_matrix_bias = False

    def infer_shape(self, shapes, attrs):
        hidden, K = attrs
        terms, cells = shapes[:len(shapes) - K], shapes[len(shapes) - K:]
        gates = gates_shape(self, terms, hidden, blocks=K + 3)
        value = (hidden,) + gates[1:]
        for c in cells:
            if c != value:
                raise self.error(f"previous cell of shape {c} is neither a cell nor an "
                                 f"lstm_step node of shape {value} (hidden={hidden} and "
                                 f"the inputs' columns)")
        return value

    def storage_blocks(self, shape, attrs):
        return attrs[1] + 5   # [h, c, i, f_1..f_K, o, u]

    def signature(self, graph, args, attrs, shape):
        hidden, K = attrs
        T = len(args) - K
        parts, shared = self.terms_signature(graph, args[:T])
        ops = graph.ops
        cells = tuple(CELL_OF_STEP if ops[c] is self else shape for c in args[T:])
        return (self.name, hidden, K, *parts) + cells, shared

    def block_reads(self, key):
        K = key[2]
        T = len(key) - 3 - K
        return {T + k: 1 for k in range(K) if key[3 + T + k] == CELL_OF_STEP}

    def memo_key(self, graph, args, attrs):
        K = attrs[1]
        T = len(args) - K
        shapes, ops = graph.shapes, graph.ops
        b = args[0]
        return (self, attrs, b if b in graph.param_of_node else shapes[b], args[1:T:2],
                tuple(map(shapes.__getitem__, args[2:T:2])),
                tuple(map(shapes.__getitem__, args[T:])),
                tuple(ops[c] is self for c in args[T:]))

    def forward(self, xp, ins, attrs, n, out=None):
        H, K = attrs[0]
        T = len(ins) - K
        if out is None:
            x = ins[2]
            out = xp.empty((K + 5, n, H) + x.shape[2:], dtype=x.dtype)
        if xp is not np:   # a GPU: the element-wise work is one kernel (see lstm_kernels)
            total = self.products(xp, ins[:T], rows=True)    # (n, (K + 3) H) + columns
            lstm_kernels.step_forward(total, ins[0], ins[T:], out, H)
            return out
        gates = out[2:]                                  # [i, f_1..f_K, o, u]
        activated_gates_into(self, xp, ins[:T], H, gates)
        h, c = out[0], out[1]
        xp.multiply(gates[0], gates[-1], out=c)          # i * u
        for k in range(K):
            c += gates[1 + k] * ins[T + k]               # + f_k * c_k
        xp.tanh(c, out=h)
        h *= gates[-2]                                   # h = o * tanh(c)
        return out

    def backward(self, xp, ins, out, g, attrs, n, needs):
        H, K = attrs[0]
        T = len(ins) - K
        # the gradient reaches h (its readers) and c (the next steps); nothing reads the gates
        if xp is not np:   # a GPU: one kernel (see lstm_kernels)
            d_rows, d_cells = lstm_kernels.step_backward(xp, g, out, ins[T:], H)
            grads = [None] * len(ins)
            for k in range(K):
                if needs[T + k]:
                    grads[T + k] = d_cells[k]
            return self._rows_backward(xp, ins[:T], d_rows, needs, grads)
        gh, gc = g[0], g[1]
        c, acts = out[1], out[2:]                        # acts: [i, f_1..f_K, o, u]
        i, o, u = acts[0], acts[-2], acts[-1]
        t = xp.tanh(c)
        d = xp.empty(acts.shape, dtype=g.dtype)          # d loss / d activations, then gates
        xp.multiply(gh, t, out=d[-2])                    # d o = dh tanh(c)
        dc = xp.multiply(t, t)                           # d c = dh o (1 - tanh(c)^2) + dc_next
        xp.subtract(1.0, dc, out=dc)
        dc *= o
        dc *= gh
        dc += gc
        xp.multiply(dc, u, out=d[0])                     # d i = dc u
        xp.multiply(dc, i, out=d[-1])                    # d u = dc i
        grads = [None] * len(ins)
        for k in range(K):
            xp.multiply(dc, ins[T + k], out=d[1 + k])    # d f_k = dc c_k
            if needs[T + k]:
                grads[T + k] = dc * acts[1 + k]          # d c_k = dc f_k
        # times the activations' derivatives: s (1 - s) for the sigmoids, 1 - u^2 for u
        slope = xp.subtract(1.0, acts)
        slope *= acts
        du = slope[-1]
        xp.multiply(u, u, out=du)
        xp.subtract(1.0, du, out=du)
        d *= slope
        return self._terms_backward(xp, ins[:T], d, needs, grads)

    def _terms_backward(self, xp, terms, d, needs, grads) -> list:
        """The bias's, weights' and inputs' gradients from ``d``, the gradient of the gates'
        pre-activations block by block."""
        return self._rows_backward(xp, terms, gates_as_rows(xp, d), needs, grads)

    def _rows_backward(self, xp, terms, d_rows, needs, grads) -> list:
        """:meth:`_terms_backward` from the gradient already as one row per node,
        ``(n, (K + 3) H) + columns``: the layout of the products' gradients."""
        if needs[0]:
            grads[0] = bias_gradient(terms[0], d_rows)
        return self.products_backward(xp, terms, d_rows, needs, grads)

    def describe_signature(self, key, graph=None):
        """``lstm_step-h256-K1-...``: hidden size, number of previous cells, then the terms
        and the cells read, as for any op."""
        key = tuple("cell" if part == CELL_OF_STEP else part for part in key)
        rest = super().describe_signature((key[0],) + key[3:], graph)[len(key[0]):]
        return f"{key[0]}-h{key[1]}-K{key[2]}{rest}"


class LSTMStepCell(Op):
    """``s -> c``: the cell that the ``lstm_step`` node ``s`` keeps as its block 1."""

    name = "lstm_step_cell"
    cheap = True   # a copy: the agenda's tie-break runs it early
    arity = 1
    writes_output = True

    def infer_shape(self, shapes, attrs):
        return shapes[0]   # a cell has the shape of the step's output

    def signature(self, graph, args, attrs, shape):
        return (self.name, shape), ()

    def block_reads(self, key):
        return {0: 1}      # the cell block

    def memo_key(self, graph, args, attrs):
        return (self, graph.shapes[args[0]])

    def forward(self, xp, ins, attrs, n, out=None):
        if out is None:
            return ins[0].copy()
        out[...] = ins[0]
        return out

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g]


_STEP = register(LSTMStep())
_STEP_CELL = register(LSTMStepCell())


def _check_cells(graph, cells, hidden: int) -> None:
    """A previous cell must be a cell or an ``lstm_step`` node of the same ``hidden``: both
    have ``hidden`` rows, and a node of a different op would be read as a plain cell."""
    for c in cells:
        if graph.shapes[c][:1] != (hidden,):
            raise ShapeError(f"lstm_step: previous cell node {c} of shape {graph.shapes[c]} is "
                             f"neither a cell of {hidden} rows nor an lstm_step node of "
                             f"hidden={hidden}")


def lstm_step(terms, cells, hidden: int):
    """One LSTM step as one node (see the module's docstring): its value is the output
    ``h``, and it keeps the cell and the gates. ``terms = [b, W1, x1, ...]`` with the bias
    and weights in the gate order ``[i, f_1..f_K, o, u]``; ``cells``: the K previous cells
    or step nodes (a step node passed as a cell gives its cell)."""
    hidden = _positive(hidden, "lstm_step")
    terms, cells = expression_list(terms, "lstm_step"), list(cells)
    graph, ids = as_nodes(terms + cells)
    _check_cells(graph, ids[len(terms):], hidden)
    return graph.add(_STEP, ids, (hidden, len(cells)))


def lstm_step_cell(s):
    """The cell ``c`` that the ``lstm_step`` node ``s`` keeps, as an expression of its own
    (an ``lstm_step_cell`` node); a plain cell is returned as it is. Only needed to look at
    a cell: the next step reads it from ``s`` directly."""
    if isinstance(s, ExpressionBase) and s.graph.ops[s.node] is _STEP:
        return s.graph.add(_STEP_CELL, (s.node,), s.graph.attrs[s.node][0])
    return s


_UNIT = object()  # first element of lstm_unit's memo keys (never equal to an Op's key)


def lstm_unit(b, weights, inputs, cells, hidden: int):
    """One LSTM unit: ``lstm_step([b, W1, x1, ...], cells, hidden)``. Its value is the
    unit's output ``h``; pass the node on as the next unit's input *and* cell.

    A sequence LSTM step is ``weights = [Wx, Wh]``, ``inputs = [x, h_prev]``,
    ``cells = [c_prev]`` (after the first step, ``h_prev`` and ``c_prev`` are both the
    previous step node; the builders make a sequence step two nodes instead, see
    :func:`sequence_step`); a binary Tree-LSTM node is ``[U_L, U_R]``, ``[s_L, s_R]``,
    ``[s_L, s_R]``; a Tree-LSTM leaf is ``[W]``, ``[x]``, ``[]``.

    The node is exactly the one ``lstm_step`` builds, but construction is paid on every
    step of every sentence, so after the first unit of a given kind the shape and signature
    come from the graph's memo instead of being checked and hashed again."""
    args = _unit_args(b, weights, inputs, cells, hidden)
    if args is None:  # not all plain parameters and valid expressions of one graph
        return _build_unit(b, weights, inputs, cells, hidden)
    graph = inputs[0].graph
    shapes, depths, ops = graph.shapes, graph.depths, graph.ops
    cell_nodes = tuple(c.node for c in cells)
    key = (_UNIT, hidden, args[0], tuple(args[1::2]), tuple(shapes[a] for a in args[2::2]),
           tuple(shapes[c] for c in cell_nodes), tuple(ops[c] is _STEP for c in cell_nodes))
    known = graph.memo.get(key)
    if known is None:  # first unit of this kind in the graph: build it the checked way
        s = _build_unit(b, weights, inputs, cells, hidden)
        graph.memo[key] = (graph.sigs[s.node], shapes[s.node], graph.attrs[s.node])
        return s
    sig, shape, attrs = known
    depth = 0
    for a in args[2::2] + list(cell_nodes):
        if depths[a] > depth:
            depth = depths[a]
    return graph.push(_STEP, tuple(args) + cell_nodes, attrs, shape, sig, depth + 1)


class UnitBuilder:
    """Builds many LSTM units of one kind - one bias, one list of weights - like
    :func:`lstm_unit`, with the per-unit bookkeeping done once.

    A unit of a new kind (the first of a graph, or the first whose previous cells are
    step nodes instead of plain cells, or the other way round) is built by
    :func:`lstm_unit` (every check, and the graph's memo). When the bias and weights are
    model parameters, their node ids, the input shapes and the signature are then known for
    the whole graph, so a later unit of that kind whose inputs are expressions of that graph
    with the same shapes is one push. Anything else goes through :func:`lstm_unit` again,
    which reports mistakes at the user's line. The nodes are exactly those
    :func:`lstm_unit` builds. (Per-instance code: the units of one tree, say; the runtime
    still does the batching across instances.)"""

    def __init__(self, b, weights, hidden: int):
        self.b, self.weights, self.hidden = b, list(weights), int(hidden)
        self.graph = None  # the graph whose units of this kind were learnt from
        self.kinds: dict = {}  # per cells pattern (which are step nodes): (signature, shape)

    def __call__(self, inputs, cells):
        """One unit (a step node): ``inputs`` (a list) matched with the weights, previous
        ``cells`` (a list or tuple).

        The known kind's shortcut is written out in one function, loops and all: a
        Tree-LSTM minibatch builds a unit for each of its 2,398 tree nodes, and calls to
        helpers cost as much as the checks (a leaf 2.7 to 1.4 µs, an inner node 3.3 to 2.0)."""
        graph = self.graph
        if (graph is not None and not graph.finished and len(inputs) == len(self.input_shapes)
                and len(cells) == self.n_cells):
            shapes, depths = graph.shapes, graph.depths
            args = self.template[:]          # [b, W1, x1, W2, x2, ...]: the x slots change
            depth = 0                        # (the bias and weights are parameters: depth 0)
            slot = 2
            for x, wanted in zip(inputs, self.input_shapes):
                if not isinstance(x, ExpressionBase) or x.graph is not graph or shapes[x.node] != wanted:
                    break
                n = args[slot] = x.node
                slot += 2
                if depths[n] > depth:
                    depth = depths[n]
            else:
                ops, shape, pattern = graph.ops, self.value_shape, []
                for c in cells:  # each a cell, or a step node that keeps one, of this shape
                    if not isinstance(c, ExpressionBase) or c.graph is not graph or shapes[c.node] != shape:
                        break
                    n = c.node
                    args.append(n)
                    pattern.append(ops[n] is _STEP)
                    if depths[n] > depth:
                        depth = depths[n]
                else:
                    known = self.kinds.get(tuple(pattern))
                    if known is not None:
                        return graph.push(_STEP, tuple(args), self.step_attrs, known[1], known[0],
                                          depth + 1)
        s = lstm_unit(self.b, self.weights, list(inputs), tuple(cells), self.hidden)
        self._learn(s)
        return s

    def _learn(self, s) -> None:
        graph = s.graph
        step = s.node
        attrs = graph.attrs[step]
        K = attrs[1]
        args = graph.args[step]
        terms = args[:len(args) - K]
        if any(a not in graph.param_of_node for a in (terms[0],) + terms[1::2]):
            self.graph = None  # a bias or weight that is an expression: no shortcut
            return
        if graph is not self.graph:
            self.kinds = {}
        shapes, ops = graph.shapes, graph.ops
        self.graph = graph
        self.step_attrs = attrs
        self.template = list(terms)  # [b, W1, x1, ...]: the x slots change per unit
        self.input_shapes = [shapes[a] for a in terms[2::2]]
        self.n_cells = K
        self.value_shape = shapes[step]
        self.kinds[tuple(ops[c] is _STEP for c in args[len(args) - K:])] = (graph.sigs[step],
                                                                            shapes[step])


def input_projection(b, weights, inputs):
    """``b + W1 x1 + W2 x2 + ...``, a sequence step's input projection: an
    ``affine_transform`` node for vector inputs, an ``affine_batch`` node for inputs that
    are matrices of instances (manual batching; ``b`` is added to every column)."""
    terms = affine_terms(b, weights, inputs, "input_projection")
    shape = getattr(inputs[0], "shape", ()) if inputs else ()
    return (affine_batch if len(shape) == 2 else affine_transform)(terms)


def sequence_step(b, input_weights, Wh, inputs, h, c, hidden: int):
    """One step of a sequence LSTM as two nodes: the input projection ``p = b + W1 x1 +
    ...`` (:func:`input_projection`), which does not depend on the previous step, and
    ``lstm_step([p, Wh, h], [c], hidden)``, which adds the recurrent term to ``p`` as its
    bias (one per node). Returns the step node; pass it on as the next step's ``h`` and
    ``c``.

    Why two nodes: the projections of a whole minibatch are ready as soon as its inputs
    are, so the agenda runs all of them as one large matrix product (and their gradients
    as one), and each step batch is left with ``Wh h`` alone. Fused into the step, the
    input product would run once per step batch, as small as that batch (the ends of the
    longest sentences are batches of one or two). cuDNN computes a sequence's input
    projections up front for the same reason."""
    p = input_projection(b, input_weights, inputs)
    return lstm_step([p, Wh, h], [c], hidden)


class SequenceBuilder:
    """Builds the steps of sequence LSTMs of one layer - bias ``b``, one input matrix per
    input piece, recurrent matrix ``Wh`` - as :func:`sequence_step` does, with the per-step
    bookkeeping done once per graph.

    A step of a new kind (the first of a graph, or the first whose previous state is a step
    node rather than a plain vector, or the other way round) is built the checked way
    (every check, at the user's line). When ``b`` and the matrices are model parameters,
    the two nodes' shapes and signatures are then known for the whole graph, and once both
    kinds are known a sequence whose input pieces are expressions of that graph with the
    learnt shapes is appended in one ``push_many``. The nodes are exactly those
    :func:`sequence_step` builds, in the same order. (Per-instance code: one sequence at a
    time; the runtime still does the batching across sequences.)"""

    def __init__(self, b, input_weights, Wh, hidden: int):
        self.b, self.input_weights, self.Wh = b, list(input_weights), Wh
        self.hidden = int(hidden)
        self.graph = None  # the graph whose steps were learnt, or None
        self.kinds: dict = {}  # previous cell is a step node? -> (attrs, shape, signature)

    def step(self, inputs, h, c):
        """One step (its step node) reading the input pieces ``inputs`` after ``h``, ``c``."""
        return sequence_step(self.b, self.input_weights, self.Wh, list(inputs), h, c,
                             self.hidden)

    def sequence(self, steps, h, c) -> list:
        """``[s_1, ..., s_T]``: the step nodes of one sequence from the state ``h, c`` (each
        a plain vector or a step node), step ``t`` reading the input pieces ``steps[t]``.

        Once both kinds of step are known for this graph, the steps whose input pieces are
        expressions of the graph with the learnt shapes are appended in one
        ``push_steps``. A step whose pieces are not goes through the checked path, which
        reports the mistake at the user's line or builds it the general way."""
        steps = list(steps)
        out: list = []
        t = 0
        while t < len(steps):
            graph = self.graph
            if graph is not None and not graph.finished and len(self.kinds) == 2:
                state = self._state_nodes(graph, h, c)
                checked = state and _checked_steps(graph, steps, t, self.input_shapes)
                if checked:
                    first = self.push_steps(graph, checked, *state)
                    n_steps = len(checked) // len(self.input_shapes)
                    out += [graph.expression_type(graph, n) for n in range(first + 1, first + 2 * n_steps, 2)]
                    h = c = out[-1]
                    t += n_steps
                    continue
            s = self.step(steps[t], h, c)
            h = c = s
            self._learn(s)
            out.append(s)
            t += 1
        return out

    def _state_nodes(self, graph, h, c):
        """``(h node, c node)`` when both are expressions of ``graph`` of the steps' shape
        (``c`` a plain cell or a step node); None otherwise."""
        if not isinstance(h, ExpressionBase) or not isinstance(c, ExpressionBase):
            return None
        if h.graph is not graph or c.graph is not graph:
            return None
        shapes, shape = graph.shapes, self.value_shape
        if shapes[h.node] != shape or shapes[c.node] != shape:
            return None
        return h.node, c.node

    def _learn(self, s) -> None:
        """Remember the shapes and signatures of the step node ``s`` (by whether it reads a
        step node's cell) and of its projection, when the bias and the matrices are
        parameters."""
        graph = s.graph
        p, Wh, h, c = graph.args[s.node]
        terms = graph.args[p]
        params = graph.param_of_node
        if any(a not in params for a in (terms[0], Wh) + tuple(terms[1::2])):
            return
        shapes, sigs = graph.shapes, graph.sigs
        if graph is not self.graph:
            self.kinds = {}
        self.graph = graph
        self.projection = (graph.ops[p], graph.attrs[p], shapes[p], sigs[p])
        self.kinds[graph.ops[c] is _STEP] = (graph.attrs[s.node], shapes[s.node], sigs[s.node])
        self.value_shape = shapes[s.node]
        self.template = list(terms)   # [b, W1, x1, ...]: the x slots change per step
        self.Wh_node = Wh
        self.input_shapes = [shapes[a] for a in terms[2::2]]

    def push_steps(self, graph, inputs: list, h: int, c: int) -> int:
        """Steps from the state ``h``, ``c`` (node ids of this graph of the steps' shape)
        reading ``inputs``, the checked input node ids of all steps one after another (as
        many per step as there are input pieces): the nodes :meth:`step` would build, a
        projection then a step node per step, appended to the graph's lists at once.
        Returns the first new node id; step ``t``'s projection is node ``first + 2t`` and
        its step node ``first + 2t + 1``."""
        proj_op, proj_attrs, proj_shape, proj_sig = self.projection
        first_attrs, step_shape, first_sig = self.kinds[graph.ops[c] is _STEP]
        step_attrs, _, step_sig = self.kinds[True]
        template, Wh = self.template, self.Wh_node
        depths = graph.depths
        first = node = len(graph.ops)
        args, node_depths = [], []
        ds = max(depths[h], depths[c])
        k = len(self.input_shapes)
        if k == 1:    # [b, W, x]: a first layer, written out
            b, W = template[0], template[1]
            for x in inputs:
                dp = depths[x] + 1
                ds = (dp if dp > ds else ds) + 1
                args.append((b, W, x))
                args.append((node, Wh, h, c))
                node_depths.append(dp)
                node_depths.append(ds)
                h = c = node + 1
                node += 2
        elif k == 2:  # [b, Wf, f, Wb, x]: a BiLSTM's upper layer, written out
            b, Wf, Wb = template[0], template[1], template[3]
            for j in range(0, len(inputs), 2):
                f, x = inputs[j], inputs[j + 1]
                dp, dx = depths[f], depths[x]
                dp = (dp if dp > dx else dx) + 1
                ds = (dp if dp > ds else ds) + 1
                args.append((b, Wf, f, Wb, x))
                args.append((node, Wh, h, c))
                node_depths.append(dp)
                node_depths.append(ds)
                h = c = node + 1
                node += 2
        else:
            for j in range(0, len(inputs), k):
                xs = inputs[j:j + k]
                dp = max(map(depths.__getitem__, xs)) + 1
                template[2::2] = xs
                ds = (dp if dp > ds else ds) + 1
                args.append(tuple(template))
                args.append((node, Wh, h, c))
                node_depths.append(dp)
                node_depths.append(ds)
                h = c = node + 1
                node += 2
        T = (node - first) // 2
        attrs = [proj_attrs, step_attrs] * T
        sigs = [proj_sig, step_sig] * T
        attrs[1], sigs[1] = first_attrs, first_sig
        graph.push_many([proj_op, _STEP] * T, args, attrs, [proj_shape, step_shape] * T,
                        sigs, node_depths)
        return first


def _nodes_of(graph, expressions, shapes_wanted):
    """The node ids of ``expressions`` when they are expressions of ``graph`` with the
    shapes ``shapes_wanted``; None otherwise."""
    nodes = [e.node for e in expressions if isinstance(e, ExpressionBase) and e.graph is graph]
    if len(nodes) != len(expressions) or [graph.shapes[a] for a in nodes] != shapes_wanted:
        return None
    return nodes


def lstm_sequence(b, weights, steps, h, c, hidden: int) -> list:
    """``[s_1, ..., s_T]``, the step nodes of a sequence LSTM started from ``h`` and ``c``
    (plain vectors, or both the step node of an earlier step): ``s_t = sequence_step(b,
    weights[:-1], weights[-1], steps[t], s_{t-1}, s_{t-1}, hidden)`` (``steps[t]``: the
    list of input pieces at step ``t``; ``weights``: one matrix per piece, then ``Wh``),
    built by one :class:`SequenceBuilder`. Each node's value is that step's ``h``."""
    weights = list(weights)
    if len(weights) < 2:
        raise ValueError("lstm_sequence: weights are one matrix per input piece, then Wh; "
                         f"got {len(weights)} matrix")
    return SequenceBuilder(b, weights[:-1], weights[-1], hidden).sequence(steps, h, c)


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
        nodes = [e.node for e in flat if isinstance(e, ExpressionBase) and e.graph is graph]
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
    return lstm_step(affine_terms(b, weights, inputs, "lstm_unit"), cells, hidden)


def _unit_args(b, weights, inputs, cells, hidden):
    """The step node's term ids ``[b, W1, x1, ...]`` when every weight is a parameter, every
    input an expression of one live graph and every cell an expression of it of ``hidden``
    rows (a cell or a step node); None otherwise."""
    first = inputs[0] if inputs else None
    if not isinstance(first, ExpressionBase) or len(weights) != len(inputs):
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
        if not isinstance(x, ExpressionBase) or x.graph is not graph:
            return None
        args.append(node)
        args.append(x.node)
    shapes = graph.shapes
    for c in cells:
        if not isinstance(c, ExpressionBase) or c.graph is not graph:
            return None
        if shapes[c.node][:1] != (hidden,):
            return None  # the checked path says what is wrong
    return args


__all__ = ["lstm_step", "lstm_step_cell", "lstm_unit", "lstm_sequence", "sequence_step",
           "input_projection", "UnitBuilder", "SequenceBuilder"]
