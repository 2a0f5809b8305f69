"""Fused LSTM ops, DyNet's way: three nodes per LSTM step instead of about fifteen.

Written naively, one LSTM step is an affine transform, a slice per gate, three sigmoids, a
tanh, three products, a sum and another tanh: about fifteen nodes. Every node costs graph
construction, scheduling and a kernel launch, so (like DyNet's ``vanilla_lstm_*``) batchviz
offers the step as three ops whose signatures still batch across instances (the builders
of ``batchviz.nn`` go one further, to one node: :mod:`batchviz.ops.lstm_steps`):

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

from ..backend import constant
from .base import Op, register
from .elementwise import logistic_values
from .gradients import BlockGradient, RowSums
from ._build import build, expression_list
from .linalg import AffineArguments, _mm_shape, affine_terms


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
    biases, for vector outputs ``(n, D)`` or column outputs ``(n, D, m)``, or stacked
    ``(n, D, m)`` biases with the columns' own values."""
    if out.ndim == 3 and b.ndim < 3:
        return b[..., None]
    return b


def _scale_by_derivative(d, g, out, hidden, xp):
    """``d = g * activation'`` from the stored activations ``out``: ``s (1 - s)`` for the
    sigmoid gates, ``1 - t^2`` for the tanh candidate; in place, without temporaries.
    The sigmoid form is applied to the whole contiguous block first and the candidate's
    columns are then overwritten: about twice as fast as working on column slices."""
    xp.subtract(constant(xp, 1.0, d), out, out=d)
    d *= out
    d *= g
    dt, t = d[:, -hidden:], out[:, -hidden:]
    xp.multiply(t, t, out=dt)
    xp.subtract(constant(xp, 1.0, d), dt, out=dt)
    dt *= g[:, -hidden:]


def gates_shape(op, shapes, hidden: int, blocks: int | None = None) -> tuple:
    """The shape of the gates from terms of shapes ``[b, W1, x1, ...]``: ``b``'s rows (3 or
    more blocks of ``hidden``; exactly ``blocks`` when given) and the inputs' columns."""
    op.check_terms(shapes)
    b = shapes[0]
    if b[0] % hidden or b[0] // hidden < 3:
        raise op.error(f"the bias has {b[0]} rows, which is not 3 or more blocks of "
                       f"hidden={hidden} rows (gates [i, f..., o, u])")
    if blocks is not None and b[0] != blocks * hidden:
        raise op.error(f"the bias has {b[0]} rows, but the gates [i, f x{blocks - 3}, o, u] "
                       f"need {blocks} blocks of hidden={hidden}: {blocks * hidden} rows")
    tail = _columns(op, list(shapes[2::2]), "the inputs x_j")
    if b[1:] not in ((), tail):
        raise op.error(f"the bias must be a vector or have the inputs' columns {tail}, "
                       f"got shape {b}")
    for i in range(1, len(shapes), 2):
        term = _mm_shape(op, shapes[i], shapes[i + 1])
        if term[0] != b[0]:
            raise op.error(f"term {i // 2 + 1} (W{shapes[i]} @ x{shapes[i + 1]}) has "
                           f"{term[0]} rows but the bias has {b[0]}")
    return b[:1] + tail


def activated_gates(op, xp, terms, hidden: int):
    """The batch's gates ``sigmoid/tanh(b + sum_j W_j x_j)`` from the arrays ``terms``
    (``[b, W1, x1, ...]``), in the weights' block order ``[i, f..., o, u]``."""
    total = op.products(xp, terms)
    total += _bias_view(terms[0], total)
    activate_gates_(xp, total[:, :-hidden], total[:, -hidden:])
    return total


def activate_gates_(xp, sigmoid_gates, u) -> None:
    """In place: the logistic sigmoid on ``sigmoid_gates`` (the gates ``[i, f..., o]``),
    tanh on ``u`` (the candidate).

    The sigmoid is the ``logistic`` op's own rule, ``elementwise.logistic_values``
    (``0.5 tanh(x / 2) + 0.5``): one rule for every sigmoid of the library, and one that
    never overflows (``1 / (1 + exp(-x))`` does, for x < -88 in float32, and a forward
    pass reports NumPy's overflow warnings), so no error state of NumPy has to be entered
    at every step; its operations take 0-d constants, where per-gate scale arrays would
    be broadcast by NumPy at a cost of their own. (NumPy's float32 ``tanh`` is also faster
    than its ``exp`` followed by a division.)"""
    logistic_values(xp, sigmoid_gates, sigmoid_gates)
    xp.tanh(u, out=u)


