"""LSTM builders (DyNet's ``VanillaLSTMBuilder`` and ``BiRNNBuilder``), written per instance.

A builder owns the parameters; a state (:class:`LSTMState`) is an immutable position in one
sequence, so the code for a minibatch is the naive loop over its sentences::

    lstm = LSTMBuilder(2, 200, 256, model)
    for sentence in minibatch:
        outputs = lstm.initial_state().transduce([E[w] for w in sentence])

Nothing here batches by hand: each step of each layer is two nodes
(:func:`~batchviz.sequence_step`), its input projection ``b + W_x x`` and one fused
``bv.lstm_step`` that adds ``W_h h`` (its value is the output ``h``, and it keeps the cell
and the gates), and the runtime batches them across sentences: the projections, which do
not wait for the recurrence, in a few large batches.
The same code runs on matrices whose columns are instances (manual batching): the inputs
``x`` are then ``(input_dim, m)`` and the initial state gets ``m`` columns as well.
"""
from __future__ import annotations

import numbers

from .. import ops
from ..errors import ShapeError
from ..ops.lstm_sequences import SequenceBuilder
from ..ops.lstm_steps import lstm_step_cell


def _dims(input_dim) -> tuple:
    """``input_dim`` as a tuple of input pieces (an int is one piece)."""
    if isinstance(input_dim, numbers.Integral):
        dims = (int(input_dim),)
    else:
        dims = tuple(int(d) for d in input_dim)
    if not dims or any(d <= 0 for d in dims):
        raise ValueError(f"input dimensions must be positive, got {input_dim!r}")
    return dims


def _sizes(dims: tuple) -> str:
    return str(dims[0]) if len(dims) == 1 else " + ".join(map(str, dims))


class LSTMBuilder:
    """A stack of ``layers`` vanilla LSTMs (gates ``[i, f, o, g]``, no peepholes).

    ``input_dim`` is an int, or a tuple of ints when the input comes in pieces (the forward
    and backward states of a lower BiLSTM layer): the first layer then has one input matrix
    per piece and ``add_input`` takes a list, which saves a ``concatenate`` node per step.
    The forget-gate bias starts at 1, the other biases at 0. ``name`` starts the names of
    its parameters (``lstm.l0.Wh``); without one, a model's LSTMs are ``lstm``, ``lstm_2``,
    ... in the order they are made (:meth:`~batchviz.Model.unique_prefix`), as are its other
    builders.
    """

    def __init__(self, layers: int, input_dim, hidden_dim: int, model, name: str | None = None):
        name = model.unique_prefix("lstm") if name is None else name
        if layers < 1:
            raise ValueError(f"an LSTM needs at least one layer, got {layers}")
        if hidden_dim < 1:
            raise ValueError(f"hidden_dim must be positive, got {hidden_dim}")
        self.layers = int(layers)
        self.input_dims = _dims(input_dim)
        self.hidden_dim = H = int(hidden_dim)
        self.Wx: list[list] = []   # per layer: one input matrix per input piece
        self.Wh: list = []
        self.b: list = []
        bias = [0.0] * H + [1.0] * H + [0.0] * (2 * H)
        for layer in range(self.layers):
            dims = self.input_dims if layer == 0 else (H,)
            self.Wx.append([model.add_parameters((4 * H, d), name=f"{name}.l{layer}.Wx{j}")
                            for j, d in enumerate(dims)])
            self.Wh.append(model.add_parameters((4 * H, H), name=f"{name}.l{layer}.Wh"))
            self.b.append(model.add_parameters((4 * H,), init=bias, name=f"{name}.l{layer}.b"))
        # per layer, the builder of its steps, kept so that it learns a graph's steps once,
        # not once per sequence (it relearns by itself when the graph changes)
        self._steps = [SequenceBuilder(self.b[layer], self.Wx[layer], self.Wh[layer], H)
                       for layer in range(self.layers)]

    def check_inputs(self, steps) -> None:
        """Raise a :class:`~batchviz.ShapeError` naming the first input piece (of the lists
        of pieces ``steps``, one per step) whose rows are not this LSTM's input size."""
        for t, pieces in enumerate(steps):
            for j, (x, d) in enumerate(zip(pieces, self.input_dims)):
                shape = getattr(x, "shape", None)
                if isinstance(shape, tuple) and (not shape or shape[0] != d):
                    piece = f" piece {j + 1} of" if len(self.input_dims) > 1 else ""
                    raise ShapeError(
                        f"this LSTM reads inputs of size {_sizes(self.input_dims)}, but{piece} "
                        f"input {t + 1} has shape {shape}") from None

    def initial_state(self, vecs=None) -> "LSTMState":
        """The state before the first input. ``vecs`` (DyNet's convention) is
        ``[c_1, ..., c_L, h_1, ..., h_L]``; by default all zeros, shaped like the first input
        (vectors, or matrices with as many columns as the input has)."""
        if vecs is None:
            return LSTMState(self, None)
        vecs = list(vecs)
        if len(vecs) != 2 * self.layers:
            raise ValueError(f"initial_state needs 2 * layers = {2 * self.layers} vectors "
                             f"(cells then outputs), got {len(vecs)}")
        L = self.layers
        return LSTMState(self, tuple(zip(vecs[L:], vecs[:L])))

    def param_list(self) -> list:
        return [p for layer in range(self.layers)
                for p in self.Wx[layer] + [self.Wh[layer], self.b[layer]]]


