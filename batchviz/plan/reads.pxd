# C types for batchviz/plan/reads.py when it is compiled (batchviz/compiled.py); the steps
# are those of the .py.
import cython

from batchviz.plan.batch cimport BatchPlan
from batchviz.plan.layout cimport Layout


cpdef record(kind, tuple fields)


cdef dict _SHARED


cpdef shared_read(node)


@cython.locals(owner=Py_ssize_t, batch=BatchPlan)
cpdef read_of(Layout layout, tuple nodes, sizes, batch_axis, Py_ssize_t block=*)


@cython.locals(lowest=Py_ssize_t, highest=Py_ssize_t, step=Py_ssize_t, arena=Py_ssize_t,
               base=Py_ssize_t, first=Py_ssize_t, n=Py_ssize_t, address=Py_ssize_t)
cpdef read_at(Layout layout, tuple nodes, list addresses, sizes, batch_axis)


@cython.locals(length=Py_ssize_t, wanted=Py_ssize_t)
cpdef _whole_batch(BatchPlan batch, sizes, Py_ssize_t block)


@cython.locals(first=Py_ssize_t, lowest=Py_ssize_t, highest=Py_ssize_t, step=Py_ssize_t,
               expected=Py_ssize_t, address=Py_ssize_t)
cpdef tuple _extent(list addresses)
