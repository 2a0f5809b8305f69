# C types for batchviz/schedule/walk.py when it is compiled (batchviz/compiled.py); the
# steps are those of the .py.
import cython


@cython.locals(k=Py_ssize_t, node=Py_ssize_t)
cpdef number_batches(list batches, Py_ssize_t start, long long[::1] batch_of)


@cython.locals(k=Py_ssize_t)
cpdef count_up(long long[::1] values, long long first)


@cython.locals(start=Py_ssize_t, args=list, shapes=list, user_start='long long[::1]',
               sizes=dict, follows=dict, k=Py_ssize_t, batch=list, heaviest=Py_ssize_t,
               read_weight=Py_ssize_t, position=Py_ssize_t, weight=Py_ssize_t, node=Py_ssize_t,
               a=Py_ssize_t)
cpdef dict gatherers(view, list batches, const long long[::1] batch_of, list node_major)


cpdef Py_ssize_t elements(shape, dict sizes) except -1


@cython.locals(first=Py_ssize_t, node=Py_ssize_t, a=Py_ssize_t)
cpdef bint from_several(list batch, Py_ssize_t position, list args,
                        const long long[::1] batch_of, Py_ssize_t start) except -1


cdef class _Walk:
    cdef public list batches, args, node_major, previous, available, placed, slot_of
    cdef public dict may_follow, follows
    cdef public Py_ssize_t start, M, P
    cdef public long long[::1] batch_of, unplaced, first_read

    @cython.locals(batch_of='long long[::1]', unplaced='long long[::1]', start=Py_ssize_t,
                   most=Py_ssize_t, batch=list, node=Py_ssize_t, a=Py_ssize_t)
    cpdef Py_ssize_t count_reads(self) except -1

    @cython.locals(first_read='long long[::1]', start=Py_ssize_t, first=cython.longlong,
                   node=Py_ssize_t)
    cpdef make_available(self, Py_ssize_t k)

    @cython.locals(k=Py_ssize_t, batch_of='long long[::1]', first_read='long long[::1]',
                   start=Py_ssize_t, nodes=list, reads_at=cython.longlong,
                   index=Py_ssize_t, position=Py_ssize_t, a=Py_ssize_t,
                   read=cython.longlong, node_major=bint)
    cpdef place(self, Py_ssize_t slot)

    @cython.locals(candidates=dict, rank='long long[::1]', start=Py_ssize_t, ranked=Py_ssize_t,
                   slot=Py_ssize_t, nodes=list, places=list, node=Py_ssize_t, a=Py_ssize_t,
                   lowest=Py_ssize_t, following=list, index=Py_ssize_t)
    cpdef follow_arguments(self)

    cdef release(self, Py_ssize_t k)

    cpdef long long first_read_of(self, Py_ssize_t node) except? -1


@cython.locals(lowest=Py_ssize_t, seen='unsigned char[::1]', place=Py_ssize_t)
cpdef bint whole_consecutive(list places) except -1
