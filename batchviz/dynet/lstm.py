"""DyNet's ``VanillaLSTMBuilder`` (also ``LSTMBuilder``) on batchviz's fused LSTM steps, and
``BiRNNBuilder``.

DyNet computes a vanilla LSTM step as an affine transform, four ``pick_range``s, four
activations and four element-wise products: a dozen nodes. batchviz's
:class:`~batchviz.nn.LSTMBuilder` builds the same step as two nodes (the input projection
and one fused ``lstm_step``, :mod:`batchviz.ops.lstm_steps`), with the same parameters in
the same layout (per layer ``W_x``, ``W_h``, ``b``, gates ``[i, f, o, g]``), so this builder
is that one with DyNet's interface. The values are DyNet's: DyNet adds ``forget_bias`` (1 by
default) to the forget gate at every step; here it is stored in the bias (an offset that
DyNet's view of the bias, ``get_parameters()[l][2].as_array()``, takes off). The first step
reads zero state where DyNet reads none: the same values.

With dropout (``set_dropout``), every step is built on its own (variational masks on the
input and on the recurrent state, one mask per layer for the graph, as in DyNet).

DyNet's experimental ``SparseLSTMBuilder`` is the same builder whose steps read the weight
matrices multiplied by 0/1 masks, for pruning (:mod:`.sparse_lstm`).
"""
from __future__ import annotations

import numpy as np

from ..nn.lstm import LSTMBuilder as FusedLSTM
from ..nn.lstm import LSTMState as FusedState
from ..ops import api as bv
from .dims import to_shape
from .expression import Expression, as_expression
from .graph import rng
from .initializers import GlorotInitializer
from .arith import cmult, logistic, tanh
from .reductions import layer_norm
from .rnn import RNNBuilder, RNNState
from .shaping import concatenate, pick_range


