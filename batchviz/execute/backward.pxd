# C types for batchviz/execute/backward.py when it is compiled (batchviz/compiled.py): the
# walk's counters, flags and the record of the batches the loss reaches, so that the loop
# over batches and reads tests, counts and indexes the batch's tuples in C. The steps are
# those of the .py. (cpdef: the walk calls each batch's kernel, the weight gradients' sums and
# the scatters, and memory's views, as C functions; add_gradient and _add_weight_gradient
# stay Python functions, which benchmarks/hosttime.py times by replacing them.)
import cython

from batchviz.execute.forward cimport BatchRun
from batchviz.execute.memory cimport batch_outputs, rows_view, strided_view
from batchviz.plan.batch cimport BatchPlan


@cython.locals(reached=bytearray, weight_terms=dict, check=bint, defer=bint, ran=Py_ssize_t,
               scatters=Py_ssize_t, b=Py_ssize_t, position=Py_ssize_t, into=list,
               batch=BatchPlan, run=BatchRun, reads=tuple, needs=tuple, origins=tuple,
               indices=tuple, blocks=list, sources=tuple)
cpdef tuple execute_backward(graph, loss, xp, bint keep=*)


@cython.locals(batch=BatchPlan)
cpdef _gradient_block(list blocks, list grads, list batches, Py_ssize_t b, xp)


@cython.locals(n=Py_ssize_t)
cpdef backward_kernel(BatchPlan batch, BatchRun run, g, xp, list into=*)


@cython.locals(reads=tuple, needs=tuple, origins=tuple, sources=tuple, blocks=list, into=list,
               position=Py_ssize_t, origin=tuple, start=Py_ssize_t, b=Py_ssize_t)
cpdef list _untouched_targets(list batches, BatchPlan batch, BatchRun run, list grads,
                              bytearray reached, list gradients, xp)


@cython.locals(width=Py_ssize_t)
cpdef _scatter(target, tuple gathered, values, bint unique)


cpdef _add_terms(xp, target, bint new, list terms)


@cython.locals(rows=Py_ssize_t)
cpdef _stacked(xp, list blocks)