def activated_gates_into(op, xp, terms, hidden: int, gates) -> None:
    """:func:`activated_gates` for a batch that keeps its gates block by block: ``gates``
    is ``(blocks, n, hidden) + columns``, block ``k`` the ``k``-th gate of every node
    (``lstm_step``'s memory, see ``Op.storage_blocks``). The products are computed with
    one row per node, ``x W^T``, so that putting each gate's rows in place is a copy of
    contiguous rows, not a transpose.

    The gates are activated in a new contiguous array, then copied into ``gates`` at once:
    the blocks of a batch lie apart in the arena (laid out plane by plane, see
    ``batchviz.plan.layout``), and NumPy sets up each operation on such an array at
    several times the cost of one on contiguous memory. The copy pays that cost once for
    the five operations of the sigmoid and the tanh: on a step's few hundred values the
    cost of setting an operation up is most of its time."""
    total = op.products(xp, terms, rows=True)            # (n, blocks * hidden) + columns
    n, cols = total.shape[0], total.shape[2:]
    blocks = gates.shape[0]
    activated = xp.empty(gates.shape, dtype=gates.dtype)
    # the bias is added while each gate's rows are put in place: one pass, not two
    xp.add(total.reshape((n, blocks, hidden) + cols).swapaxes(0, 1),
           bias_by_block(terms[0], n, blocks, hidden, len(cols)), out=activated)
    activate_gates_(xp, activated[:-1], activated[-1])
    gates[...] = activated


def bias_by_block(b, n: int, blocks: int, hidden: int, n_columns: int):
    """The gates' bias as ``(blocks, 1 or n, hidden) + (1 or m,) * n_columns``: entry ``k``
    broadcasts against gate block ``k`` of a batch of ``n`` nodes. A shared bias is
    ``(D,)``; a bias per node is ``(n, D)``, or ``(n, D, m)`` when it has the inputs' ``m``
    columns (an input projection computed for each column, see ``LSTMBuilder``)."""
    if b.ndim == 1:
        return b.reshape((blocks, 1, hidden) + (1,) * n_columns)
    columns = b.shape[2:] if b.ndim > 2 else (1,) * n_columns
    return b.reshape((n, blocks, hidden) + columns).swapaxes(0, 1)


def gates_as_rows(d):
    """Per-gate blocks ``(blocks, n, hidden) + columns`` as one row per node,
    ``(n, blocks * hidden) + columns``: the layout of ``W @ x``'s gradient (a copy when
    there are several nodes; one node's blocks already are its row)."""
    blocks, n = d.shape[:2]
    return d.swapaxes(0, 1).reshape((n, blocks * d.shape[2]) + d.shape[3:])


def bias_gradient(b, d):
    """The gradient of the gates' bias ``b`` from ``d``, the batch's gradient of the
    pre-activations: a shared bias ``(D,)`` sums it over the batch - for vectors as a
    ``RowSums``, which the executor sums with the other steps' at the end, one reduction
    for a whole sequence (as an affine transform's bias) - and over columns; a stacked one
    ``(n, D)`` takes each node's own (summed over columns), a stacked one with columns
    ``(n, D, m)`` is ``d`` itself."""
    if b.ndim == 1:
        return d.sum(axis=(0, 2)) if d.ndim == 3 else RowSums(d)
    return d.sum(axis=2) if d.ndim > b.ndim else d


class LSTMGates(AffineArguments):
    """``[b, W1, x1, ...] -> sigmoid/tanh(b + sum_j W_j x_j)`` in blocks of ``hidden`` rows."""

    name = "lstm_gates"
    cheap = False
    arity = None
    shares_matrix_bias = False

    def infer_shape(self, shapes, attrs):
        return gates_shape(self, shapes, attrs)

    def signature_prefix(self, attrs):
        return (attrs,)

    def forward(self, xp, ins, attrs, n):
        return activated_gates(self, xp, ins, attrs[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        hidden = attrs[0]
        d = xp.empty_like(g)  # d loss / d pre-activation
        _scale_by_derivative(d, g, out, hidden, xp)
        grads = [None] * len(ins)
        if needs[0]:
            grads[0] = bias_gradient(ins[0], d)
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
    return build(_GATES, expression_list(terms, "lstm_gates"), hidden)


def lstm_c(cells, gates):
    """New memory cell ``i*u + f_1*c_1 + ... + f_K*c_K`` from gates ``[i, f_1..f_K, o, u]``."""
    return build(_CELL, list(cells) + [gates])


def lstm_h(c, gates):
    """LSTM output ``o * tanh(c)``, ``o`` being the second-to-last block of ``gates``."""
    return build(_OUTPUT, (c, gates))


def vanilla_lstm_gates(x, h_prev, Wx, Wh, b):
    """DyNet's ``vanilla_lstm_gates``: gates ``[i, f, o, g]`` of one LSTM step.

    ``x`` may be a list of input pieces (e.g. the forward and backward states of a lower
    BiLSTM layer); then ``Wx`` is a list with one matrix per piece, which saves the
    ``concatenate`` node. ``h_prev=None`` leaves out the recurrent term (a first step)."""
    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    Ws = list(Wx) if isinstance(Wx, (list, tuple)) else [Wx]
    terms = affine_terms(b, Ws, xs, "vanilla_lstm_gates")
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


__all__ = ["lstm_gates", "lstm_c", "lstm_h", "vanilla_lstm_gates", "vanilla_lstm_c", "vanilla_lstm_h"]
