"""DyNet's recurrent builders and their states: ``RNNState`` and the builders written with
DyNet's own ops (``SimpleRNNBuilder``, ``GRUBuilder``, ``CoupledLSTMBuilder``).

A builder owns the parameters (in a sub-collection named as DyNet names it) and says how
one step goes; an :class:`RNNState` is one position in one sequence (``add_input`` returns
the next, ``prev()`` the one before). The equations and the parameters' order are DyNet's
(its ``rnn.cc``, ``gru.cc`` and ``lstm.cc``), including the first step, which has no
previous state (no recurrent term), so the graphs have DyNet's nodes. Dropout is DyNet's:
the variational kind (one mask per layer for the whole graph, on the input and the
recurrent state) for the simple RNN and the LSTMs, plain dropout of each input and output
for the GRU.
"""
from __future__ import annotations

from .arith import affine_transform, cmult, logistic, tanh
from .dims import dims_of
from .expression import Expression, as_expression
from .graph import current
from .inputs import inputTensor, random_bernoulli, zeros
from .losses import dropout
from .shaping import reshape


def _size(v):
    """``v`` as an int when it is a whole number (DyNet takes ``hidden / 2``, a float in
    Python 3); None otherwise."""
    try:
        return int(v) if float(v) == int(v) else None
    except (TypeError, ValueError):
        return None


def _as_input(x, who: str) -> Expression:
    """``x`` as a builder's input. A ``(n, 1)`` column is the vector it holds, as in DyNet,
    whose builders take it: a product of a matrix and a column (an attention's context,
    ``M * weights``) is one, and so is what it is concatenated into."""
    return _as_input_column(x, who)


def _as_input_column(x, who: str) -> Expression:
    """:func:`_as_input` of any ``x`` (its twin takes the usual vector at once)."""
    x = as_expression(x, who)
    dims = dims_of(x)
    if len(dims) == 2 and dims[1] == 1:
        return reshape(x, dims[:1], x.bd)
    return x


def states_after(state, xs) -> list:
    """The states after each input of ``xs``, read one after another from ``state`` (DyNet's
    ``add_inputs``, of a builder's state or of a stack of them)."""
    states = []
    for x in xs:
        state = state.add_input(x)
        states.append(state)
    return states


class RNNState:
    """A position in a sequence: the state of every layer after the inputs so far."""

    __slots__ = ("builder", "layers", "_prev", "_out", "_h_exprs", "_s_exprs")

    def __init__(self, builder, layers, prev=None, out=None):
        self.builder, self.layers, self._prev, self._out = builder, layers, prev, out
        self._h_exprs = self._s_exprs = None   # h() and s(), made on first use

    def add_input(self, x) -> "RNNState":
        layers = self.builder._add(self.layers, _as_input(x, "add_input"))
        return RNNState(self.builder, layers, self, self.builder._output(layers))

    def add_inputs(self, xs) -> list:
        return states_after(self, xs)

    def transduce(self, xs) -> list:
        """The output after each input of ``xs``, in order."""
        return self.builder._transduce(self.layers, [_as_input(x, "transduce") for x in xs])

    def output(self):
        return self._out

    def h(self) -> tuple:
        """The output of every layer (the network's output last). The same expressions
        every time, as in DyNet: asking again adds no nodes to the graph."""
        if self._h_exprs is None:
            self._h_exprs = tuple(self.builder._h(self.layers))
        return self._h_exprs

    def s(self) -> tuple:
        """The whole state: for LSTMs the cells of every layer, then their outputs (the
        same expressions every time, as :meth:`h`)."""
        if self._s_exprs is None:
            self._s_exprs = tuple(self.builder._s(self.layers))
        return self._s_exprs

    def prev(self):
        return self._prev

    def set_h(self, es=None) -> "RNNState":
        layers = self.builder._set_h(self.layers, list(es or []))
        return RNNState(self.builder, layers, self, self.builder._output(layers))

    def set_s(self, es=None) -> "RNNState":
        layers = self.builder._set_s(self.layers, list(es or []))
        return RNNState(self.builder, layers, self, self.builder._output(layers))

    def b(self):
        return self.builder