class VanillaLSTMBuilder(RNNBuilder):
    """A stack of vanilla LSTMs (no peepholes); parameters per layer ``[W_x, W_h, b]``."""

    collection_name = "vanilla-lstm-builder"
    cells = True

    def __new__(cls, layers: int, input_dim: int, hidden_dim: int, model, ln_lstm=False,
                forget_bias: float = 1.0):
        """With ``ln_lstm`` (any true value, as DyNet reads it) the builder is a
        :class:`LayerNormLSTMBuilder`, whose steps are DyNet's own ops."""
        if ln_lstm:
            return cls._layer_normalized(layers, input_dim, hidden_dim, model, forget_bias)
        return super().__new__(cls)

    @staticmethod
    def _layer_normalized(layers, input_dim, hidden_dim, model, forget_bias):
        """The builder that ``ln_lstm=True`` gives instead (a subclass may say another)."""
        return LayerNormLSTMBuilder(layers, input_dim, hidden_dim, model, forget_bias)

    def __init__(self, layers: int, input_dim: int, hidden_dim: int, model, ln_lstm=False,
                 forget_bias: float = 1.0):
        super().__init__(layers, input_dim, hidden_dim, model)
        self.spec = (self.layers, self.input_dim, self.hidden_dim, False, float(forget_bias))
        H = self.hidden_dim
        self.fused = FusedLSTM(self.layers, self.input_dim, H, self.local._model,
                               name=self.local.name())
        offset = np.zeros(4 * H)
        offset[H:2 * H] = forget_bias
        glorot, generator = GlorotInitializer(), rng()
        self._layer_params = []
        for i in range(self.layers):
            Wx, Wh, b = self.fused.Wx[i][0], self.fused.Wh[i], self.fused.b[i]
            Wx.set_value(glorot.values(Wx.shape, generator))
            Wh.set_value(glorot.values(Wh.shape, generator))
            b.set_value(offset)
            self._layer_params.append(self._adopt_layer(Wx, Wh, b, offset))

    def _adopt_layer(self, Wx, Wh, b, offset) -> list:
        """A layer's parameters (batchviz's, made by the fused LSTM) as DyNet's list of the
        layer, each named in this builder's collection in the order DyNet makes them."""
        return [self.local.adopt(Wx), self.local.adopt(Wh), self.local.adopt(b, offset)]

    @classmethod
    def from_spec(cls, spec, model):
        layers, input_dim, hidden_dim, ln_lstm, forget_bias = spec
        return cls(layers, input_dim, hidden_dim, model, ln_lstm, forget_bias)

    # --- states: (a batchviz LSTMState, the minibatch size) ----------------------------------
    def _fused_state(self, layers, bd: int) -> FusedState:
        if layers is None:
            return self.fused.initial_state()
        fused, state_bd = layers
        if state_bd == bd or bd == 1:
            return fused
        return FusedState(self.fused, tuple(   # an unbatched state read by a minibatch
            self._broadcast_pair(h, c, state_bd, bd) for h, c in fused.layers))

    def _broadcast_pair(self, h, c, bd_from: int, bd: int) -> tuple:
        """``(h, c)`` nodes of minibatch ``bd_from`` as nodes of minibatch ``bd`` (a step
        node as a cell means its cell: it is cut out first)."""
        size = (self.hidden_dim,)
        return (to_shape(Expression(h, bd_from), size, bd),
                to_shape(Expression(bv.lstm_step_cell(c), bd_from), size, bd))

    def _add(self, layers, x: Expression):
        if self.dropout_rate or self.dropout_rate_h:
            return self._add_dropped(layers, x)
        bd = x.bd if layers is None else max(x.bd, layers[1])
        return self._fused_state(layers, bd).add_input(x.x), bd

    def _transduce(self, layers, xs) -> list:
        bds = {x.bd for x in xs}
        if self.dropout_rate or self.dropout_rate_h or len(bds) > 1 or not xs:
            return super()._transduce(layers, xs)
        bd = max(bds | ({layers[1]} if layers is not None else set()))
        outputs = self._fused_state(layers, bd).transduce([x.x for x in xs])
        return [Expression(h, bd) for h in outputs]

    def _add_dropped(self, layers, x: Expression):
        bd = x.bd if layers is None else max(x.bd, layers[1])
        previous = None if layers is None else self._fused_state(layers, bd).layers
        new, inp = [], x
        for i in range(self.layers):
            h_prev, c_prev = (None, None) if previous is None else previous[i]
            h_in = None if h_prev is None else Expression(h_prev, bd)
            inp, h_in = self._dropped(inp, i, h_in)
            if h_in is None:  # the first step: zero state
                zero = bv.zeros((self.hidden_dim,) + inp.x.shape[1:])
                h_node, c_prev = zero, zero
            else:
                h_node = h_in.x
            step = self.fused._steps[i].step([inp.x], h_node, c_prev)   # (the layer's weights)
            new.append((step, step))
            inp = Expression(step, bd)
        return FusedState(self.fused, tuple(new)), bd

    def _output(self, layers):
        return None if layers is None else Expression(layers[0].output(), layers[1])

    def _h(self, layers) -> list:
        return [] if layers is None else [Expression(h, layers[1]) for h in layers[0].h()]

    def _s(self, layers) -> list:
        return [] if layers is None else [Expression(v, layers[1]) for v in layers[0].s()]

    def _set_h(self, layers, es) -> tuple:
        pairs = super()._set_h(None if layers is None else self._pairs(layers), es)
        return self._from_pairs(pairs)

    def _set_s(self, layers, es) -> tuple:
        pairs = super()._set_s(None if layers is None else self._pairs(layers), es)
        return self._from_pairs(pairs)

    def _pairs(self, layers) -> tuple:
        """The state as DyNet's ``(h, c)`` expressions per layer (a step node is both)."""
        fused, bd = layers
        return tuple((Expression(h, bd), Expression(c, bd)) for h, c in fused.layers)

    def _from_pairs(self, pairs):
        bd = max(max(h.bd, c.bd) for h, c in pairs)
        layers = []
        for h, c in pairs:
            if h.bd == c.bd == bd and h.x.shape == c.x.shape:
                layers.append((h.x, c.x))   # (a step node as a cell: its cell is read)
            else:
                layers.append((to_shape(h, (self.hidden_dim,), bd),
                               to_shape(Expression(bv.lstm_step_cell(c.x), c.bd),
                                        (self.hidden_dim,), bd)))
        return FusedState(self.fused, tuple(layers)), bd


