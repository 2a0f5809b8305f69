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
instances (manual batching), and :func:`~batchviz.ops.lstm_units.lstm_unit` and
:class:`~batchviz.ops.lstm_units.UnitBuilder` build many
units with the per-node checks done once.

Sequences of such steps: :mod:`batchviz.ops.lstm_sequences`.
"""
from __future__ import annotations

import numpy as np

from ..backend import constant
from ..errors import ShapeError
from ..graph import ExpressionBase
from ..parameters import ParameterBase
from ._build import as_nodes
from ._build import expression_list
from .base import Op, register
from .linalg import AffineArguments, affine_terms
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
    writes_gradients = True
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
                tuple([shapes[x] for x in args[2:T:2]]),
                tuple([(shapes[c], ops[c] is self) for c in args[T:]]))

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
            xp.multiply(gates[1 + k], ins[T + k], out=h)  # h as scratch: f_k * c_k ...
            c += h                                       # ... added to the cell
        xp.tanh(c, out=h)
        h *= gates[-2]                                   # h = o * tanh(c)
        return out

    def backward(self, xp, ins, out, g, attrs, n, needs, into=None):
        H, K = attrs[0]
        T = len(ins) - K
        # the gradient reaches h (its readers) and c (the next steps); nothing reads the gates
        if xp is not np:   # a GPU: one kernel (see lstm_kernels)
            d_rows, d_cells = lstm_kernels.step_backward(xp, g, out, ins[T:], H)
            grads = [None] * len(ins)
            for k in range(K):
                if needs[T + k]:
                    grads[T + k] = d_cells[k]
            return self._rows_backward(xp, ins[:T], d_rows, needs, grads, into)
        unit = constant(xp, 1.0, g)
        gh, gc = g[0], g[1]
        h, c = out[0], out[1]
        # acts: [i, f_1..f_K, o, u], copied: the blocks of a batch lie apart in the arena,
        # and an operation on all of them costs more than the copy (see activated_gates_into)
        acts = out[2:].copy()
        i, o, u = acts[0], acts[-2], acts[-1]
        t = xp.tanh(c)
        d = xp.empty(acts.shape, dtype=g.dtype)          # d loss / d activations, then gates
        xp.multiply(gh, t, out=d[-2])                    # d o = dh tanh(c)
        dc = xp.multiply(h, t)                           # d c = dh o (1 - tanh(c)^2) + dc_next,
        xp.subtract(o, dc, out=dc)                       # o (1 - tanh(c)^2) being o - h tanh(c)
        dc *= gh
        dc += gc
        xp.multiply(dc, u, out=d[0])                     # d i = dc u
        xp.multiply(dc, i, out=d[-1])                    # d u = dc i
        grads = [None] * len(ins)
        for k in range(K):
            xp.multiply(dc, ins[T + k], out=d[1 + k])    # d f_k = dc c_k
            if needs[T + k]:                             # d c_k = dc f_k
                grads[T + k] = xp.multiply(dc, acts[1 + k], out=None if into is None
                                           else into[T + k])
        # times the activations' derivatives: s (1 - s) for the sigmoids, 1 - u^2 for u
        slope = xp.subtract(unit, acts)
        slope *= acts
        du = slope[-1]
        xp.multiply(u, u, out=du)
        xp.subtract(unit, du, out=du)
        d *= slope
        return self._rows_backward(xp, ins[:T], gates_as_rows(d), needs, grads, into)

    def _rows_backward(self, xp, terms, d_rows, needs, grads, into=None) -> list:
        """The bias's, weights' and inputs' gradients (the inputs' written in ``into``'s
        targets) from the gradient of the gates' pre-activations as one row per node,
        ``(n, (K + 3) H) + columns``: the layout of the products' gradients."""
        if needs[0]:
            grads[0] = bias_gradient(terms[0], d_rows)
        return self.products_backward(xp, terms, d_rows, needs, grads, into)

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


__all__ = ["lstm_step", "lstm_step_cell"]
