"""DyNet's experimental ``SparseLSTMBuilder``: the vanilla LSTM with a 0/1 mask on each
weight matrix, so that a trained network can be pruned (Narang et al., 2017).

DyNet writes it as a copy of its ``VanillaLSTMBuilder`` with the masks added; here it is
:class:`~batchviz.dynet.lstm.VanillaLSTMBuilder` (and, with ``ln_lstm=True``,
:class:`~batchviz.dynet.lstm.LayerNormLSTMBuilder`) with what the masks change mixed in
(:class:`_Masked`): which parameters a layer has, and which matrices its steps read.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..ops.lstm_sequences import SequenceBuilder
from .arith import cmult
from .graph import current
from .lstm import LayerNormLSTMBuilder, VanillaLSTMBuilder
from .parameters import const_parameter


class _Masked:
    """What DyNet's sparse LSTM adds to an LSTM builder (Narang et al., 2017): a 0/1 mask
    for each of a layer's ``W_x`` and ``W_h``, so that a trained network can be *pruned*
    (the weights of smallest magnitude switched off, more and more of them as training
    goes on, by :meth:`set_sparsity`) and keep working with the rest.

    A layer's parameters are DyNet's ``[W_x, W_h, b, M_x, M_h]`` (the masks made after
    ``W_h``, ones at first). The steps read ``W_x * M_x`` and ``W_h * M_h`` (entry by entry,
    the masks constants: no gradient reaches them, and a switched-off weight gets none),
    two nodes per layer made once per graph, as DyNet makes them at ``initial_state()``.
    Those are computed nodes, not parameters, so a batch of steps reads its copy of them
    per step rather than one shared matrix (App. A's shared argument is a parameter): the
    values are a vanilla LSTM's with masked weights, and the batches are slower than
    :class:`VanillaLSTMBuilder`'s."""

    def _make_masks(self, x_shape, h_shape) -> list:
        add = self.local.add_parameters
        return [add(x_shape, init=1.0), add(h_shape, init=1.0)]

    def _graph_weights(self) -> list:
        """Per layer ``[W_x * M_x, W_h * M_h, b]``, expressions of the current graph (made
        on the first call in a graph; later calls in it return the same ones)."""
        graph = current()
        if getattr(self, "_weights_of", (None,))[0] is not graph:
            weights = [[cmult(Wx, const_parameter(Mx)), cmult(Wh, const_parameter(Mh)), b]
                       for Wx, Wh, b, Mx, Mh in self._layer_params]
            self._weights_of = (graph, weights)
            self._new_graph(weights)
        return self._weights_of[1]

    def _new_graph(self, weights) -> None:
        """What else the builder needs once a graph's masked weights are made."""

    def initial_state(self, vecs=None, update: bool = True):
        self._graph_weights()
        return super().initial_state(vecs, update)

    def get_parameter_expressions(self) -> list:
        """Per layer ``[W_x * M_x, W_h * M_h, b]``, the expressions the steps read, as
        DyNet gives them (after ``initial_state()`` in this graph, or ValueError)."""
        super().get_parameter_expressions()   # (raises when initial_state() was not called)
        return [list(layer) for layer in self._graph_weights()]

    def _add(self, layers, x):
        self._graph_weights()   # (a state kept from an earlier graph: this graph's weights)
        return super()._add(layers, x)

    def _transduce(self, layers, xs) -> list:
        self._graph_weights()
        return super()._transduce(layers, xs)

    def set_sparsity(self, sparsity: float) -> None:
        """Prune: switch off the fraction ``sparsity`` (0 to 1) of all the weights of the
        ``W_x`` and ``W_h`` of every layer, those of smallest magnitude ``|W * M|`` (so the
        ones already off stay off while the fraction grows), and switch every other one
        on. The masks are set; the weights keep their values. DyNet's count of weights to
        prune is ``int(sparsity * total)`` in single precision; ties are broken in the
        order of DyNet's memory (layer by layer, ``W_x`` then ``W_h``, column by column)."""
        if not isinstance(sparsity, numbers.Real) or not 0.0 <= sparsity <= 1.0:
            raise ValueError(f"set_sparsity: the fraction of weights to prune must be between "
                             f"0 and 1, got {sparsity!r}")
        pairs = [(W, M) for Wx, Wh, _, Mx, Mh in self._layer_params for W, M in ((Wx, Mx),
                                                                                 (Wh, Mh))]
        magnitudes = np.concatenate([np.abs(W.as_array() * M.as_array()).ravel(order="F")
                                     for W, M in pairs])
        total = magnitudes.size
        prune = int(np.float32(sparsity) * np.float32(total))
        kept = np.ones(total)
        kept[np.argsort(magnitudes, kind="stable")[:prune]] = 0.0
        start = 0
        for _, M in pairs:
            shape = M.shape()
            size = int(np.prod(shape))
            M.set_value(kept[start:start + size].reshape(shape, order="F"))
            start += size


class SparseLSTMBuilder(_Masked, VanillaLSTMBuilder):
    """DyNet's experimental ``SparseLSTMBuilder``: :class:`VanillaLSTMBuilder` (its fused
    steps, forget bias, dropout, parameters in ``/vanilla-lstm-builder``) with a mask on
    each weight matrix, pruned by ``set_sparsity`` (see :class:`_Masked`). With
    ``ln_lstm=True`` it is :class:`SparseLayerNormLSTMBuilder`."""

    @staticmethod
    def _layer_normalized(layers, input_dim, hidden_dim, model, forget_bias):
        return SparseLayerNormLSTMBuilder(layers, input_dim, hidden_dim, model, forget_bias)

    def _adopt_layer(self, Wx, Wh, b, offset) -> list:
        """DyNet's order of making: ``W_x``, ``W_h``, the two masks, ``b``; its order of
        listing: ``[W_x, W_h, b, M_x, M_h]``."""
        weights = [self.local.adopt(Wx), self.local.adopt(Wh)]
        masks = self._make_masks(Wx.shape, Wh.shape)
        return weights + [self.local.adopt(b, offset)] + masks

    def _new_graph(self, weights) -> None:
        """The fused steps of this graph read the masked matrices (and the bias as the
        fused LSTM keeps it, with the forget bias in it)."""
        self.fused._steps = [SequenceBuilder(self.fused.b[i], [Wx.x], Wh.x, self.hidden_dim)
                             for i, (Wx, Wh, _) in enumerate(weights)]


class SparseLayerNormLSTMBuilder(_Masked, LayerNormLSTMBuilder):
    """``SparseLSTMBuilder(..., ln_lstm=True)``: :class:`LayerNormLSTMBuilder` with the
    masks of :class:`_Masked` on ``W_x`` and ``W_h``."""

    def _make_layer(self, i: int) -> list:
        H, add = self.hidden_dim, self.local.add_parameters
        Wx, Wh = add((4 * H, self.input_dim if i == 0 else H)), add((4 * H, H))
        masks = self._make_masks(Wx.shape(), Wh.shape())
        return [Wx, Wh, add((4 * H,), init=0.0)] + masks

    def _step_weights(self, i: int) -> list:
        return self._graph_weights()[i]

    def whoami(self) -> str:
        return "SparseLSTMBuilder"


__all__ = ["SparseLSTMBuilder", "SparseLayerNormLSTMBuilder"]
