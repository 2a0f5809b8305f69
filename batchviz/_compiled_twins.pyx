# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled twins of the definitions still marked ``@compiled_twin`` (see
:mod:`batchviz.twins`): the agenda's loop with the paper's choice and two of the schedule's
list-to-array conversions. Each takes the same steps as the readable version named in its
comment, with C types. The graph, the op constructors and the DyNet layer have none: they
are compiled from their own source (:mod:`batchviz.compiled`).
"""
import numbers
import struct
from functools import reduce
from heapq import heappop, heappush
from operator import iconcat

from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF



# --- batchviz/schedule/vectorized.py --------------------------------------------------------

def best_priority_batches(view, rank):
    """Twin of :func:`batchviz.schedule.vectorized.best_priority_batches`: the agenda with
    the best priority first, node by node in C. The same steps as the batch-at-a-time loop:
    the ready nodes of each rank in the order they became ready (here a linked list per
    rank), a user ready when its last argument's batch ran (counting every listing of an
    argument, repeats too)."""
    import numpy as np
    from batchviz.schedule.arrays import users_by_argument
    from batchviz.schedule.base import FlatSchedule
    cdef const long long[:] users, user_start, node_rank, pending
    cdef long long[:] unresolved, head, tail, after, order
    cdef Py_ssize_t i, k, e, u, r, done = 0, first
    cdef list heap = [], sizes = []
    a = view.arrays()
    if len(a.nodes) == 0:
        return FlatSchedule(a.nodes, np.zeros(0, dtype=np.int64))
    n = len(a.sig)
    n_ranks = int(rank.max()) + 1
    node_rank = np.ascontiguousarray(rank[a.sig], dtype=np.int64)
    unresolved = np.bincount(a.edge_user, minlength=n).astype(np.int64)
    user_start_array, users_array = users_by_argument(a.edge_user, a.edge_arg, n)
    users = np.ascontiguousarray(users_array, dtype=np.int64)
    user_start = np.ascontiguousarray(user_start_array, dtype=np.int64)
    pending = np.ascontiguousarray(a.nodes - a.start, dtype=np.int64)
    head = np.full(n_ranks, -1, dtype=np.int64)   # per rank: its first and last ready node
    tail = np.full(n_ranks, -1, dtype=np.int64)
    after = np.full(n, -1, dtype=np.int64)        # per node: the next ready node of its rank
    order_array = np.empty(len(pending), dtype=np.int64)
    order = order_array
    for i in range(len(pending)):
        k = pending[i]
        if unresolved[k] == 0:
            ready(head, tail, after, heap, node_rank[k], k)
    while heap:
        r = heappop(heap)
        first = done
        k = head[r]
        head[r] = -1
        while k != -1:               # the batch: the rank's ready nodes, in their order
            order[done] = k
            done += 1
            k = after[k]
        sizes.append(done - first)
        for i in range(first, done):
            k = order[i]
            for e in range(user_start[k], user_start[k + 1]):
                u = users[e]
                unresolved[u] -= 1
                if unresolved[u] == 0:
                    ready(head, tail, after, heap, node_rank[u], u)
    order_array += a.start
    return FlatSchedule(order_array, np.asarray(sizes, dtype=np.int64))


cdef inline int ready(long long[:] head, long long[:] tail, long long[:] after, list heap,
                      Py_ssize_t r, Py_ssize_t k) except -1:
    """Put node ``k`` on the agenda, last of rank ``r``."""
    if head[r] == -1:
        head[r] = k
        heappush(heap, r)
    else:
        after[tail[r]] = k
    tail[r] = k
    after[k] = -1
    return 0


# --- batchviz/schedule/arrays.py ----------------------------------------------------------

def flatten(sequences):
    """Twin of :func:`batchviz.schedule.arrays.flatten`: for a list of tuples or lists (a
    graph's arguments), the result is sized once and filled in one C loop."""
    cdef Py_ssize_t total = 0, at = 0, k, m
    cdef list out
    if type(sequences) is not list:
        return reduce(iconcat, sequences, [])
    for item in <list>sequences:
        if type(item) is tuple:
            total += len(<tuple>item)
        elif type(item) is list:
            total += len(<list>item)
        else:
            return reduce(iconcat, sequences, [])
    out = PyList_New(total)
    for item in <list>sequences:
        m = len(item)
        for k in range(m):
            value = (<tuple>item)[k] if type(item) is tuple else (<list>item)[k]
            Py_INCREF(value)
            PyList_SET_ITEM(out, at, value)
            at += 1
    return out


def int64_array(ints, Py_ssize_t count):
    """Twin of :func:`batchviz.schedule.arrays.int64_array`: a list of ``count`` ints is
    written into the array in one C loop; anything else (and any error) takes the readable
    version's ``struct.pack``, with its errors."""
    import numpy as np
    cdef long long[::1] values
    cdef Py_ssize_t i
    if type(ints) is list and len(<list>ints) == count:
        array = np.empty(count, dtype=np.int64)
        values = array
        try:
            for i in range(count):
                item = (<list>ints)[i]
                if type(item) is not int:
                    raise TypeError
                values[i] = item
        except (TypeError, OverflowError):
            pass
        else:
            array.flags.writeable = False
            return array
    return np.frombuffer(struct.pack(f"{count}q", *ints), dtype=np.int64)


TWINS = {
    "batchviz.schedule.vectorized.best_priority_batches": best_priority_batches,
    "batchviz.schedule.arrays.flatten": flatten,
    "batchviz.schedule.arrays.int64_array": int64_array,
}
