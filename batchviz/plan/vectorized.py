"""The plan's copy counts for a whole schedule at once, with NumPy: the vectorized twin of
:meth:`batchviz.plan.Plan.copy_counts` (for ``bv.explain``).

The rule is the plan's (:mod:`batchviz.plan.layout`, :mod:`batchviz.plan.reads`): batches
are laid out one after another in schedule order; an argument position is read in place
when its argument nodes lie back to back in batch order (or, for a kernel with a batch
axis or for scalars, evenly spaced: a strided view), and copied otherwise (also when a
parameter is among them). Planning a 150k-node graph batch by batch costs seconds when
its schedule has a batch per node; here every argument position of every batch is
classified with a handful of NumPy operations per position. The test suite checks that
the counts equal :func:`batchviz.plan.plan`'s on random graphs, on the tutorial graphs and
on LSTM models (``tests/test_schedule_arrays.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..schedule import FlatSchedule
from .arrays import GraphArrays


@dataclass
class CopyCounts:
    copies: int            # argument positions that needed a copy kernel
    copies_avoided: int    # argument positions read as a view
    elements_copied: int

    def __add__(self, other: "CopyCounts") -> "CopyCounts":
        return CopyCounts(self.copies + other.copies, self.copies_avoided + other.copies_avoided,
                          self.elements_copied + other.elements_copied)


def count_copies(arrays: GraphArrays, schedule: FlatSchedule) -> CopyCounts:
    """The copies of ``schedule``, which runs every scheduled node of the graph once (a
    :class:`~batchviz.schedule.FlatSchedule`; a list of batches is converted), laid out in
    one arena from scratch: what ``plan(graph, batches, Layout(), 0).copy_counts()`` gives.

    Argument positions are taken one at a time: position ``p`` of every node that has one,
    in schedule order, so that consecutive nodes of one batch are consecutive entries and a
    batch's group is a run of entries. Working on one position at a time keeps every array
    as long as the number of nodes, not the number of arguments: the analysis then needs
    little memory beyond the graph's own arrays."""
    a = arrays
    if not isinstance(schedule, FlatSchedule):
        schedule = FlatSchedule.of(schedule)
    order, sizes = schedule
    if len(order) != a.n - int(np.count_nonzero(a.is_param)):
        raise ValueError("count_copies: the schedule must run every scheduled node once")
    if len(sizes) == len(order) and not a.one_gather.any():
        return _one_node_batches(a)
    batch_in_order = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    batch_of = np.empty(a.n, dtype=np.int64)
    batch_of[order] = batch_in_order
    address, stride = _layout(a, order, sizes, batch_in_order)

    counts = CopyCounts(0, 0, 0)
    together = _read_together(a, order, sizes, batch_in_order)
    if together.any():  # their batches read all arguments at once: one "position"
        users = order[together]
        arity = a.arity[users]
        firsts = np.repeat(a.arg_ptr[users] - (np.cumsum(arity) - arity), arity)
        entry = firsts + np.arange(len(firsts), dtype=np.int64)  # node after node
        counts += _position_copies(a, np.repeat(users, arity), entry, batch_of, address, stride)
        order = order[~together]
    for _, users, entry in a.by_position(order):
        gathered = ~a.arg_shared[entry]
        counts += _position_copies(a, users[gathered], entry[gathered], batch_of, address, stride)
    return counts


def _read_together(a: GraphArrays, order: np.ndarray, sizes: np.ndarray,
                   batch_in_order: np.ndarray) -> np.ndarray:
    """Per node of ``order``: whether its batch reads all its arguments with one gather
    (the executor's rule: an ``Op.one_gather`` op, and the batch's values all one size)."""
    together = a.one_gather[order]
    if not together.any():
        return together
    values = a.size[order]
    starts = np.cumsum(sizes) - sizes
    one_size = np.minimum.reduceat(values, starts) == np.maximum.reduceat(values, starts)
    return together & one_size[batch_in_order]