class RNNBuilder:
    """What every builder shares: parameters per layer, initial states, dropout.

    A subclass sets ``_layer_params`` (per layer, DyNet's list of parameters) and defines
    ``_step(layer, x, state)`` (``state``: that layer's state tuple, None before the first
    input) returning the layer's new state, whose first entry is its output ``h``."""

    collection_name = "rnn-builder"
    cells = False  # whether a layer's state is (h, c) rather than (h,)

    def __init__(self, layers: int, input_dim: int, hidden_dim: int, model):
        sizes = [_size(v) for v in (layers, input_dim, hidden_dim)]
        if None in sizes or min(sizes) < 1:
            raise ValueError(f"{type(self).__name__}: layers, input_dim and hidden_dim must be "
                             f"positive whole numbers, got {layers}, {input_dim}, {hidden_dim}")
        self.spec = tuple(sizes)
        self.layers, self.input_dim, self.hidden_dim = self.spec
        self.model = model
        self.local = model.add_subcollection(self.collection_name)
        self.dropout_rate = self.dropout_rate_h = 0.0
        self._masks = (None, {})
        self._started_in = None   # the graph of the last initial_state()

    # --- DyNet's builder API ------------------------------------------------------------
    @classmethod
    def from_spec(cls, spec, model):
        return cls(*spec[:3], model)

    def param_collection(self):
        return self.local

    def get_parameters(self) -> list:
        return [list(ps) for ps in self._layer_params]

    def get_parameter_expressions(self) -> list:
        """The parameters as expressions of the current graph: as in DyNet, only after
        ``initial_state()`` in this graph (DyNet puts them into the graph there)."""
        if self._started_in is not current():
            raise ValueError(f"Attempt to use a stale expression, renew CG and/or call "
                             f"initial_state before accessing {self.whoami()} internal "
                             "parameters expression")
        return self.get_parameters()

    def _add_layer_parameters(self, kinds: str) -> None:
        """Per layer, in DyNet's order, one parameter per letter of ``kinds``: ``x`` a
        matrix from the layer's input, ``h`` one from the hidden state, ``c`` a column (a
        diagonal peephole from the cell), ``b`` a bias (zeros)."""
        H, add = self.hidden_dim, self.local.add_parameters
        self._layer_params = []
        for i in range(self.layers):
            shape = {"x": (H, self.input_dim if i == 0 else H), "h": (H, H), "c": (H, 1)}
            self._layer_params.append([add(shape[k]) if k != "b" else add((H,), init=0.0)
                                       for k in kinds])

    def set_dropout(self, p: float) -> None:
        self.set_dropouts(p, p)

    def set_dropouts(self, d: float, d_h: float) -> None:
        if not (0.0 <= d <= 1.0 and 0.0 <= d_h <= 1.0):
            raise ValueError(f"dropout rates must be probabilities, got {d} and {d_h}")
        self.dropout_rate, self.dropout_rate_h = float(d), float(d_h)

    def disable_dropout(self) -> None:
        self.dropout_rate = self.dropout_rate_h = 0.0

    def set_dropout_masks(self, batch_size: int = 1) -> None:
        self._masks = (current(), {})

    def initial_state(self, vecs=None, update: bool = True) -> RNNState:
        """The state before the first input; ``vecs``: DyNet's initial state (for LSTMs the
        cells of every layer, then the outputs; else the outputs)."""
        self._started_in = current()
        start = RNNState(self, None)
        return start if vecs is None else start.set_s(vecs)

    def initial_state_from_raw_vectors(self, vecs, update: bool = True) -> RNNState:
        return self.initial_state([inputTensor(v) for v in vecs], update)

    def whoami(self) -> str:
        return type(self).__name__

    # --- steps -----------------------------------------------------------------------------
    def _add(self, layers, x: Expression):
        new, inp = [], x
        for i in range(self.layers):
            state = self._step(i, inp, None if layers is None else layers[i])
            new.append(state)
            inp = state[0]
        return tuple(new)

    def _transduce(self, layers, xs) -> list:
        outputs = []
        for x in xs:
            layers = self._add(layers, x)
            outputs.append(self._output(layers))
        return outputs

    def _output(self, layers):
        return None if layers is None else layers[-1][0]

    def _h(self, layers) -> list:
        return [] if layers is None else [state[0] for state in layers]

    def _s(self, layers) -> list:
        if layers is None:
            return []
        if self.cells:
            return [state[1] for state in layers] + [state[0] for state in layers]
        return self._h(layers)

    def _set_h(self, layers, es) -> tuple:
        if len(es) != self.layers:
            raise ValueError(f"set_h expects as many inputs as layers ({self.layers}), got "
                             f"{len(es)}")
        if not self.cells:
            return tuple((as_expression(e, "set_h"),) for e in es)
        cells = [zeros(self.hidden_dim) if layers is None else state[1] for state in
                 (layers or [None] * self.layers)]
        return tuple((as_expression(h, "set_h"), c) for h, c in zip(es, cells))

    def _set_s(self, layers, es) -> tuple:
        if not self.cells:
            return self._set_h(layers, es)
        L = self.layers
        if len(es) not in (L, 2 * L):
            raise ValueError(f"set_s expects {L} cells, or {L} cells then {L} outputs, got "
                             f"{len(es)}")
        if len(es) == 2 * L:
            hs = es[L:]
        else:
            hs = [zeros(self.hidden_dim)] * L if layers is None else [s[0] for s in layers]
        return tuple((as_expression(h, "set_s"), as_expression(c, "set_s"))
                     for h, c in zip(hs, es[:L]))

    # --- dropout masks: one per layer and use, for the whole graph ---------------------------
    def _mask(self, layer: int, which: int, rate: float, size: int, bd: int):
        graph, masks = self._masks
        if graph is not current():
            graph, masks = current(), {}
            self._masks = (graph, masks)
        key = (layer, which, bd)
        if key not in masks or masks[key].x.graph is not graph:  # (or removed by a revert)
            masks[key] = random_bernoulli(size, 1.0 - rate, 1.0 / (1.0 - rate), bd)
        return masks[key]

    def _dropped(self, x, layer: int, h_prev):
        """The layer's input and previous output with the variational masks applied."""
        size = self.input_dim if layer == 0 else self.hidden_dim
        if self.dropout_rate > 0:
            x = cmult(x, self._mask(layer, 0, self.dropout_rate, size, x.bd))
        if h_prev is not None and self.dropout_rate_h > 0:
            h_prev = cmult(h_prev, self._mask(layer, 1, self.dropout_rate_h, self.hidden_dim,
                                              x.bd))
        return x, h_prev


