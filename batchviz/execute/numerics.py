"""Never silent: NaN and infinity made inside a graph, stopped where they are made.

``log`` of a negative number, ``exp`` of a large one, ``sqrt``'s gradient at 0: a kernel
makes NaN or infinity, and nothing stops it. It flows into the loss and the gradients, and
the parameters are ruined a few updates later, far from the cause. Two things here:

* **The check** (``with bv.check_numerics():``, or ``bv.Graph(check_numerics=True)``; the
  idea of PyTorch's anomaly detection): after every batch, forward and backward, the
  executor asks whether what the kernel wrote is finite, and the first batch that made NaN
  or infinity raises a :class:`~batchviz.errors.NumericsError` naming the op, the node, its
  signature, the batch, the user's line that built the node, and the node's arguments. It
  costs one reduction per batch; on CuPy that reduction's answer must come back to the
  host, a device-to-host synchronisation per batch (counted in ``last_run_stats``), so the
  GPU cannot run ahead of Python: a run checked is slower, use it to find a bug. Off, it
  costs nothing per batch (the executor tests one local flag).
* **The report** (always on, NumPy only): NumPy's own warnings about an invalid value or
  an overflow would point into ``batchviz/ops/elementwise.py``, which tells the user
  nothing. A run silences them and, if any came, warns once with a
  :class:`~batchviz.errors.NumericsWarning` at the user's line (the ``value()`` or
  ``backward()`` call) saying how to find the node. Only NumPy's element-wise functions
  report such things (a matrix product does not), and CuPy reports nothing: the check is
  the reliable way.
"""
from __future__ import annotations

import warnings
from bisect import bisect_right
from contextlib import contextmanager
from itertools import accumulate

import numpy as np

from ..backend import state, to_numpy
from ..errors import NumericsError, NumericsWarning
from .memory import batch_outputs
from ..ops.gradients import BlockGradient, RowSums, SparseRows, WeightGradient
from ..signature import size_of
from ..signature_names import display_names
from ..sourcelines import recording_sources, user_frame, where_text

_open_blocks = 0  # how many ``check_numerics()`` blocks are open


@contextmanager
def check_numerics():
    """Check every batch run inside the block, forward and backward, for NaN and infinity,
    and raise :class:`~batchviz.errors.NumericsError` at the first that makes one (see the
    module's text for the cost). Graphs created inside the block record their nodes' source
    lines, so that the error can name the line."""
    global _open_blocks
    with recording_sources():
        _open_blocks += 1
        try:
            yield
        finally:
            _open_blocks -= 1


def checking(graph) -> bool:
    """Whether runs of ``graph`` check numerics now (asked once per run, not per batch)."""
    return _open_blocks > 0 or bool(getattr(graph, "check_numerics", False))


def all_finite(arrays, xp) -> bool:
    """Whether every array holds only finite numbers: one reduction each, and one answer
    back to the host for them all (on CuPy, one synchronisation)."""
    flags = [xp.isfinite(a).all() for a in arrays]
    if xp is not np:
        state.device_to_host += 1
        return bool(xp.stack(flags).all())
    return all(flags)


# --- the check, called by the executor ----------------------------------------------------
def check_forward(graph, batch, arena, xp) -> None:
    """Raise :class:`NumericsError` if batch ``batch`` (a ``BatchPlan``) wrote NaN or
    infinity into its segment of ``arena`` (its values and any further blocks it keeps)."""
    segment = batch_outputs(xp, arena, batch)
    if all_finite([segment], xp):
        return
    values = to_numpy(segment).reshape(-1)  # block after block
    bad = int(np.flatnonzero(~np.isfinite(values))[0])
    block, offset = divmod(bad, batch.length)
    node = batch.nodes[_position(batch.sizes, len(batch.nodes), offset, batch.length)]
    what = "" if block == 0 else f" (block {block} of what it keeps)"
    raise _error("forward", graph, batch, node, values[bad],
                 f"{_kind(values[bad])} at node #{node}{what}", _arguments_text(graph, node))


def first_nonfinite(graph, xp):
    """The :class:`NumericsError` of the first batch of ``graph``'s forward runs whose
    values are not finite, looked for after the fact (in their arenas), or None. For a
    check that did not run: the training loop's guard names the node this way."""
    for batch in graph.layout.batches:
        try:
            check_forward(graph, batch, graph.arenas[batch.arena], xp)
        except NumericsError as error:
            return error
    return None


def check_backward(graph, batch, grads: list, xp) -> None:
    """Raise :class:`NumericsError` if the backward kernel of ``batch`` made NaN or infinity
    in the gradient of one of its argument positions (``grads``: one per read)."""
    arrays = [a for g in grads if g is not None for a in _arrays_of(g)]
    if all_finite(arrays, xp):
        return
    for position, grad in enumerate(grads):
        for array in _arrays_of(grad) if grad is not None else ():
            values = to_numpy(array)
            if np.isfinite(values).all():
                continue
            bad = int(np.flatnonzero(~np.isfinite(values))[0])
            k = _position(batch.sizes, len(batch.nodes), bad, values.size, batch.counts)
            node = batch.nodes[k]
            raise _error("backward", graph, batch, node, values.flat[bad],
                         f"{_kind(values.flat[bad])} in the gradient of argument "
                         f"{position} of node #{node}", _arguments_text(graph, node))


