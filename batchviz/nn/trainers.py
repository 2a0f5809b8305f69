"""Trainers: SGD (with learning-rate decay) and Adam, with gradient clipping.

The protocol is DyNet's: build the loss, ``loss.backward()`` accumulates every parameter's
gradient (``p.grad_array()``), then ``trainer.update()`` applies the gradients and zeroes
them. Everything stays on the backend (``xp``): the clipping norm is a device scalar and is
never copied to the host, so a CuPy training step makes no host transfer.

Lookup tables receive dense gradient arrays whose untouched rows are zero. SGD leaves those
rows unchanged by construction; Adam masks them, so a row's moments move only when the row
was used (DyNet's sparse updates), while the arithmetic stays one dense kernel per step.
"""
from __future__ import annotations

import numpy as np

from ..backend import state
from ..model import LookupParameters


class Trainer:
    """Base class: gradient clipping and the update loop; subclasses define ``_step``."""

    def __init__(self, model, learning_rate: float, clip_threshold: float | None = 5.0):
        if learning_rate <= 0:
            raise ValueError(f"learning_rate must be positive, got {learning_rate}")
        if clip_threshold is not None and clip_threshold <= 0:
            raise ValueError(f"clip_threshold must be positive or None, got {clip_threshold}")
        self.model = model
        self.learning_rate = float(learning_rate)
        self.clip_threshold = clip_threshold
        self.updates = 0
        self.last_gradient_norm = None  # a device scalar: read it with float() when needed

    def update(self) -> None:
        """Apply the accumulated gradients of every parameter, then zero them."""
        params = [p for p in self.model.parameters() if p._grad is not None]
        if not params:
            return
        scale = self._clip_scale(params)
        self.updates += 1
        for p in params:
            self._step(p, p._grad, scale)
            p.zero_grad()

    def _clip_scale(self, params):
        """``min(1, threshold / ||g||)`` over the gradients of ``params`` together
        (global-norm clipping), as a device scalar; 1.0 when clipping is off."""
        total = None
        for p in params:
            sq = p.squared_grad_norm()
            total = sq if total is None else total + sq
        return self._clip_scale_for(total)

    def _clip_scale_for(self, squared_norm):
        """:meth:`_clip_scale` for gradients whose squared norm (a device scalar) is
        ``squared_norm``; it is kept as :attr:`last_gradient_norm`."""
        xp = state.xp
        norm = xp.sqrt(squared_norm)
        self.last_gradient_norm = norm
        if self.clip_threshold is None:
            return 1.0
        return xp.minimum(1.0, self.clip_threshold / xp.maximum(norm, 1e-12))

    def _step(self, p, grad, scale) -> None:
        raise NotImplementedError


def scaled(grad, scale, out=None):
    """``grad * scale`` (``scale``: from :meth:`Trainer._clip_scale`), written into ``out``
    when given (``out=grad`` scales the gradient in place, where it is not read again), or
    ``grad`` itself when the scale is exactly 1 and on the host (no clipping this step, on
    NumPy): the same values without another pass over every gradient. The update rules only
    read it. (On a GPU the scale stays on the device, where reading it would wait for the
    device.)"""
    if type(scale) is float or state.xp is np:
        if scale == 1.0:
            return grad
    return state.xp.multiply(grad, scale, out=out)


class SGDTrainer(Trainer):
    """Plain SGD: ``p -= eta * g`` with ``eta = learning_rate / (1 + decay * epoch)``.

    Call :meth:`~batchviz.nn.SGDTrainer.new_epoch` after every pass over the data to decay the learning rate (DyNet's
    ``SimpleSGDTrainer`` with ``eta_decay``)."""

    def __init__(self, model, learning_rate: float = 0.1, decay: float = 0.0,
                 clip_threshold: float | None = 5.0):
        super().__init__(model, learning_rate, clip_threshold)
        if decay < 0:
            raise ValueError(f"decay must be >= 0, got {decay}")
        self.initial_learning_rate = self.learning_rate
        self.decay = float(decay)
        self.epoch = 0

    def new_epoch(self) -> None:
        """Count one more pass over the data and decay the learning rate accordingly."""
        self.epoch += 1
        self.learning_rate = self.initial_learning_rate / (1.0 + self.decay * self.epoch)

    def _step(self, p, grad, scale) -> None:
        grad *= self.learning_rate * scale   # in place: the gradient is zeroed right after
        p._array -= grad


class AdamTrainer(Trainer):
    """Adam (Kingma & Ba, 2015) with bias correction; per-parameter moments on the device."""

    def __init__(self, model, learning_rate: float = 0.001, beta1: float = 0.9,
                 beta2: float = 0.999, eps: float = 1e-8, clip_threshold: float | None = 5.0):
        super().__init__(model, learning_rate, clip_threshold)
        if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
            raise ValueError(f"betas must be in [0, 1), got {beta1}, {beta2}")
        self.beta1, self.beta2, self.eps = float(beta1), float(beta2), float(eps)
        self._moments: dict[int, tuple] = {}  # id(parameter) -> (m, v)

    def _step(self, p, grad, scale) -> None:
        xp = state.xp
        moments = self._moments.get(id(p))
        if moments is None or moments[0].shape != grad.shape or moments[0].dtype != grad.dtype:
            moments = (xp.zeros_like(grad), xp.zeros_like(grad))
            self._moments[id(p)] = moments
        m, v = moments
        t = self.updates
        eta = self.learning_rate * (1.0 - self.beta2 ** t) ** 0.5 / (1.0 - self.beta1 ** t)
        if isinstance(p, LookupParameters):
            g = scaled(grad, scale)
            touched = xp.any(grad != 0, axis=1, keepdims=True)
            m[...] = xp.where(touched, self.beta1 * m + (1.0 - self.beta1) * g, m)
            v[...] = xp.where(touched, self.beta2 * v + (1.0 - self.beta2) * g * g, v)
            p._array -= xp.where(touched, eta * m / (xp.sqrt(v) + self.eps), 0.0).astype(grad.dtype)
            return
        adam_update(xp, p._array, grad, m, v, eta, self.beta1, self.beta2, self.eps, scale)


def adam_update(xp, values, g, m, v, rate: float, beta1: float, beta2: float,
                eps: float, scale=1.0) -> None:
    """Adam's rule, in place, as DyNet writes it (``training.cc``), for the gradient
    ``scale * g`` (``scale``: the clipping scale of :meth:`Trainer._clip_scale`)::

        m = beta1 m + ((1 - beta1) scale) g
        v = beta2 v + ((1 - beta2) scale^2) g^2
        values -= m / (sqrt(v) + eps) rate

    ``rate`` is the learning rate with the bias corrections. The scale goes into the
    constants, as DyNet's ``gscale`` does, rather than over the gradient: that would be
    one more pass over it. Each NumPy operation is a pass over its arrays, and an output
    layer's weights are megabytes, so the formula goes through one scratch array (``term``)
    where each temporary written out would be another array: twelve passes, the same
    operations in the same order. DyNet's AdamTrainer (:mod:`batchviz.dynet.trainers`)
    runs this rule too."""
    term = xp.multiply(g, (1.0 - beta1) * scale)
    m *= beta1
    m += term
    xp.multiply(g, g, out=term)
    term *= (1.0 - beta2) * scale * scale
    v *= beta2
    v += term
    xp.sqrt(v, out=term)
    term += eps
    xp.divide(m, term, out=term)
    term *= rate
    values -= term
