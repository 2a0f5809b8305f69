"""DyNet's fused LSTM ops: ``vanilla_lstm_gates`` (and its ``_concat``, ``_dropout`` and
``_dropout_concat`` forms), ``vanilla_lstm_c`` and ``vanilla_lstm_h``.

A program that writes its own LSTM with them (as DyNet's ``CompactVanillaLSTMBuilder``
does) builds three nodes per step; here they are batchviz's fused ops of the same meaning
(:mod:`batchviz.ops.lstm`), whose gates are in DyNet's block order ``[i, f, o, g]``: the
gates are DyNet's ``(4H,)`` vector (``((4H,), bd)`` for a minibatch, a ``(4H, bd)`` node),
so ``pick_range`` of them gives the gate a program asks for.

DyNet's definitions, checked by computing them (tests/dynet_cases.py):

* ``gates = [sigmoid(a_i), sigmoid(a_f + 1), sigmoid(a_o), tanh(a_g)]`` with ``a = Wx x +
  Wh h + b``: DyNet adds 1 to the forget gate's pre-activation, always. Here that is a
  constant added to the bias (batchviz's op has no forget bias).
* the ``_dropout`` forms use ``x * mask_x`` and ``h * mask_h`` in the products; the
  ``_concat`` forms concatenate the list of inputs (``Wx`` has their summed columns).
* ``c = i * g + f * c_prev``; ``h = o * tanh(c)``.

Minibatches: ``x`` (every piece), ``h``, the masks and ``c`` may be minibatches of one size
or unbatched, an unbatched one used for every instance (DyNet's rule). The weights and the
bias are one each: DyNet reads the first instance only of a minibatch of them, so that
raises here. Where DyNet computes something else, see "What differs" in the docs.
"""
from __future__ import annotations

import numpy as np

from ..ops import api as bv
from . import graph as _graph
from .arith import cmult
from .dims import dims_of, to_shape
from .expression import Expression, as_expression
from .inputs import random_normal
from .shaping import concatenate


def _batch(exprs, who: str) -> int:
    """The minibatch size of expressions that are each unbatched or of that size."""
    sizes = {e.bd for e in exprs} - {1}
    if len(sizes) > 1:
        raise ValueError(f"{who}: minibatch sizes {sorted(sizes)} differ (each argument is "
                         "unbatched or a minibatch of the same size)")
    return sizes.pop() if sizes else 1


def _vector(e: Expression, size, what: str, who: str) -> None:
    d = dims_of(e)
    if len(d) != 1 or (size is not None and d[0] != size):
        raise ValueError(f"{who}: {what} must be a vector"
                         + (f" of {size}" if size is not None else "") + f", got {e.dim()}")


def _weights(Wx, Wh, b, inputs: int, hidden: int, who: str) -> None:
    """Raise unless ``Wx`` is ``(4H, I)``, ``Wh`` ``(4H, H)`` and ``b`` ``(4H,)``, each one
    (not a minibatch)."""
    for name, e, dims in (("Wx", Wx, (4 * hidden, inputs)), ("Wh", Wh, (4 * hidden, hidden)),
                          ("b", b, (4 * hidden,))):
        if dims_of(e) != dims:
            raise ValueError(f"{who}: {name} must be {dims} for inputs of {inputs} and a state "
                             f"of {hidden} (4 gates of {hidden} rows), got {e.dim()}")
        if e.bd != 1:
            raise NotImplementedError(
                f"{who}: {name} is a minibatch ({e.dim()}): DyNet uses its first instance "
                "only; pass one matrix (dy.pick_batch_elem), or build one expression per "
                "instance and let autobatching batch them")


def _noisy(W: Expression, std: float) -> Expression:
    """``W`` plus Gaussian noise of deviation ``std``, drawn once for this node from the
    seeded generator (one draw for all the instances of a minibatch, as DyNet's)."""
    return W + random_normal(dims_of(W), 0.0, std)


#: the current graph's biases plus DyNet's forget gate bias: ``{id(b): (b, node)}``, and
#: ``"graph"``, the graph they belong to (the steps of a sequence share one node, not one each)
_BIASED: dict = {}


def _forget_biased(b, hidden: int):
    """The node ``b + [0, 1, 0, 0]`` (1 on the forget gate's block of ``hidden`` rows), made
    once per graph for each bias ``b`` (a parameter or a node)."""
    graph = _graph.current()
    if _BIASED.get("graph") is not graph:
        _BIASED.clear()
        _BIASED["graph"] = graph
    made = _BIASED.get(id(b))
    if made is None or made[1].graph is not graph:  # (or made after a checkpoint, reverted)
        offset = np.zeros(4 * hidden)
        offset[hidden:2 * hidden] = 1.0
        made = _BIASED[id(b)] = (b, bv.add(b, bv.input(offset)))   # (b kept: its id stays its)
    return made[1]


