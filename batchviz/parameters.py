"""What a model parameter is, below the graph: values, a gradient, a name.

The graph gives a parameter a node the first time it is used (its node id is what a
shared-argument signature names, ``matmul-W#3-64x1``), the op constructors recognise
parameters among their arguments, and the executor reads their arrays and adds to their
gradients: all of them need these classes, and none needs the operators (``W @ h``,
``E[i]``), which :mod:`batchviz.model` adds on top for users.
"""
from __future__ import annotations

from operator import attrgetter

import numpy as np

from . import backend
from .backend import state
from .graph import current_graph


class ParameterBase:
    """What dense and lookup parameters share: values, gradient, name."""

    __slots__ = ("name", "shape", "_array", "_grad", "_spare_grad", "model", "__weakref__")

    def __init__(self, model, shape: tuple, values: np.ndarray, name: str):
        self.model = model
        self.shape = tuple(int(d) for d in shape)
        self.name = name
        self._array = backend.to_device(values)
        self._grad = None
        self._spare_grad = None

    def expr(self):
        """This parameter, whole, as an expression of the open graph (ops take a parameter
        directly too: ``W @ h``; a lookup table whole is a ``(rows, dim)`` matrix, as for
        output weights tied to the embeddings, ``E @ h``)."""
        g = current_graph()
        return g.expression(g.parameter_node(self))

    # values ----------------------------------------------------------------------------
    # (read through ``attrgetter``, a C function: the executor reads it for every batch
    # that shares a parameter, and a property written in Python costs a frame each time)
    array = property(attrgetter("_array"), doc="The values as the backend's array, not a "
                     "copy: what kernels read.")

    def value(self) -> np.ndarray:
        """A NumPy copy of the current values."""
        return np.array(backend.to_numpy(self._array), copy=True)

    def set_value(self, values) -> None:
        """New values, written into the array the parameter has (which may be a view of
        its model's ``DenseStore``, so it is never replaced)."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape != self.shape:
            raise ValueError(f"{self.name}: new values have shape {values.shape}, expected {self.shape}")
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{self.name}: new values contain NaN or infinity")
        self._array[...] = backend.to_device(values)

    # gradients -------------------------------------------------------------------------
    @property
    def grad(self) -> np.ndarray:
        """The accumulated gradient as a NumPy array shaped like the parameter (zeros if
        no backward pass has reached it since the last ``zero_grad``/``trainer.update``)."""
        if self._grad is None:
            return np.zeros(self.shape, dtype=state.dtype)
        return np.array(backend.to_numpy(self._grad), copy=True)

    def grad_array(self):
        """The gradient accumulator on the backend (created on first use).

        The accumulator of the previous step is zeroed and used again: every training step
        needs one for every parameter, and a new megabyte-sized array comes from the
        operating system as fresh pages (faulted in by the backward pass, given back when
        the gradient is dropped), which costs several times more than zeroing one."""
        grad, new = self._take_accumulator()
        if new:
            grad.fill(0)
        return grad

    def grad_to_write(self):
        """``(accumulator, new)``: the gradient accumulator, as :meth:`grad_array`'s, and
        whether nothing has been added to it since the last :meth:`zero_grad`. A new one
        is not zeroed: its contents are undefined, and the caller writes all of it (``=``
        where it would add). The backward pass gives most parameters one gradient per
        step, and writing it is then one pass over the array where zeroing and adding
        would be two."""
        return self._take_accumulator()

    def _take_accumulator(self):
        """``(accumulator, new)`` of :meth:`grad_to_write`: the existing one, else last
        step's (or a fresh array), its contents undefined."""
        if self._grad is not None:
            return self._grad, False
        spare, array = self._spare_grad, self._array
        if spare is not None and type(spare) is type(array) and spare.dtype == array.dtype:
            self._grad = spare
        else:
            self._grad = state.xp.empty(self.shape, dtype=array.dtype)
        self._spare_grad = None
        return self._grad, True

    def squared_grad_norm(self):
        """The squared L2 norm of the accumulated gradient, as a device scalar (a trainer's
        global-norm clipping adds these up). Call it only when a gradient exists."""
        flat = self._grad.reshape(-1)
        return state.xp.dot(flat, flat)

    def zero_grad(self) -> None:
        """Forget the accumulated gradient (its memory is kept for the next one)."""
        if self._grad is not None:
            self._spare_grad = self._grad
        self._grad = None

    def _convert(self, xp, dtype) -> None:
        self._spare_grad = None
        host = backend.to_numpy(self._array)
        self._array = xp.asarray(host.astype(dtype))
        if self._grad is not None:
            self._grad = xp.asarray(backend.to_numpy(self._grad).astype(dtype))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.shape}>"




