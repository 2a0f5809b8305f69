"""DyNet's trainers, with its argument names, defaults and update rules (``training.cc``).

They extend batchviz's :class:`~batchviz.nn.Trainer` (whose global-norm clipping is DyNet's:
the gradients are scaled by ``threshold / norm`` when their norm exceeds the threshold, 5
by default; ``set_clip_threshold(t)`` with ``t <= 0`` turns it off). With clipping on, a
norm that is NaN or infinite stops the update with DyNet's error, "Magnitude of gradient
is bad", before any parameter changes. An update applies the rule to every parameter of
the collection whose ``is_updated()`` is true and clears its gradient. A lookup table is
updated row by row, only on the rows that got a gradient, when sparse updates are on
(DyNet's default; ``set_sparse_updates(False)`` updates whole tables: another result for
rules with state, such as Adam's).

``EGTrainer`` (:mod:`.eg_trainer`) is the odd one: its rule keeps every parameter (each
row of a table) a probability distribution, for the weights of a mixture.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from .. import backend
from ..backend import state
from ..nn.trainers import Trainer as BatchvizTrainer
from ..nn.trainers import adam_update, scaled
from .parameters import LookupParameters


#: the size of the pieces in which a large parameter goes through an update rule on NumPy
#: (:meth:`Trainer._apply`): a quarter of a megabyte an array, so that the five arrays of
#: an Adam update (values, gradient, two moments, a scratch array) stay in the cache
PIECE_BYTES = 1 << 18


class Trainer(BatchvizTrainer):
    """Base class: the update loop; subclasses define ``rule(values, g, slots)``, which
    updates ``values`` in place from the scaled gradient ``g`` and the parameter's ``slots``
    (its moments, arrays of its shape made by ``slot_count``), or :meth:`scaled_rule`.

    The dense parameters are updated run by run: the model keeps their values and gradients
    in one :class:`~batchviz.parameters.DenseStore`, and the moments of this trainer's
    parameters are laid out the same way (:meth:`_layout`), so a run of parameters stored
    next to each other that all got a gradient goes through the rule once, as one flat
    array. A parameter that got no gradient this step is left out, with its moments (DyNet
    updates only the parameters a backward pass reached)."""

    slot_count = 0
    #: whether :meth:`rule` works entry by entry, so that it may run over several
    #: parameters at once (EGTrainer's normalises a parameter, and runs over one at a time)
    elementwise = True

    def __init__(self, m, learning_rate: float):
        super().__init__(m, learning_rate, clip_threshold=5.0)
        self.collection = m
        self.sparse_updates_enabled = True
        self._slots: dict = {}  # id(lookup parameter) -> its arrays
        self._dense = None      # see _layout
        self._clips = None      # device count of clipped updates since the last status()
        self._updates_since_status = 0

    # --- DyNet's interface -----------------------------------------------------------------
    def update(self) -> None:
        """Apply the gradients of the updated parameters, then clear them."""
        store, entries, lookups, moments = self._layout()
        reached = []   # the dense parameters with a gradient: (p, start, stop, slot start)
        for p, start, stop, grad, at in entries:
            q = p._p
            if q._grad is not None:
                if q._grad is not grad:  # (an accumulator made outside the store: moved in)
                    grad[...] = q._grad
                    q._grad = grad
                reached.append((p, start, stop, at))
        tables = [p for p in lookups if p._p._grad is not None]
        if not reached and not tables:
            self.updates += 1
            return
        runs = self._runs(reached)
        scale = self._clip_scale_for(self._squared_norm(store, runs, tables))
        if self.clip_threshold is not None:
            if not bool(state.xp.isfinite(self.last_gradient_norm)):  # as DyNet: stop here
                raise RuntimeError(
                    f"Magnitude of gradient is bad: {float(self.last_gradient_norm)} (no "
                    "parameter was updated; run the step inside `with bv.check_numerics():` "
                    "(import batchviz as bv) to stop at the first batch that makes NaN or "
                    "infinity, with its op and line)")
            clipped = (self.last_gradient_norm > self.clip_threshold) * 1  # (a count, not a bool)
            self._clips = clipped if self._clips is None else self._clips + clipped
        # (a parameter not updated keeps its gradient: DyNet clears only what it updates)
        updated = [r for r in reached if r[0]._updated]
        runs = runs if len(updated) == len(reached) else self._runs(updated)
        for p, start, stop, at in runs:
            self._apply(p, store.values[start:stop], store.grads[start:stop], scale,
                        [m[at:at + stop - start] for m in moments])
        for r in updated:
            r[0]._p.zero_grad()
        for p in [p for p in tables if p._updated]:
            if self.sparse_updates_enabled:
                self._update_rows(p, p._p._grad, scale)
            else:
                self._apply(p, p._p._array, p._p._grad, scale, self._slots_of(p))
            p._p.zero_grad()
        self.updates += 1
        self._updates_since_status += 1

    def _layout(self) -> tuple:
        """``(store, entries, lookups, moments)``: the model's dense store; this trainer's dense
        parameters in storage order as ``(p, start, stop, gradient view, slot start)``; its
        lookup tables; and each moment (``slot_count`` of them) as one flat array holding the
        dense parameters' moments in that order. Made again when the store is packed again
        or the collection has grown; the moments kept so far move into the new arrays (a new
        parameter's start at zero)."""
        store = self.collection._model.dense_store()
        made = self.collection._made
        if self._dense is not None and self._dense[0] is store and self._dense[1] == len(made):
            return self._dense[2]
        xp = state.xp
        mine = {id(p._p): p for p in made if not isinstance(p, LookupParameters)}
        entries, at = [], 0
        for q, start, stop, grad in store.entries:
            p = mine.get(id(q))
            if p is not None:
                entries.append((p, start, stop, grad, at))
                at += stop - start
        if len(entries) != len(mine):   # (a parameter is made on its collection's model)
            raise RuntimeError("a parameter of this collection is not in its model's store")
        moments = [xp.zeros(at, dtype=store.values.dtype) for _ in range(self.slot_count)]
        old = {} if self._dense is None else self._dense[3]
        views = {}
        for p, start, stop, grad, at in entries:
            views[id(p)] = [m[at:at + stop - start].reshape(p._p.shape) for m in moments]
            for new, kept in zip(views[id(p)], old.get(id(p), ())):
                new[...] = kept if type(kept) is type(new) else xp.asarray(backend.to_numpy(kept))
        lookups = [p for p in made if isinstance(p, LookupParameters)]
        self._dense = (store, len(made), (store, entries, lookups, moments), views)
        return self._dense[2]

    def _runs(self, reached) -> list:
        """``[p, start, stop, slot start]`` of each run of ``reached`` (entries of :meth:`_layout`,
        in its order) that lie next to each other in the store and among this trainer's
        moments: the rule goes over each at once (``p``: the run's first parameter). Every
        parameter is a run of its own when the rule is not :attr:`elementwise`."""
        runs = []
        for p, start, stop, at in reached:
            if runs and self.elementwise and runs[-1][2] == start \
                    and runs[-1][3] + (runs[-1][2] - runs[-1][1]) == at:
                runs[-1][2] = stop
            else:
                runs.append([p, start, stop, at])
        return runs

    def _squared_norm(self, store, runs, tables):
        """The squared norm of every gradient of this step together (DyNet's clipping norm):
        one dot product per run of dense parameters (:meth:`_runs`), and each of ``tables``'
        over its rows with a gradient."""
        dot, total = state.xp.dot, None
        for p, start, stop, at in runs:
            grads = store.grads[start:stop]
            sq = dot(grads, grads)
            total = sq if total is None else total + sq
        for p in tables:
            sq = p._p.squared_grad_norm()
            total = sq if total is None else total + sq
        return total

    def _update_rows(self, p, grad, scale) -> None:
        """The rule on the rows of a table that got a gradient, the others untouched. Only
        those rows are scaled: a table is megabytes, and a minibatch reads a few rows."""
        rows = p._p.rows_with_gradient()
        if len(rows) == 0:
            return
        slots = self._slots_of(p)
        values, picked = p._p._array.take(rows, axis=0), [s.take(rows, axis=0) for s in slots]
        self._apply(p, values, grad.take(rows, axis=0), scale, picked)
        for whole, part in zip([p._p._array, *slots], [values, *picked]):
            whole[rows] = part

    def _apply(self, p, values, grad, scale, slots) -> None:
        """The rule (:meth:`scaled_rule`) on ``values``, all of the parameter ``p``'s, some rows
        of a table's, or a run of dense parameters from ``p`` on (flat).

        On NumPy, more than :data:`PIECE_BYTES` of values go through the rule piece by piece:
        each NumPy operation of a rule is a pass over its arrays (Adam's are a dozen), and an
        output layer's are megabytes, which a piece is not, so it stays in the cache through
        all of them (DyNet's rules are one fused Eigen loop). The values are the same: every
        rule here is element-wise."""
        step = PIECE_BYTES // values.itemsize
        arrays = [values, grad, *slots]
        if (values.size <= step or state.xp is not np
                or not all(a.flags.c_contiguous for a in arrays)):
            self.scaled_rule(values, grad, scale, slots)
            return
        values, grad, *slots = (a.reshape(-1) for a in arrays)
        for start in range(0, values.size, step):
            piece = slice(start, start + step)
            self.scaled_rule(values[piece], grad[piece], scale, [s[piece] for s in slots])

    def _slots_of(self, p) -> list:
        """A lookup table's moments (the dense parameters' are :meth:`_layout`'s)."""
        slots = self._slots.get(id(p))
        if slots is None:
            slots = [state.xp.zeros_like(p._p._array) for _ in range(self.slot_count)]
            self._slots[id(p)] = slots
        return slots

    def update_epoch(self, r=1.0) -> None:
        print("Trainer::update_epoch has been deprecated and doesn't do anything. Please remove "
              "it from your code, and control the learning rate of the trainer directly, for "
              "example by: 'trainer.learning_rate /= (1 - rate_decay)'", file=sys.stderr)

    def update_subset(self, updated_params, updated_lookups) -> None:
        raise NotImplementedError("Trainer.update_subset: use p.set_updated(False) on the "
                                  "parameters that must not change, then update()")

    def restart(self, learning_rate=None) -> None:
        """Forget the moments (momentum, Adam's averages); optionally a new learning rate."""
        self._slots, self._dense = {}, None
        if learning_rate is not None:
            self.learning_rate = float(learning_rate)

    def status(self) -> None:
        """Print the learning rate, the clipped updates and the updates since the last call."""
        clips = 0 if self._clips is None else int(self._clips)
        print(f"[lr={self.learning_rate:g} clips={clips} updates={self._updates_since_status}] ",
              end="", file=sys.stderr)
        self._clips, self._updates_since_status = None, 0

    def set_sparse_updates(self, su: bool) -> None:
        self.sparse_updates_enabled = bool(su)

    def set_clip_threshold(self, thr: float) -> None:
        """Clip gradients whose global norm exceeds ``thr``; ``thr <= 0`` turns clipping off."""
        self.clip_threshold = float(thr) if thr > 0 else None

    def get_clip_threshold(self) -> float:
        return 0.0 if self.clip_threshold is None else self.clip_threshold

    def set_learning_rate(self, value: float) -> None:
        self.learning_rate = float(value)

    def whoami(self) -> str:
        return type(self).__name__

    def rule(self, values, g, slots) -> None:
        """The rule (a subclass defines it or :meth:`scaled_rule`) for the gradient ``g``."""
        if type(self).scaled_rule is Trainer.scaled_rule:  # (neither: no endless recursion)
            raise NotImplementedError(f"{self.whoami()} defines neither rule nor scaled_rule")
        self.scaled_rule(values, g, 1.0, slots)

    def scaled_rule(self, values, grad, scale, slots) -> None:
        """:meth:`rule` for ``grad * scale``, ``grad`` scaled in place (it is cleared after the
        update). Adam's takes the scale into its constants instead, as DyNet's ``gscale``."""
        self.rule(values, scaled(grad, scale, out=grad), slots)


class SimpleSGDTrainer(Trainer):
    """``p -= learning_rate * g``."""

    def __init__(self, m, learning_rate: float = 0.1):
        super().__init__(m, learning_rate)

    def rule(self, values, g, slots):
        values -= self.learning_rate * g


class CyclicalSGDTrainer(SimpleSGDTrainer):
    """SGD whose learning rate goes up and down between ``learning_rate_min`` and
    ``learning_rate_max`` in triangles of ``2 step_size`` updates (Smith, 2017), the top
    shrinking by ``gamma`` per update; as DyNet, the rate of update ``it + 1`` is computed
    after update ``it``, the first ones use ``learning_rate_min``."""

    def __init__(self, m, learning_rate_min: float = 0.01, learning_rate_max: float = 0.1,
                 step_size: float = 2000, gamma: float = 1.0):
        super().__init__(m, learning_rate_min)
        self.learning_rate_min, self.learning_rate_max = float(learning_rate_min), float(
            learning_rate_max)
        self.step_size, self.gamma = float(step_size), float(gamma)
        self._iteration = 0

    def update(self) -> None:
        super().update()
        self.learning_rate = triangle_rate(self._iteration, self.learning_rate_min,
                                           self.learning_rate_max, self.step_size, self.gamma)
        self._iteration += 1


def triangle_rate(it: int, low: float, high: float, step_size: float, gamma: float) -> float:
    """The learning rate after update ``it`` (from 0) of DyNet's cyclical schedule (Smith,
    2017): it climbs from ``low`` to ``high`` in ``step_size`` updates and falls back in as
    many, the top shrinking by the factor ``gamma`` per update. The cyclical SGD trainer and
    ``EGTrainer.enable_cyclical_lr`` share it."""
    cycle = math.floor(1 + it / (2 * step_size))
    x = abs(it / step_size - 2 * cycle + 1)
    return low + max(0.0, 1 - x) * (high - low) * gamma ** it


class MomentumSGDTrainer(Trainer):
    """``v = mom * v - learning_rate * g; p += v``."""

    slot_count = 1

    def __init__(self, m, learning_rate: float = 0.01, mom: float = 0.9):
        super().__init__(m, learning_rate)
        self.momentum = float(mom)

    def rule(self, values, g, slots):
        v = slots[0]
        v *= self.momentum
        v -= self.learning_rate * g
        values += v


class AdagradTrainer(Trainer):
    """``G += g^2; p -= learning_rate * g / sqrt(G + eps)``."""

    slot_count = 1

    def __init__(self, m, learning_rate: float = 0.1, eps: float = 1e-20):
        super().__init__(m, learning_rate)
        self.eps = float(eps)

    def rule(self, values, g, slots):
        G = slots[0]
        G += g * g
        values -= self.learning_rate * g / state.xp.sqrt(G + self.eps)


class AdadeltaTrainer(Trainer):
    """Zeiler's AdaDelta: running averages of squared gradients and squared steps."""

    slot_count = 2

    def __init__(self, m, eps: float = 1e-6, rho: float = 0.95):
        super().__init__(m, 1.0)
        self.eps, self.rho = float(eps), float(rho)

    def rule(self, values, g, slots):
        sqrt, (hg, hd) = state.xp.sqrt, slots
        hg *= self.rho
        hg += (1.0 - self.rho) * g * g
        step = -g * sqrt(hd + self.eps) / sqrt(hg + self.eps)
        hd *= self.rho
        hd += (1.0 - self.rho) * step * step
        values += step


class RMSPropTrainer(Trainer):
    """``G = rho * G + (1 - rho) * g^2; p -= learning_rate * g / sqrt(G + eps)``."""

    slot_count = 1

    def __init__(self, m, learning_rate: float = 0.001, eps: float = 1e-8, rho: float = 0.9):
        super().__init__(m, learning_rate)
        self.eps, self.rho = float(eps), float(rho)

    def rule(self, values, g, slots):
        G = slots[0]
        G *= self.rho
        G += (1.0 - self.rho) * g * g
        values -= self.learning_rate * g / state.xp.sqrt(G + self.eps)


class AdamTrainer(Trainer):
    """Adam (Kingma & Ba, 2015) with bias correction: ``alpha`` is the learning rate."""

    slot_count = 2

    def __init__(self, m, alpha: float = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 eps: float = 1e-8):
        super().__init__(m, alpha)
        self.beta_1, self.beta_2, self.eps = float(beta_1), float(beta_2), float(eps)

    def scaled_rule(self, values, grad, scale, slots):
        """Adam's rule (:func:`batchviz.nn.trainers.adam_update`) at step ``updates + 1``."""
        b1, b2, t = self.beta_1, self.beta_2, self.updates + 1
        rate = self.learning_rate * (1.0 - b2 ** t) ** 0.5 / (1.0 - b1 ** t)
        adam_update(state.xp, values, grad, slots[0], slots[1], rate, b1, b2, self.eps, scale)


class AmsgradTrainer(AdamTrainer):
    """AMSGrad (Reddi et al., 2018): Adam that divides by the largest second moment seen so
    far, so that a parameter's step never grows back after its gradients shrink."""

    slot_count = 3

    def scaled_rule(self, values, grad, scale, slots):
        xp, (m, v, top) = state.xp, slots
        b1, b2, t = self.beta_1, self.beta_2, self.updates + 1
        m *= b1
        m += grad * ((1.0 - b1) * scale)
        v *= b2
        v += grad * grad * ((1.0 - b2) * scale * scale)
        xp.maximum(top, v, out=top)
        rate = self.learning_rate * (1.0 - b2 ** t) ** 0.5 / (1.0 - b1 ** t)
        values -= m / (xp.sqrt(top) + self.eps) * rate


__all__ = ["Trainer", "SimpleSGDTrainer", "CyclicalSGDTrainer", "MomentumSGDTrainer",
           "AdagradTrainer", "AdadeltaTrainer", "RMSPropTrainer", "AdamTrainer",
           "AmsgradTrainer", "triangle_rate"]