LSTMBuilder = VanillaLSTMBuilder


class CompactVanillaLSTMBuilder(VanillaLSTMBuilder):
    """DyNet's LSTM written with its three fused ops per step (``vanilla_lstm_gates``,
    ``_c``, ``_h``): the same values as :class:`VanillaLSTMBuilder`'s (DyNet's forget bias
    of 1 included), from parameters of its own collection, ``/compact-vanilla-lstm-builder``;
    here its steps are the same fused nodes."""

    collection_name = "compact-vanilla-lstm-builder"

    def __init__(self, layers: int, input_dim: int, hidden_dim: int, model):
        super().__init__(layers, input_dim, hidden_dim, model)
        self.spec = (self.layers, self.input_dim, self.hidden_dim)

    @classmethod
    def from_spec(cls, spec, model):
        return cls(*spec[:3], model)

    def set_weightnoise(self, std: float) -> None:
        """Gaussian noise on the weights at every step while training (DyNet's option)."""
        if std:
            raise NotImplementedError("CompactVanillaLSTMBuilder.set_weightnoise: batchviz.dynet "
                                      "adds weight noise in dy.vanilla_lstm_gates(..., "
                                      "weightnoise_std=...); write the steps with it")


class LayerNormLSTMBuilder(RNNBuilder):
    """DyNet's ``VanillaLSTMBuilder(..., ln_lstm=True)``: the vanilla LSTM with layer
    normalization (Ba et al., 2016) of the input's and the state's products and of the cell,
    written with DyNet's ops as DyNet's ``lstm.cc`` writes it::

        a = b + LN(W_x x; g_x, b_x) + LN(W_h h; g_h, b_h)      # [i, f, o, g] blocks
        c = sigmoid(a_f + forget_bias) * c_prev + sigmoid(a_i) * tanh(a_g)
        h = sigmoid(a_o) * tanh(LN(c; g_c, b_c))

    Parameters per layer ``[W_x, W_h, b]`` in the builder's collection; the normalization's
    gains (ones) and biases (zeros) ``g_h, b_h, g_x, b_x, g_c, b_c`` in the model the builder
    was given, where DyNet puts them. A graph of a dozen nodes per step, as in DyNet: the
    fused steps of :class:`VanillaLSTMBuilder` have no normalization."""

    collection_name = "vanilla-lstm-builder"
    cells = True

    def __init__(self, layers: int, input_dim: int, hidden_dim: int, model,
                 forget_bias: float = 1.0):
        super().__init__(layers, input_dim, hidden_dim, model)
        self.spec = (self.layers, self.input_dim, self.hidden_dim, True, float(forget_bias))
        self.forget_bias = float(forget_bias)
        H = self.hidden_dim
        self._layer_params, self._norm_params = [], []
        for i in range(self.layers):
            self._layer_params.append(self._make_layer(i))
            self._norm_params.append([model.add_parameters((size,), init=init)
                                      for size, init in ((4 * H, 1.0), (4 * H, 0.0),
                                                         (4 * H, 1.0), (4 * H, 0.0),
                                                         (H, 1.0), (H, 0.0))])

    def _make_layer(self, i: int) -> list:
        """Layer ``i``'s ``[W_x, W_h, b]``, made in the builder's collection."""
        H, add = self.hidden_dim, self.local.add_parameters
        return [add((4 * H, self.input_dim if i == 0 else H)), add((4 * H, H)),
                add((4 * H,), init=0.0)]

    @classmethod
    def from_spec(cls, spec, model):
        layers, input_dim, hidden_dim, _, forget_bias = spec
        return cls(layers, input_dim, hidden_dim, model, forget_bias)

    def _step_weights(self, i: int) -> list:
        """The ``[W_x, W_h, b]`` that layer ``i``'s steps read."""
        return self._layer_params[i]

    def _step(self, i, x, state):
        Wx, Wh, b = self._step_weights(i)
        gh, bh, gx, bx, gc, bc = self._norm_params[i]
        h_prev, c_prev = (None, None) if state is None else state
        x, h_prev = self._dropped(x, i, h_prev)
        a = b + layer_norm(Wx * x, gx, bx)
        if h_prev is not None:
            a = a + layer_norm(Wh * h_prev, gh, bh)
        H = self.hidden_dim
        i_gate = logistic(pick_range(a, 0, H))
        f_gate = pick_range(a, H, 2 * H)
        f_gate = logistic(f_gate + self.forget_bias if self.forget_bias else f_gate)
        o_gate = logistic(pick_range(a, 2 * H, 3 * H))
        written = tanh(pick_range(a, 3 * H, 4 * H))
        c = cmult(i_gate, written) if c_prev is None else (cmult(f_gate, c_prev)
                                                           + cmult(i_gate, written))
        return (cmult(o_gate, tanh(layer_norm(c, gc, bc))), c)