class LSTMState:
    """One position in one sequence: the ``(h, c)`` of every layer. After a step both are
    the layer's last ``lstm_step`` node (its value is ``h``, and it keeps the cell ``c``);
    before the first input, or from ``initial_state(vecs)``, they are plain vectors.
    Immutable."""

    __slots__ = ("builder", "layers")

    def __init__(self, builder: LSTMBuilder, layers):
        self.builder = builder
        self.layers = layers  # tuple of (h, c) per layer, or None before the first input

    def add_input(self, x) -> "LSTMState":
        """The state after reading ``x`` (an expression, or a list of input pieces)."""
        b = self.builder
        xs = list(x) if isinstance(x, (list, tuple)) else [x]
        if len(xs) != len(b.input_dims):
            raise ValueError(f"this LSTM takes {len(b.input_dims)} input piece(s) of sizes "
                             f"{b.input_dims}, got {len(xs)}")
        prev = self._previous(xs[0])
        new, pieces = [], xs
        try:
            for layer in range(b.layers):
                h, c = prev[layer]
                s = b._steps[layer].step(xs, h, c)
                new.append((s, s))
                xs = [s]
        except ShapeError:
            b.check_inputs([pieces])  # an input of the wrong size: say so in the LSTM's terms
            raise
        return LSTMState(b, tuple(new))

    def output(self):
        """The top layer's ``h`` (None before the first input)."""
        return None if self.layers is None else self.layers[-1][0]

    def h(self) -> list:
        """Every layer's output ``h``."""
        return [] if self.layers is None else [h for h, _ in self.layers]

    def s(self) -> list:
        """DyNet's full state: cells then outputs (a cell that a step node keeps is cut out
        by an ``lstm_step_cell`` node, built only when asked for)."""
        if self.layers is None:
            return []
        return [lstm_step_cell(c) for _, c in self.layers] + [h for h, _ in self.layers]

    def transduce(self, xs) -> list:
        """Read the inputs ``xs`` in order; return the top-layer output after each.

        Each layer's steps are built by its :class:`~batchviz.SequenceBuilder`, the whole
        sequence at once, one layer after the other: the same nodes as ``add_input`` step by
        step (with more than one layer they are numbered layer by layer instead of step by
        step), with the per-step bookkeeping done once per sequence."""
        xs = list(xs)
        b = self.builder
        if len(xs) < 2:
            state, outputs = self, []
            for x in xs:
                state = state.add_input(x)
                outputs.append(state.output())
            return outputs
        steps = [list(x) if isinstance(x, (list, tuple)) else [x] for x in xs]
        k = len(b.input_dims)
        for pieces in steps:
            if len(pieces) != k:
                raise ValueError(f"this LSTM takes {k} input piece(s) of sizes "
                                 f"{b.input_dims}, got {len(pieces)}")
        previous = self._previous(steps[0][0])
        inputs = steps
        try:
            for layer in range(b.layers):
                h, c = previous[layer]
                outputs = b._steps[layer].sequence(steps, h, c)
                steps = [[s] for s in outputs]
        except ShapeError:
            b.check_inputs(inputs)  # checked only on failure: the loop above is the hot path
            raise
        return outputs

    def _previous(self, first_piece) -> tuple:
        """Every layer's ``(h, c)`` before the next input: this state's, or before the first
        input zeros with as many columns as ``first_piece`` (the zero ``h`` and the zero
        cell are two nodes, shared by the layers)."""
        if self.layers is not None:
            return self.layers
        b = self.builder
        columns = first_piece.shape[1:]
        zero = ops.api.zeros((b.hidden_dim,) + columns)
        return ((zero, ops.api.zeros((b.hidden_dim,) + columns)),) * b.layers


class BiLSTMBuilder:
    """A bidirectional LSTM of ``layers`` layers (DyNet's ``BiRNNBuilder``).

    Layer ``l + 1`` reads, at every position, the forward and backward outputs of layer ``l``
    as two input pieces. :meth:`transduce` returns the concatenation ``[f_t; b_t]`` at every
    position; :meth:`transduce_pieces` returns the pairs ``(f_t, b_t)``, which an
    ``affine_transform([b, W_f, f_t, W_b, b_t])`` can consume without a concatenate node.
    """

    def __init__(self, layers: int, input_dim, hidden_dim: int, model, name: str | None = None):
        name = model.unique_prefix("bilstm") if name is None else name
        if layers < 1:
            raise ValueError(f"a BiLSTM needs at least one layer, got {layers}")
        self.layers = int(layers)
        self.hidden_dim = int(hidden_dim)
        self.forward: list[LSTMBuilder] = []
        self.backward: list[LSTMBuilder] = []
        for layer in range(self.layers):
            dims = input_dim if layer == 0 else (self.hidden_dim, self.hidden_dim)
            self.forward.append(LSTMBuilder(1, dims, hidden_dim, model, name=f"{name}.f{layer}"))
            self.backward.append(LSTMBuilder(1, dims, hidden_dim, model, name=f"{name}.b{layer}"))

    @property
    def output_dim(self) -> int:
        return 2 * self.hidden_dim

    def transduce_pieces(self, xs) -> list:
        """``[(f_1, b_1), ..., (f_n, b_n)]`` for the inputs ``xs`` (each an expression or a
        list of pieces)."""
        xs = list(xs)
        if not xs:
            raise ValueError("BiLSTM.transduce: needs at least one input")
        for fwd, bwd in zip(self.forward, self.backward):
            f = fwd.initial_state().transduce(xs)
            b = bwd.initial_state().transduce(xs[::-1])[::-1]
            xs = [[ft, bt] for ft, bt in zip(f, b)]
        return [tuple(p) for p in xs]

    def transduce(self, xs) -> list:
        """``[f_t; b_t]`` at every position."""
        return [ops.api.concatenate(list(p)) for p in self.transduce_pieces(xs)]
