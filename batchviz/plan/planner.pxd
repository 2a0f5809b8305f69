# C types for batchviz/plan/planner.py when it is compiled (batchviz/compiled.py); the steps
# are those of the .py.
import cython

from batchviz.graph cimport LazyGraph
from batchviz.plan.batch cimport BatchPlan
from batchviz.plan.layout cimport Layout
from batchviz.plan.reads cimport read_of, shared_read
from batchviz.signature cimport SignatureInfo, size_of


@cython.locals(nodes=tuple, n=Py_ssize_t, all_attrs=list, all_args=list, node=Py_ssize_t,
               j=Py_ssize_t, reads=list, positions=list, origins=list, needs=list,
               origin=tuple, need=bint, sources=list, takes_gradient=bint, elementwise=bint,
               blocks=Py_ssize_t, info=SignatureInfo, first=Py_ssize_t,
               signature=Py_ssize_t, in_shapes=list)
cpdef plan_batch(LazyGraph graph, Layout layout, batch, sizes, block_stride, every_gradient=*)


@cython.locals(b=Py_ssize_t, batch=BatchPlan)
cpdef bint _takes_gradient(Layout layout, tuple origin) except -1


@cython.locals(batch_of=list, node=Py_ssize_t, batches=set, first=Py_ssize_t, last=Py_ssize_t,
               b=Py_ssize_t, head=Py_ssize_t, tail=Py_ssize_t)
cpdef tuple _origin(Layout layout, read, tuple nodes)


@cython.locals(batch=BatchPlan)
cpdef Py_ssize_t _source(Layout layout, read, tuple origin, shape) except? -2


@cython.locals(reads=list, j=Py_ssize_t, nodes=tuple)
cpdef list _read_positions(list shapes, Layout layout, list positions, sizes, bint elementwise,
                           shared, block_of)


@cython.locals(j=Py_ssize_t)
cpdef list _kernel_shapes(list shapes, tuple first, Py_ssize_t n, list reads, sizes,
                          bint elementwise)


@cython.locals(j=Py_ssize_t, node=Py_ssize_t)
cpdef list _argument_nodes(list args, tuple nodes)


@cython.locals(copies=Py_ssize_t, avoided=Py_ssize_t, elements=Py_ssize_t, batch=BatchPlan)
cpdef tuple copy_counts(tuple batches)