def _gates(xs, h_tm1, Wx, Wh, b, masks, weightnoise_std, who: str) -> Expression:
    xs = [as_expression(x, who) for x in xs]
    if not xs:
        raise ValueError(f"{who}: needs at least one input x_t")
    h, Wx, Wh, b = (as_expression(e, who) for e in (h_tm1, Wx, Wh, b))
    for k, x in enumerate(xs):
        _vector(x, None, f"x_t[{k}]" if len(xs) > 1 else "x_t", who)
    _vector(h, None, "h_tm1", who)
    hidden = dims_of(h)[0]
    x = xs[0] if len(xs) == 1 else concatenate(xs)
    inputs = dims_of(x)[0]
    _weights(Wx, Wh, b, inputs, hidden, who)
    if masks is not None:
        mask_x, mask_h = (as_expression(m, who) for m in masks)
        _vector(mask_x, inputs, "dropout_mask_x", who)
        _vector(mask_h, hidden, "dropout_mask_h", who)
        x, h = cmult(x, mask_x), cmult(h, mask_h)
    bd = _batch([x, h], who)
    if weightnoise_std < 0:
        raise ValueError(f"{who}: weightnoise_std must be >= 0, got {weightnoise_std}")
    if weightnoise_std > 0:
        Wx, Wh, b = (_noisy(e, float(weightnoise_std)) for e in (Wx, Wh, b))
    return Expression(bv.vanilla_lstm_gates(to_shape(x, (inputs,), bd), to_shape(h, (hidden,), bd),
                                            Wx.x, Wh.x, _forget_biased(b.x, hidden)), bd)


def vanilla_lstm_gates(x_t, h_tm1, Wx, Wh, b, weightnoise_std: float = 0.0) -> Expression:
    """The gates ``[i, f, o, g]`` (``(4H,)``) of an LSTM step from the input ``x_t``, the
    previous output ``h_tm1`` (``(H,)``), ``Wx`` (``(4H, I)``), ``Wh`` (``(4H, H)``) and
    ``b`` (``(4H,)``); 1 is added to the forget gate's pre-activation, as in DyNet.
    ``weightnoise_std > 0`` adds Gaussian noise of that deviation to ``Wx``, ``Wh`` and
    ``b`` for this node (DyNet 2.1 draws it and then leaves the products out: see "What
    differs" in the docs)."""
    return _gates([x_t], h_tm1, Wx, Wh, b, None, weightnoise_std, "vanilla_lstm_gates")


def vanilla_lstm_gates_concat(x_t, h_tm1, Wx, Wh, b, weightnoise_std: float = 0.0) -> Expression:
    """:func:`vanilla_lstm_gates` of the concatenation of the list ``x_t`` (``Wx`` has the
    pieces' summed columns)."""
    return _gates(list(x_t), h_tm1, Wx, Wh, b, None, weightnoise_std,
                  "vanilla_lstm_gates_concat")


def vanilla_lstm_gates_dropout(x_t, h_tm1, Wx, Wh, b, dropout_mask_x, dropout_mask_h,
                               weightnoise_std: float = 0.0) -> Expression:
    """:func:`vanilla_lstm_gates` of ``x_t * dropout_mask_x`` and ``h_tm1 * dropout_mask_h``
    (element-wise; the masks are ``(I,)`` and ``(H,)``, unbatched or one per instance). The
    masks get their true gradient where DyNet gives them none."""
    return _gates([x_t], h_tm1, Wx, Wh, b, (dropout_mask_x, dropout_mask_h), weightnoise_std,
                  "vanilla_lstm_gates_dropout")


def vanilla_lstm_gates_dropout_concat(x_t, h_tm1, Wx, Wh, b, dropout_mask_x, dropout_mask_h,
                                      weightnoise_std: float = 0.0) -> Expression:
    """:func:`vanilla_lstm_gates_dropout` of the concatenation of the list ``x_t``
    (``dropout_mask_x`` covers the whole concatenation)."""
    return _gates(list(x_t), h_tm1, Wx, Wh, b, (dropout_mask_x, dropout_mask_h),
                  weightnoise_std, "vanilla_lstm_gates_dropout_concat")


def _state_and_gates(v, gates_t, what: str, who: str) -> tuple:
    """``(v's node, the gates' node, bd)`` for ``v`` of ``(H,)`` and gates of ``(4H,)``,
    an unbatched one broadcast over the other's minibatch."""
    v, g = as_expression(v, who), as_expression(gates_t, who)
    _vector(v, None, what, who)
    hidden = dims_of(v)[0]
    _vector(g, 4 * hidden, "gates_t (4 times the size of " + what + ")", who)
    bd = _batch([v, g], who)
    return to_shape(v, (hidden,), bd), to_shape(g, (4 * hidden,), bd), bd


def vanilla_lstm_c(c_tm1, gates_t) -> Expression:
    """The new memory cell ``i * g + f * c_tm1`` from the gates ``[i, f, o, g]``."""
    c, g, bd = _state_and_gates(c_tm1, gates_t, "c_tm1", "vanilla_lstm_c")
    return Expression(bv.vanilla_lstm_c(c, g), bd)


def vanilla_lstm_h(c_t, gates_t) -> Expression:
    """The output ``o * tanh(c_t)`` from the gates ``[i, f, o, g]``."""
    c, g, bd = _state_and_gates(c_t, gates_t, "c_t", "vanilla_lstm_h")
    return Expression(bv.vanilla_lstm_h(c, g), bd)


__all__ = ["vanilla_lstm_gates", "vanilla_lstm_gates_concat", "vanilla_lstm_gates_dropout",
           "vanilla_lstm_gates_dropout_concat", "vanilla_lstm_c", "vanilla_lstm_h"]