class BiRNNBuilder:
    """A bidirectional RNN of ``num_layers`` layers: each a forward and a backward builder
    of ``hidden_dim / 2`` (DyNet's sizes: ``hidden_dim`` is the size of the concatenated
    output), made by ``rnn_builder_factory`` (e.g. ``dy.VanillaLSTMBuilder``)."""

    def __init__(self, num_layers, input_dim, hidden_dim, model, rnn_builder_factory,
                 builder_layers=None):
        self.spec = (num_layers, input_dim, hidden_dim, rnn_builder_factory, builder_layers)
        self.model = model.add_subcollection("birnn")
        if builder_layers is None:
            if num_layers < 1 or hidden_dim % 2:
                raise ValueError(f"BiRNNBuilder: needs at least one layer and an even "
                                 f"hidden_dim, got {num_layers} and {hidden_dim}")
            half = int(hidden_dim) // 2
            builder_layers = []
            for layer in range(num_layers):
                d = input_dim if layer == 0 else hidden_dim
                builder_layers.append((rnn_builder_factory(1, d, half, self.model),
                                       rnn_builder_factory(1, d, half, self.model)))
        self.builder_layers = list(builder_layers)

    @classmethod
    def from_spec(cls, spec, model):
        return cls(*spec[:3], model, spec[3])

    def param_collection(self):
        return self.model

    def whoami(self) -> str:
        return "BiRNNBuilder"

    def set_dropout(self, p: float) -> None:
        for fb, bb in self.builder_layers:
            fb.set_dropout(p)
            bb.set_dropout(p)

    def disable_dropout(self) -> None:
        for fb, bb in self.builder_layers:
            fb.disable_dropout()
            bb.disable_dropout()

    def _layer(self, fb, bb, es) -> list:
        fs = fb.initial_state().transduce(es)
        bs = bb.initial_state().transduce(es[::-1])
        return [concatenate([f, b]) for f, b in zip(fs, bs[::-1])]

    def transduce(self, es) -> list:
        """``[f_t; b_t]`` at every position, through every layer."""
        es = [as_expression(e, "BiRNNBuilder.transduce") for e in es]
        for fb, bb in self.builder_layers:
            es = self._layer(fb, bb, es)
        return es

    def add_inputs(self, es) -> list:
        """The ``(forward state, backward state)`` pairs of the last layer at every position."""
        es = [as_expression(e, "BiRNNBuilder.add_inputs") for e in es]
        for fb, bb in self.builder_layers[:-1]:
            es = self._layer(fb, bb, es)
        fb, bb = self.builder_layers[-1]
        fs = fb.initial_state().add_inputs(es)
        bs = bb.initial_state().add_inputs(es[::-1])
        return list(zip(fs, bs[::-1]))


__all__ = ["VanillaLSTMBuilder", "LSTMBuilder", "LayerNormLSTMBuilder", "BiRNNBuilder",
           "RNNState"]
