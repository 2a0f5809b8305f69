"""Counting the copies of a whole schedule at once (vectorized), for ``explain``.

The rule is the executor's (:func:`batchviz.execute.memory.gather_kind`, which the traces
call per argument position): batches are laid out one after another in schedule order; an
argument position is a *view* when its argument nodes lie back to back in batch order, a
*stacked* copy when a parameter is among them, else one gather copy. Here every argument
position of every batch is classified with a handful of NumPy operations; the test suite
checks that the counts equal the trace's and the executor's own, on many random graphs.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from .arrays import GraphArrays


@dataclass
class CopyCounts:
    copies: int            # argument positions that needed a copy kernel
    copies_avoided: int    # argument positions read as a view
    elements_copied: int


def count_copies(arrays: GraphArrays, batches: list) -> CopyCounts:
    a = arrays
    if not batches:
        return CopyCounts(0, 0, 0)
    lens = np.fromiter(map(len, batches), dtype=np.int64, count=len(batches))
    order = np.fromiter(chain.from_iterable(batches), dtype=np.int64, count=int(lens.sum()))
    batch_of = np.full(a.n, -1, dtype=np.int64)
    batch_of[order] = np.repeat(np.arange(len(batches), dtype=np.int64), lens)
    address = np.full(a.n, -1, dtype=np.int64)       # parameters stay at -1
    sizes_in_order = a.size[order]
    address[order] = np.cumsum(sizes_in_order) - sizes_in_order

    # the argument entries of the scheduled nodes, in schedule order
    n_args = np.diff(a.arg_ptr)[order]
    total = int(n_args.sum())
    if total == 0:
        return CopyCounts(0, 0, 0)
    ends = np.cumsum(n_args)
    entries = np.repeat(a.arg_ptr[order] - (ends - n_args), n_args) + np.arange(total)
    entries = entries[~a.arg_shared[entries]]
    if len(entries) == 0:
        return CopyCounts(0, 0, 0)
    # one group per (batch, argument position); a stable sort keeps batch order inside
    width = int(a.arg_pos.max()) + 1
    entries = entries[np.argsort(batch_of[a.arg_user[entries]] * width + a.arg_pos[entries],
                                 kind="stable")]
    user, arg, pos = a.arg_user[entries], a.arg_flat[entries], a.arg_pos[entries]
    b = batch_of[user]
    starts_group = np.ones(len(user), dtype=bool)
    starts_group[1:] = (b[1:] != b[:-1]) | (pos[1:] != pos[:-1])
    group = np.cumsum(starts_group) - 1
    n_groups = int(group[-1]) + 1
    first_arg = arg[np.flatnonzero(starts_group)][group]
    # the executor's step: element-wise kernels use each output's size, others the first argument's
    step = np.where(a.elementwise[user], a.size[user], a.size[first_arg])
    loc = address[arg]

    same = ~starts_group[1:]
    broken = same & (loc[1:] != loc[:-1] + step[:-1])
    breaks = np.bincount(group[1:][broken], minlength=n_groups)
    stacked = np.bincount(group[loc < 0], minlength=n_groups) > 0
    view = (breaks == 0) & ~stacked
    gathered = ~view & ~stacked
    copy_elements = np.bincount(group, weights=step, minlength=n_groups)
    stack_elements = np.bincount(group, weights=a.size[arg], minlength=n_groups)
    elements = int(copy_elements[gathered].sum() + stack_elements[stacked].sum())
    n_view = int(view.sum())
    return CopyCounts(copies=n_groups - n_view, copies_avoided=n_view, elements_copied=elements)