class SimpleRNNBuilder(RNNBuilder):
    """``h_t = tanh(W_x x_t + W_h h_{t-1} + b)``; parameters per layer ``[W_x, W_h, b]``."""

    collection_name = "simple-rnn-builder"

    def __init__(self, layers: int, input_dim: int, hidden_dim: int, model):
        super().__init__(layers, input_dim, hidden_dim, model)
        self._add_layer_parameters("xhb")

    def _step(self, i, x, state):
        Wx, Wh, b = self._layer_params[i]
        x, h_prev = self._dropped(x, i, None if state is None else state[0])
        if h_prev is None:
            return (tanh(affine_transform([b, Wx, x])),)
        return (tanh(affine_transform([b, Wx, x, Wh, h_prev])),)


class GRUBuilder(RNNBuilder):
    """The gated recurrent unit (Cho et al., 2014) as DyNet writes it; parameters per layer
    ``[W_xz, W_hz, b_z, W_xr, W_hr, b_r, W_xh, W_hh, b_h]``."""

    collection_name = "gru-builder"

    def __init__(self, layers: int, input_dim: int, hidden_dim: int, model):
        super().__init__(layers, input_dim, hidden_dim, model)
        self._add_layer_parameters("xhb" * 3)  # z, r, h

    def _step(self, i, x, state):
        Wxz, Whz, bz, Wxr, Whr, br, Wxh, Whh, bh = self._layer_params[i]
        if self.dropout_rate:
            x = dropout(x, self.dropout_rate)
        if state is None:  # no previous state: no recurrent terms
            z = logistic(affine_transform([bz, Wxz, x]))
            h = cmult(z, tanh(affine_transform([bh, Wxh, x])))
        else:
            h_prev = state[0]
            z = logistic(affine_transform([bz, Wxz, x, Whz, h_prev]))
            r = logistic(affine_transform([br, Wxr, x, Whr, h_prev]))
            c = tanh(affine_transform([bh, Wxh, x, Whh, cmult(r, h_prev)]))
            h = cmult(1.0 - z, h_prev) + cmult(z, c)
        if self.dropout_rate and i == self.layers - 1:
            h = dropout(h, self.dropout_rate)
        return (h,)


