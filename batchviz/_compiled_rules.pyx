# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The compiled twins of the trainers' update rules (see :mod:`batchviz.twins`).

The readable rule is a dozen NumPy operations, each a pass over the parameter's arrays:
the values, the gradient, the moments and a scratch array. The twin is one loop that reads
each element once and takes the same arithmetic steps, in the same order and precision as
those operations (a Python float meeting a float32 array is rounded to float32 first, as
NumPy does), so that the values it leaves are the same, bit for bit. It is built with
``-ffp-contract=off``, so that the C compiler does not fuse a product and a sum into one
rounding where NumPy rounds twice. A NaN or infinity it makes is reported as NumPy's
operations would report it (:func:`report`). Arrays that are not contiguous float32 or
float64 NumPy arrays (CuPy's, say) go through the readable rule.
"""
from libc.math cimport sqrt, sqrtf

import warnings

import numpy as np

cdef extern from "<fenv.h>":
    int feclearexcept(int excepts) nogil
    int fetestexcept(int excepts) nogil
    int FE_DIVBYZERO, FE_OVERFLOW, FE_UNDERFLOW, FE_INVALID, FE_ALL_EXCEPT

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
    feclearexcept(FE_ALL_EXCEPT)
    if values.dtype == np.float32:
        adam[float](flat[0], flat[1], flat[2], flat[3], b1, 1.0 - b1, b2, 1.0 - b2, rate,
                    self.eps)
    else:
        adam[double](flat[0], flat[1], flat[2], flat[3], b1, 1.0 - b1, b2, 1.0 - b2, rate,
                     self.eps)
    flags = fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID)
    if flags:
        report(flags, "the Adam update")


cdef report(int flags, str where):
    """What NumPy does when its operations raise these floating-point flags, by its error
    settings (``np.geterr()``, ``np.errstate``): a RuntimeWarning by default, an error
    under ``raise``, nothing for an underflow. The readable rule's NumPy operations would
    report the NaN or infinity they make; so does its twin."""
    modes = np.geterr()
    for kind, flag, text in (("divide", FE_DIVBYZERO, "divide by zero"),
                             ("over", FE_OVERFLOW, "overflow"),
                             ("under", FE_UNDERFLOW, "underflow"),
                             ("invalid", FE_INVALID, "invalid value")):
        if not flags & flag:
            continue
        mode, message = modes[kind], f"{text} encountered in {where}"
        if mode == "warn":   # at the user's line (the trainer's update)
            from batchviz.sourcelines import user_frame
            where_called = user_frame(1)
            if where_called is None:
                warnings.warn(message, RuntimeWarning, stacklevel=2)
            else:
                warnings.warn_explicit(message, RuntimeWarning, *where_called)
        elif mode == "raise":
            raise FloatingPointError(message)
        elif mode == "call":
            np.geterrcall()(text, flag)
        elif mode == "print":
            print(f"Warning: {message}")
        elif mode == "log":
            np.geterrcall().write(f"Warning: {message}\n")


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