def _layout(a: GraphArrays, order: np.ndarray, sizes: np.ndarray, batch_in_order: np.ndarray):
    """The executor's addresses: batch after batch, every batch's values back to back; a run
    of consecutive batches whose nodes keep several blocks (``Op.storage_blocks``) laid out
    plane by plane, its values first, then as many planes of that size as its nodes keep
    blocks at most. Returns ``(address, stride)`` per node: parameters at -1; ``stride``,
    how far apart a node's blocks are (its run's values), or None when no node keeps more
    than its value."""
    address = np.full(a.n, -1, dtype=np.int64)       # parameters stay at -1
    values = a.size[order]
    before = np.cumsum(values) - values               # values laid out before each node's
    blocks = a.blocks[order]
    if (blocks == 1).all():
        address[order] = before
        return address, None
    starts = np.cumsum(sizes) - sizes                 # each batch's first entry in order
    batch_values = np.add.reduceat(values, starts)
    batch_blocks = blocks[starts]
    multi = batch_blocks > 1
    run_starts = multi & ~np.r_[False, multi[:-1]]    # the first batch of each run
    run_ends = multi & ~np.r_[multi[1:], False]       # ... and its last
    run = np.cumsum(run_starts) - 1                   # each batch's run (where multi)
    run_values = np.add.reduceat(np.where(multi, batch_values, 0), np.flatnonzero(run_starts))
    run_planes = np.maximum.reduceat(batch_blocks, np.flatnonzero(run_starts))
    added = np.zeros(len(sizes), dtype=np.int64)      # the planes after each run's values
    added[run_ends] = run_values * (run_planes - 1)
    address[order] = before + (np.cumsum(added) - added)[batch_in_order]
    stride = np.zeros(a.n, dtype=np.int64)
    stride[order] = np.where(multi, run_values[run], batch_values)[batch_in_order]
    return address, stride


def _one_node_batches(a: GraphArrays) -> CopyCounts:
    """A batch of one node reads each argument where it is (a view), except a parameter,
    which is stacked (copied)."""
    gathered = ~a.arg_shared
    stacked = gathered & a.is_param[a.arg_flat]
    n_stacked = int(stacked.sum())
    return CopyCounts(copies=n_stacked, copies_avoided=int(gathered.sum()) - n_stacked,
                      elements_copied=int(a.arg_size[stacked].sum()))


def _position_copies(a: GraphArrays, users: np.ndarray, entry: np.ndarray,
                     batch_of: np.ndarray, address: np.ndarray, stride) -> CopyCounts:
    """The copies for one argument position: ``users`` in schedule order, ``entry`` their
    argument entries at that position."""
    if len(users) == 0:
        return CopyCounts(0, 0, 0)
    arg = a.arg_flat[entry]
    loc = address[arg]
    if stride is not None:  # where a block other than the value is read
        loc = loc + a.arg_block[entry] * stride[arg]
    batch = batch_of[users]
    new_group = np.empty(len(users), dtype=bool)
    new_group[0] = True
    np.not_equal(batch[1:], batch[:-1], out=new_group[1:])
    starts = np.flatnonzero(new_group)
    # the executor's step: element-wise ops use each user's size, others the first argument's
    elementwise = a.elementwise[users[starts]]
    gap = np.empty_like(loc)               # from the previous argument's start to this one's
    gap[0] = 0
    np.subtract(loc[1:], loc[:-1], out=gap[1:])
    broken = np.empty(len(users), dtype=bool)
    broken[0] = False
    lengths = np.empty_like(starts)
    np.subtract(starts[1:], starts[:-1], out=lengths[:-1])
    lengths[-1] = len(users) - starts[-1]
    step = np.repeat(a.arg_size[entry[starts]], lengths)
    # a view when the arguments are evenly spaced, at least one argument apart (back to
    # back: a view; further apart: a strided view) ...
    first_gap = np.repeat(gap[np.minimum(starts + 1, len(users) - 1)], lengths)
    np.not_equal(gap, first_gap, out=broken)
    broken |= first_gap < step
    if elementwise.any():
        # ... but element-wise kernels read flat blocks of each user's size: back to back
        # only, unless every argument of the group is a scalar
        per_user = np.repeat(elementwise, lengths)
        step[per_user] = a.size[users[per_user]]
        scalars = np.maximum.reduceat(step, starts) == 1
        flat = per_user & ~np.repeat(scalars, lengths)
        back_to_back = np.empty(len(users), dtype=bool)
        back_to_back[0] = False
        np.not_equal(gap[1:], step[:-1], out=back_to_back[1:])
        broken[flat] = back_to_back[flat]
    broken &= ~new_group
    copied = np.logical_or.reduceat(broken, starts)
    stacked = np.logical_or.reduceat(loc < 0, starts)  # a parameter among the arguments
    gathered = copied & ~stacked
    n_view = len(starts) - int(np.count_nonzero(copied | stacked))
    elements = (int(np.add.reduceat(step, starts)[gathered].sum())
                + int(np.add.reduceat(a.arg_size[entry], starts)[stacked].sum()))
    return CopyCounts(copies=len(starts) - n_view, copies_avoided=n_view, elements_copied=elements)