class CoupledLSTMBuilder(RNNBuilder):
    """The LSTM with peephole connections and coupled input and forget gates
    (``f = 1 - i``), DyNet's ``CoupledLSTMBuilder``; parameters per layer ``[W_xi, W_hi,
    W_ci, b_i, W_xo, W_ho, W_co, b_o, W_xc, W_hc, b_c]``."""

    collection_name = "lstm-builder"
    cells = True

    def __init__(self, layers: int, input_dim: int, hidden_dim: int, model):
        super().__init__(layers, input_dim, hidden_dim, model)
        self._add_layer_parameters("xhhb" "xhhb" "xhb")  # i, o, c

    def _step(self, i, x, state):
        Wxi, Whi, Wci, bi, Wxo, Who, Wco, bo, Wxc, Whc, bc = self._layer_params[i]
        h_prev, c_prev = (None, None) if state is None else state
        x, h_prev = self._dropped(x, i, h_prev)
        if h_prev is None:
            gate_i = logistic(affine_transform([bi, Wxi, x]))
            c = cmult(gate_i, tanh(affine_transform([bc, Wxc, x])))
            gate_o = logistic(affine_transform([bo, Wxo, x, Wco, c]))
        else:
            gate_i = logistic(affine_transform([bi, Wxi, x, Whi, h_prev, Wci, c_prev]))
            written = tanh(affine_transform([bc, Wxc, x, Whc, h_prev]))
            c = cmult(1.0 - gate_i, c_prev) + cmult(gate_i, written)
            gate_o = logistic(affine_transform([bo, Wxo, x, Who, h_prev, Wco, c]))
        return (cmult(gate_o, tanh(c)), c)


class FastLSTMBuilder(RNNBuilder):
    """DyNet's ``FastLSTMBuilder`` (``fast-lstm.cc``): coupled input and forget gates
    (``f = 1 - i``); parameters per layer ``[W_xi, W_hi, w_ci, b_i, W_xo, W_ho, w_co, b_o,
    W_xc, W_hc, b_c]``, the ``w_c*`` columns its diagonal peepholes from the cell.

    DyNet 2.1 makes the peephole columns but leaves them out of its equations (they are
    commented out there, "TODO"), so they get no gradient, and it applies no dropout;
    both are kept here, so that a program gets DyNet's values::

        i = sigmoid(b_i + W_xi x + W_hi h_prev)     o = sigmoid(b_o + W_xo x + W_ho h_prev)
        c = (1 - i) * c_prev + i * tanh(b_c + W_xc x + W_hc h_prev)      h = o * tanh(c)
    """

    collection_name = "fast-lstm-builder"
    cells = True

    def __init__(self, layers: int, input_dim: int, hidden_dim: int, model):
        super().__init__(layers, input_dim, hidden_dim, model)
        self._add_layer_parameters("xhcb" "xhcb" "xhb")  # i, o, c

    def initial_state(self, vecs=None, update: bool = True) -> RNNState:
        """``vecs``: the cells of every layer, then their outputs (all of them, as DyNet)."""
        if vecs is not None and len(vecs) != 2 * self.layers:
            raise ValueError(f"FastLSTMBuilder must be initialized with 2 times as many "
                             f"expressions as layers (hidden state and cell for each layer). "
                             f"However, for {self.layers} layers, {len(vecs)} expressions "
                             "were passed in")
        return super().initial_state(vecs, update)

    def _step(self, i, x, state):
        Wxi, Whi, _, bi, Wxo, Who, _, bo, Wxc, Whc, bc = self._layer_params[i]
        h_prev, c_prev = (None, None) if state is None else state
        if h_prev is None:   # the first step: no recurrent terms, as DyNet
            gate_i = logistic(affine_transform([bi, Wxi, x]))
            c = cmult(gate_i, tanh(affine_transform([bc, Wxc, x])))
            gate_o = logistic(affine_transform([bo, Wxo, x]))
        else:
            gate_i = logistic(affine_transform([bi, Wxi, x, Whi, h_prev]))
            written = tanh(affine_transform([bc, Wxc, x, Whc, h_prev]))
            c = cmult(1.0 - gate_i, c_prev) + cmult(gate_i, written)
            gate_o = logistic(affine_transform([bo, Wxo, x, Who, h_prev]))
        return (cmult(gate_o, tanh(c)), c)


__all__ = ["RNNState", "RNNBuilder", "SimpleRNNBuilder", "GRUBuilder", "CoupledLSTMBuilder",
           "FastLSTMBuilder"]
