"""LSTM units built many at a time: :func:`lstm_unit` and :class:`UnitBuilder` make
:func:`~batchviz.ops.lstm_steps.lstm_step` nodes (a Tree-LSTM's leaves and inner nodes, a
sequence step) with the per-node checks done once per kind of unit instead of once per
node: a Tree-LSTM minibatch builds thousands of them."""
from __future__ import annotations

from ..graph import ExpressionBase
from ..parameters import ParameterBase
from ._build import parameter_node_of
from .linalg import affine_terms
from .lstm_steps import _STEP, lstm_step

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
        self.revision = 0  # its revision then (a revert may have removed what was learnt)
        self.kinds: dict = {}  # per cells pattern (which are step nodes): (signature, shape)

    def __call__(self, inputs, cells):
        """One unit (a step node): ``inputs`` (a list) matched with the weights, previous
        ``cells`` (a list or tuple).

        The known kind's shortcut is written out in one function, loops and all: a
        Tree-LSTM minibatch builds a unit for each of its thousands of tree nodes, and
        calls to helpers would cost as much as the checks themselves."""
        graph = self.graph
        if (graph is not None and not graph.finished and len(inputs) == len(self.input_shapes)
                and len(cells) == self.n_cells and graph.revision == self.revision):
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
        if graph is not self.graph or graph.revision != self.revision:
            self.kinds = {}
        shapes, ops = graph.shapes, graph.ops
        self.graph, self.revision = graph, graph.revision
        self.step_attrs = attrs
        self.template = list(terms)  # [b, W1, x1, ...]: the x slots change per unit
        self.input_shapes = [shapes[a] for a in terms[2::2]]
        self.n_cells = K
        self.value_shape = shapes[step]
        self.kinds[tuple(ops[c] is _STEP for c in args[len(args) - K:])] = (graph.sigs[step],
                                                                            shapes[step])


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
    node = parameter_node_of(graph, b)
    if node is None:
        if not isinstance(b, ParameterBase):
            return None
        node = graph.parameter_node(b)
    args = [node]
    for W, x in zip(weights, inputs):
        node = parameter_node_of(graph, W)
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


__all__ = ["lstm_unit", "UnitBuilder"]
