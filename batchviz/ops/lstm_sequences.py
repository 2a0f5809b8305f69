"""Sequence LSTMs built from :func:`~batchviz.ops.lstm_steps.lstm_step` nodes.

A sequence LSTM's step is built as two nodes (:func:`sequence_step`): its input projection
``p = b + W_x x``, which needs only the input, and ``lstm_step([p, W_h, h], [c])``, whose
bias ``p`` is then one per node (a vector, or a matrix with the inputs' columns). The agenda
runs all the projections of a minibatch as one large product instead of one small product
per step batch. :class:`SequenceBuilder` and :func:`lstm_sequence` build whole sequences
of such steps with the checks done once.
"""
from __future__ import annotations

from ..graph import ExpressionBase
from .columns import affine_batch
from .linalg import affine_terms, affine_transform
from .lstm_steps import _STEP, lstm_step

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
        self.revision = 0  # its revision then (a revert may have removed what was learnt)
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
            if (graph is not None and not graph.finished and len(self.kinds) == 2
                    and graph.revision == self.revision):
                state = self._state_nodes(graph, h, c)
                checked = state and _checked_steps(graph, steps, t, self.input_shapes)
                if checked:
                    first = self.push_steps(graph, checked, *state)
                    n_steps = len(checked) // len(self.input_shapes)
                    out += [graph.expression(n) for n in range(first + 1, first + 2 * n_steps, 2)]
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
        if graph is not self.graph or graph.revision != self.revision:
            self.kinds = {}
        self.graph, self.revision = graph, graph.revision
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




__all__ = ["lstm_sequence", "sequence_step", "input_projection", "SequenceBuilder"]
