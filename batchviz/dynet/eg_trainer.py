"""DyNet's ``EGTrainer``: exponentiated gradient, the update rule that keeps every
parameter a probability distribution (each row of a lookup table one distribution of its
own), for parameters that are the weights of a mixture. Unlike the rules of
:mod:`.trainers`, it is not element-wise: it normalises a whole parameter, or a table's
rows, at once.
"""
from __future__ import annotations

import numpy as np

from ..backend import state
from .parameters import LookupParameters
from .trainers import Trainer, triangle_rate


class EGTrainer(Trainer):
    """Exponentiated gradient with momentum (DyNet's ``EGTrainer``; Kivinen & Warmuth,
    1997): every parameter stays a probability distribution, each row of a lookup table
    one distribution of its own. Where SGD adds the step to the weights, EG adds it to
    their logarithms and normalises::

        v = mom * v - learning_rate * g
        p = softmax(log(p) + v)       # over all entries of the parameter (a table: its row)

    so the weights stay positive and sum to 1 after every update, whatever their scale
    before the first one: the rule for parameters that are the weights of a mixture.

    Why it is here: DyNet 2.1 defines it in C++ (``training.h``) without giving Python
    access; this is that rule, with its argument names and defaults. ``ne`` is accepted
    and unused, as in DyNet. A parameter with a negative entry has no logarithm: ``update``
    raises, naming it, before any parameter changes (DyNet computes NaN). DyNet 2.1
    normalises a matrix by its first column's sum only (writing past the end of a buffer
    for the others) and, with ``set_sparse_updates(False)``, runs the rule on a table's
    gradient instead of its values; here a matrix is one distribution and a table's rows
    are theirs either way (docs/dynet.md, "What differs")."""

    slot_count = 1
    elementwise = False   # (it normalises each parameter: one at a time)

    def __init__(self, m, learning_rate: float = 0.1, mom: float = 0.9, ne: float = 0.0):
        super().__init__(m, learning_rate)
        self.momentum = float(mom)
        self._cycle = None   # (low, high, step_size, gamma) once enable_cyclical_lr is called
        self._iteration = 0

    def enable_cyclical_lr(self, learning_rate_min: float = 0.01,
                           learning_rate_max: float = 0.1, step_size: float = 2000,
                           gamma: float = 0.0) -> None:
        """From now on, set the learning rate after each update by DyNet's cyclical schedule
        (:func:`triangle_rate`, counting from this call; DyNet's C++ ``enableCyclicalLR``,
        with its defaults). With the default ``gamma = 0`` the top shrinks to nothing at
        once, so the rate is ``learning_rate_min`` after every update; pass ``gamma=1.0``
        for triangles that keep their height."""
        if step_size <= 0:
            raise ValueError(f"enable_cyclical_lr: step_size must be positive, got {step_size}")
        self._cycle = (float(learning_rate_min), float(learning_rate_max), float(step_size),
                       float(gamma))
        self._iteration = 0

    def update(self) -> None:
        self._check_positive()
        super().update()
        if self._cycle is not None:
            self.learning_rate = triangle_rate(self._iteration, *self._cycle)
            self._iteration += 1

    def _check_positive(self) -> None:
        """Raise if a parameter about to be updated has a negative (or NaN) entry: one
        transfer from the device for all of them, a second pass only to name the culprit."""
        params = [p for p in self.collection._all() if p._p._grad is not None and p._updated]
        if not params:
            return
        xp = state.xp
        lowest = xp.stack([xp.min(p._p._array) for p in params])
        if bool((lowest >= 0).all()):
            return
        for p in params:
            if not bool(xp.min(p._p._array) >= 0):
                raise ValueError(
                    f"EGTrainer: parameter {p.name()} has a negative or NaN entry; "
                    "exponentiated gradient keeps each parameter a probability "
                    "distribution and needs the logarithm of its entries, so initialize it "
                    "with positive values (e.g. init=1.0 / size)")

    def _apply(self, p, values, grad, scale, slots) -> None:
        self._step(values, grad * scale, slots, rows=isinstance(p, LookupParameters))

    def rule(self, values, g, slots) -> None:
        self._step(values, g, slots, rows=False)

    def _step(self, values, g, slots, rows: bool) -> None:
        """The update in place; ``rows``: each row of ``values`` is a distribution (a
        table's rows), else all of it is one. ``exp(a - max) / sum(exp(a - max))`` is
        ``exp(a - logsumexp(a))``, DyNet's formula, without overflow."""
        xp, v = state.xp, slots[0]
        v *= self.momentum
        v -= self.learning_rate * g
        with np.errstate(divide="ignore"):   # an entry of 0 stays 0 (its log is -inf)
            logs = xp.log(values)
        logs += v
        axes = tuple(range(1, values.ndim)) if rows else None
        logs -= logs.max(axis=axes, keepdims=rows)
        xp.exp(logs, out=logs)
        logs /= logs.sum(axis=axes, keepdims=rows)
        values[...] = logs


__all__ = ["EGTrainer"]