class LookupBase(ParameterBase):
    """A lookup table (embeddings) of shape ``(rows, dim)``: the op constructors that read
    rows of a table (``bv.lookup``, ``bv.lookup_batch``) accept only these.

    Its gradient remembers which rows the backward pass added to (:meth:`add_to_rows`), as
    DyNet's lookup parameters do: a minibatch reads a few hundred rows of a table of
    thousands, and a sparse update (:meth:`rows_with_gradient`) and the zeroing for the
    next step then visit those rows, not megabytes of zeros. Whoever takes the whole
    gradient with :meth:`grad_array` may write any row, so from then on until
    :meth:`zero_grad` every row counts."""

    __slots__ = ("_grad_rows", "_zeroed_grad", "_unique_rows")

    def __init__(self, model, shape: tuple, values: np.ndarray, name: str):
        super().__init__(model, shape, values, name)
        self._grad_rows = []       # index arrays of the rows added to; None: any row
        self._zeroed_grad = None   # the previous gradient, zeroed row by row, to reuse
        self._unique_rows = None   # _added_rows(), once asked for, until rows are added

    def __len__(self) -> int:
        return self.shape[0]

    def grad_array(self):
        """The whole gradient accumulator, made on first use and reused from step to step
        as every parameter's is; any of its rows may be written through it."""
        grad = self._accumulator()
        self._grad_rows = None
        return grad

    def grad_to_write(self):
        """The whole gradient accumulator (:meth:`grad_array`), never new: a table's is
        zeroed row by row from step to step, so it is zero wherever nothing was added."""
        return self.grad_array(), False

    def add_to_rows(self, rows, values) -> None:
        """``grad[rows] += values`` (``rows`` may repeat), remembering the rows."""
        backend.scatter_add(self._accumulator(), rows, values)
        if self._grad_rows is not None:
            self._grad_rows.append(rows)
            self._unique_rows = None

    def rows_with_gradient(self):
        """The rows whose gradient is not zero, in order: looked for among the rows added
        to, when they are known."""
        xp, grad = state.xp, self._grad
        if grad is None:
            return xp.zeros(0, dtype=np.int64)
        if self._grad_rows is None:
            return xp.nonzero(xp.any(grad != 0, axis=1))[0]
        added = self._added_rows()
        return added[xp.any(grad[added] != 0, axis=1)]

    def squared_grad_norm(self):
        """As a dense parameter's, over the rows added to when they are known: the other
        rows are zero, and a table is megabytes while a step adds to a few rows (DyNet,
        too, takes the norm of a lookup table's gradient over its updated rows)."""
        if self._grad_rows is None:
            return super().squared_grad_norm()
        added = self._grad[self._added_rows()].reshape(-1)
        return state.xp.dot(added, added)

    def zero_grad(self) -> None:
        """Forget the gradient; when only known rows were added to, they alone are zeroed
        and the accumulator is kept for the next step."""
        if self._grad is not None and self._grad_rows is not None:
            self._grad[self._added_rows()] = 0
            self._zeroed_grad, self._grad = self._grad, None
        else:
            super().zero_grad()
        self._grad_rows, self._unique_rows = [], None

    def _added_rows(self):
        """The rows added to since the last :meth:`zero_grad`, each once, in order."""
        xp = state.xp
        if not self._grad_rows:
            return xp.zeros(0, dtype=np.int64)
        if self._unique_rows is None:  # (an update asks twice: for the norm, for the rows)
            self._unique_rows = xp.unique(xp.concatenate(self._grad_rows))
        return self._unique_rows

    def _accumulator(self):
        """The gradient accumulator, made (or the zeroed one reused) on first use."""
        if self._grad is None and self._zeroed_grad is not None:
            self._grad, self._zeroed_grad = self._zeroed_grad, None
        return ParameterBase.grad_array(self)

    def _convert(self, xp, dtype) -> None:
        self._zeroed_grad = None
        super()._convert(xp, dtype)


class DenseStore:
    """The values of a model's dense parameters in one contiguous array, and their
    gradients in another: each parameter's ``_array`` is a view of ``values``, and the
    gradient accumulator the backward pass writes (:meth:`ParameterBase.grad_to_write`) a
    view of ``grads``, at the same place.

    Why: an update rule that works element by element (SGD, Adam, ...) is a handful of
    NumPy operations, each a pass over its arrays, and a model has a few dozen small
    parameters. Stored apart, every parameter costs the rule's dozen calls per step;
    stored together, a trainer runs the rule once over every run of parameters that lie
    next to each other (:attr:`entries`), and takes the clipping norm of a run with one
    dot product. DyNet's parameters are separate arrays, each updated by one fused loop.

    Lookup tables stay apart: a step reads a few of their rows, and their updates visit
    only those. A model packs its dense parameters into a store when a trainer first asks
    (:meth:`batchviz.Model.dense_store`), and again after parameters are added or the
    backend changes: packing copies the values (and a gradient accumulated so far) in.
    """

    __slots__ = ("values", "grads", "entries")

    def __init__(self, params):
        xp = state.xp
        dtype = params[0]._array.dtype if params else state.dtype
        sizes = [int(np.prod(p.shape)) for p in params]
        self.values = xp.empty(sum(sizes), dtype=dtype)
        self.grads = xp.zeros(sum(sizes), dtype=dtype)
        #: ``(parameter, start, stop, gradient view)`` for each parameter, in storage order
        self.entries = []
        start = 0
        for p, size in zip(params, sizes):
            stop = start + size
            values = self.values[start:stop].reshape(p.shape)
            values[...] = p._array
            grad = self.grads[start:stop].reshape(p.shape)
            if p._grad is not None:   # a gradient accumulated before the first update
                grad[...] = p._grad
                p._grad = grad
            p._array, p._spare_grad = values, grad
            self.entries.append((p, start, stop, grad))
            start = stop