def check_parameters(graph, nodes, xp) -> None:
    """Raise :class:`NumericsError` if the gradient of a shared weight (``nodes``: their
    parameter nodes) is not finite: their gradients are summed over all their batches at the
    end of the backward pass, as one product, after the batches were checked."""
    grads = {node: graph.param_of_node[node].grad_array() for node in nodes}
    if all_finite(list(grads.values()), xp):
        return
    for node, grad in grads.items():
        if not np.isfinite(to_numpy(grad)).all():
            param = graph.param_of_node[node]
            raise NumericsError(
                f"the backward pass made NaN or infinity in the gradient of parameter "
                f"{param.name or node} (#{node}), summed over the batches that use it",
                node=node, op="parameter", pass_="backward")


def _arrays_of(grad) -> tuple:
    """The arrays of one gradient, whatever its kind (``batchviz.ops.gradients``)."""
    kind = type(grad)
    if kind is WeightGradient:
        return grad.g, grad.x
    if kind is RowSums:
        return (grad.g,)
    if kind is BlockGradient or kind is SparseRows:
        return (grad.values,)
    return (grad,)


def _position(sizes, n: int, offset: int, length: int, counts=None) -> int:
    """Which node of a batch (0..n-1) the element at ``offset`` of a block of ``length``
    elements, laid out node after node, belongs to."""
    if counts is not None:  # rows node after node, counts[i] rows each
        row = offset * sum(counts) // max(length, 1)
        return min(bisect_right(list(accumulate(counts)), row), n - 1)
    if isinstance(sizes, (list, tuple)) and sum(sizes) == length:
        return min(bisect_right(list(accumulate(sizes)), offset), n - 1)
    return min(offset * n // max(length, 1), n - 1)


def _kind(value) -> str:
    return "NaN" if np.isnan(value) else ("+infinity" if value > 0 else "-infinity")


def _arguments_text(graph, node: int) -> str:
    parts = []
    for arg in graph.args[node]:
        values = _value_of(graph, arg)
        if values is None or values.size == 0:
            continue
        name = graph.param_of_node[arg].name if arg in graph.param_of_node else graph.ops[arg].name
        parts.append(f"#{arg} ({name}) from {values.min():.4g} to {values.max():.4g}")
    return ("its arguments: " + "; ".join(parts)) if parts else ""


def _value_of(graph, node: int):
    """A node's value as computed so far, read where the layout put it (never running the
    graph: this is called while it runs); None where it has none."""
    arena, offset = graph.layout.where(node)
    if arena is None:
        param = graph.param_of_node.get(node)
        return None if param is None else to_numpy(param.array)
    return to_numpy(graph.arenas[arena][offset:offset + size_of(graph.shapes[node])])


def _error(pass_: str, graph, batch, node: int, value, what: str, arguments: str):
    op = graph.ops[node].name
    name = display_names(graph, set(graph.sigs))[graph.sigs[node]]
    source = graph.sources[node] if graph.sources is not None else None
    where = (f"built at {where_text(source)}" if source else
             "its line was not recorded: create the graph inside `with bv.check_numerics():` "
             "or as bv.Graph(check_numerics=True) to see it")
    message = (f"the {pass_} pass made {what}: op `{op}`, signature {name}, batch "
               f"{batch.index} ({len(batch.nodes)} \u00d7 {name}); {where}"
               + (f"; {arguments}" if arguments else ""))
    return NumericsError(message, node=node, op=op, signature=name, batch=batch.index,
                         source=source, pass_=pass_)


# --- the report, around every run -----------------------------------------------------------
class reporting:
    """``with reporting(graph, "forward"):`` runs a pass with NumPy's floating-point warnings
    caught (they would point into batchviz's kernels); if any came, it warns once, at the
    user's line, how to find the node. (A class, not a generator: the first frame outside
    batchviz is then the user's, not ``contextlib``'s.)"""

    def __init__(self, graph, pass_: str):
        self.graph, self.pass_ = graph, pass_
        self.seen = seen = set()  # (the callback holds the set, not self: no reference cycle)
        self._errstate = np.errstate(divide="call", over="call", invalid="call",
                                     under="ignore", call=lambda kind, _flag: seen.add(kind))

    def __enter__(self):
        self._errstate.__enter__()
        return self

    def __exit__(self, kind, error, traceback) -> None:
        self._errstate.__exit__(kind, error, traceback)
        if self.seen and kind is None:
            self._warn()

    def _warn(self) -> None:
        message = (f"the {self.pass_} pass of graph #{self.graph.number} made NaN or infinity "
                   f"(NumPy reported: {', '.join(sorted(self.seen))}). Nothing stops it: to "
                   "stop at the first batch that makes one, with its op, node and line, run "
                   "it inside `with bv.check_numerics():` or build it as "
                   "bv.Graph(check_numerics=True)")
        where = user_frame()
        if where is None:
            warnings.warn(message, NumericsWarning, stacklevel=3)
        else:
            warnings.warn_explicit(message, NumericsWarning, where[0], where[1])
