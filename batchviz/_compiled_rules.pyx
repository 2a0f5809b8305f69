# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled twins of the trainers' update rules (see :mod:`batchviz.twins`).

The readable rule is a dozen NumPy operations, each a pass over the parameter's arrays:
the values, the gradient, the moments and a scratch array. The twin is one loop that reads
each element once and takes the same arithmetic steps, in the same order and precision as
those operations (a Python float meeting a float32 array is rounded to float32 first, as
NumPy does), so that the values it leaves are the same, bit for bit. It is built with
``-ffp-contract=off``, so that the C compiler does not fuse a product and a sum into one
rounding where NumPy rounds twice. Arrays that are not contiguous float32 or float64 NumPy
arrays (CuPy's, say) go through the readable rule.
"""
from libc.math cimport sqrt, sqrtf

import numpy as np

ctypedef fused real:
    float
    double


def AdamTrainer_rule(self, values, g, slots):
    """Twin of :meth:`batchviz.dynet.trainers.AdamTrainer.rule`."""
    m, v = slots
    if not fusable(values, g, m, v):
        from batchviz.twins import READABLE
        return READABLE["batchviz.dynet.trainers.AdamTrainer.rule"](self, values, g, slots)
    b1, b2, t = self.beta_1, self.beta_2, self.updates + 1
    rate = self.learning_rate * (1.0 - b2 ** t) ** 0.5 / (1.0 - b1 ** t)
    flat = [a.reshape(-1) for a in (values, g, m, v)]
    if values.dtype == np.float32:
        adam[float](flat[0], flat[1], flat[2], flat[3], b1, 1.0 - b1, b2, 1.0 - b2, rate,
                    self.eps)
    else:
        adam[double](flat[0], flat[1], flat[2], flat[3], b1, 1.0 - b1, b2, 1.0 - b2, rate,
                     self.eps)


cdef bint fusable(values, g, m, v):
    """Whether all four are C-contiguous NumPy arrays of one float dtype and size."""
    for a in (values, g, m, v):
        if type(a) is not np.ndarray or not a.flags.c_contiguous:
            return False
    dtype = values.dtype
    if dtype != np.float32 and dtype != np.float64:
        return False
    return all(a.dtype == dtype and a.size == values.size for a in (g, m, v))


cdef void adam(real[::1] values, const real[::1] g, real[::1] m, real[::1] v, real b1,
               real c1, real b2, real c2, real rate, real eps) noexcept nogil:
    """The readable rule's steps for each element: ``m = m * b1 + g * (1 - b1)``,
    ``v = v * b2 + (g * (1 - b2)) * g``, ``values -= (m * rate) / (sqrt(v) + eps)``."""
    cdef Py_ssize_t i
    cdef real scratch, mi, vi
    for i in range(values.shape[0]):
        mi = m[i] * b1
        mi = mi + g[i] * c1
        m[i] = mi
        scratch = g[i] * c2
        scratch = scratch * g[i]
        vi = v[i] * b2
        vi = vi + scratch
        v[i] = vi
        if real is float:
            scratch = sqrtf(vi)
        else:
            scratch = sqrt(vi)
        scratch = scratch + eps
        values[i] = values[i] - (mi * rate) / scratch


TWINS = {
    "batchviz.dynet.trainers.AdamTrainer.rule": AdamTrainer_rule,
}
