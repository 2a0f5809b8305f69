"""More element-wise ops: the activations, math functions and comparisons of DyNet's list
beyond the classic ones in :mod:`batchviz.ops.elementwise` (``abs``, ``selu``, ``softsign``,
``log_sigmoid``, ``cube``, the trigonometric and hyperbolic functions and their inverses,
``erf``, ``lgamma``, ``pow``, ``bmax``, ``bmin``).

They are element-wise in the paper's sense (App. A): the signature is the op's name alone,
the kernels see a batch as one flat array, and nodes of any shape batch together.
"""
from __future__ import annotations

import math

from .. import backend
from .base import register
from ._build import binary_elementwise, unary_elementwise
from .elementwise import Elementwise

#: the slope of ``erf`` at 0: ``erf'(x) = 2 / sqrt(pi) * exp(-x ** 2)``
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

#: SELU's constants (Klambauer et al., 2017), as DyNet writes them
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


class Abs(Elementwise):
    name = "abs"

    def forward(self, xp, ins, attrs, n):
        return xp.abs(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * xp.sign(ins[0])]


class Selu(Elementwise):
    """``scale * (x if x > 0 else alpha * (exp(x) - 1))``: a self-normalising ELU."""

    name = "selu"

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        return SELU_SCALE * xp.where(x > 0, x, SELU_ALPHA * xp.expm1(xp.minimum(x, 0.0)))

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]  # below 0 the slope is scale * alpha * e^x = out + scale * alpha
        return [g * xp.where(x > 0, SELU_SCALE, out + SELU_SCALE * SELU_ALPHA)]


class Softsign(Elementwise):
    """``x / (1 + |x|)``."""

    name = "softsign"

    def forward(self, xp, ins, attrs, n):
        return ins[0] / (1.0 + xp.abs(ins[0]))

    def backward(self, xp, ins, out, g, attrs, n, needs):
        d = 1.0 + xp.abs(ins[0])
        return [g / (d * d)]


class LogSigmoid(Elementwise):
    """``log(1 / (1 + exp(-x)))``, computed as ``-log(1 + exp(-x))`` without overflow."""

    name = "log_sigmoid"

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        return xp.minimum(x, 0.0) - xp.log1p(xp.exp(-xp.abs(x)))

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * (1.0 - xp.exp(out))]  # 1 - sigmoid(x)


class Cube(Elementwise):
    name = "cube"

    def forward(self, xp, ins, attrs, n):
        x = ins[0]
        return x * x * x

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        return [3.0 * g * x * x]


class Sin(Elementwise):
    name = "sin"

    def forward(self, xp, ins, attrs, n):
        return xp.sin(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * xp.cos(ins[0])]


class Cos(Elementwise):
    name = "cos"

    def forward(self, xp, ins, attrs, n):
        return xp.cos(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [-g * xp.sin(ins[0])]


class Tan(Elementwise):
    name = "tan"

    def forward(self, xp, ins, attrs, n):
        return xp.tan(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * (1.0 + out * out)]  # 1 / cos^2 x = 1 + tan^2 x


class Asin(Elementwise):
    """``arcsin x``, for ``-1 <= x <= 1``."""

    name = "asin"

    def forward(self, xp, ins, attrs, n):
        return xp.arcsin(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        return [g / xp.sqrt(1.0 - x * x)]


class Acos(Elementwise):
    """``arccos x``, for ``-1 <= x <= 1``."""

    name = "acos"

    def forward(self, xp, ins, attrs, n):
        return xp.arccos(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        return [-g / xp.sqrt(1.0 - x * x)]


class Atan(Elementwise):
    name = "atan"

    def forward(self, xp, ins, attrs, n):
        return xp.arctan(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        return [g / (1.0 + x * x)]


class Sinh(Elementwise):
    name = "sinh"

    def forward(self, xp, ins, attrs, n):
        return xp.sinh(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * xp.cosh(ins[0])]


class Cosh(Elementwise):
    name = "cosh"

    def forward(self, xp, ins, attrs, n):
        return xp.cosh(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * xp.sinh(ins[0])]


class Asinh(Elementwise):
    name = "asinh"

    def forward(self, xp, ins, attrs, n):
        return xp.arcsinh(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        # 1 / sqrt(x^2 + 1) = 1 / cosh(asinh x): no x^2 to overflow for large |x|
        return [g / xp.cosh(out)]


class Acosh(Elementwise):
    """``arcosh x``, for ``x >= 1``."""

    name = "acosh"

    def forward(self, xp, ins, attrs, n):
        return xp.arccosh(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        # 1 / sqrt(x^2 - 1) = 1 / sinh(acosh x): no x^2 to overflow for large x
        return [g / xp.sinh(out)]


class Atanh(Elementwise):
    """``artanh x``, for ``-1 < x < 1``."""

    name = "atanh"

    def forward(self, xp, ins, attrs, n):
        return xp.arctanh(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        return [g / (1.0 - x * x)]


class Erf(Elementwise):
    """The Gaussian error function ``2 / sqrt(pi) * integral of exp(-t^2) from 0 to x``
    (NumPy has none: :func:`batchviz.backend.erf`)."""

    name = "erf"

    def forward(self, xp, ins, attrs, n):
        return backend.erf(xp, ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x = ins[0]
        return [g * TWO_OVER_SQRT_PI * xp.exp(-x * x)]


class LGamma(Elementwise):
    """``log |Gamma(x)|``, whose slope is the digamma function ``psi(x)``: NumPy has neither
    (:func:`batchviz.backend.lgamma`, :func:`batchviz.backend.digamma`). Defined for every
    ``x`` but the poles ``0, -1, -2, ...``, where it is ``inf`` (and its slope too, as
    DyNet's); its usual domain is ``x > 0`` (the log of a factorial, ``lgamma(n + 1)``)."""

    name = "lgamma"

    def forward(self, xp, ins, attrs, n):
        return backend.lgamma(xp, ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [g * backend.digamma(xp, ins[0])]


class _Step(Elementwise):
    """A function that is constant between integers (``round``, ``floor``, ``ceil``): its
    slope is zero wherever it has one. (DyNet's straight-through gradient of them is
    composed in :mod:`batchviz.dynet`.)"""

    function = ""

    def forward(self, xp, ins, attrs, n):
        return getattr(xp, self.function)(ins[0])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [xp.zeros_like(g)]


class Round(_Step):
    """To the nearest integer, halves away from zero (C's ``round``, as DyNet; NumPy's
    ``rint`` takes halves to the even integer). Written on ``|x|`` so that no addition of
    0.5 rounds a value just below a half up."""

    name = "round"

    def forward(self, xp, ins, attrs, n):
        size = xp.abs(ins[0])
        whole = xp.floor(size)
        return xp.copysign(whole + (size - whole >= 0.5), ins[0])


class Floor(_Step):
    name, function = "floor", "floor"


class Ceil(_Step):
    name, function = "ceil", "ceil"


class Pow(Elementwise):
    """``x ** y`` element by element (``x`` positive where ``y`` is not an integer)."""

    name = "pow"
    arity = 2

    def forward(self, xp, ins, attrs, n):
        return xp.power(ins[0], ins[1])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        x, y = ins
        gx = g * y * xp.power(x, y - 1.0) if needs[0] else None
        gy = g * out * xp.log(x) if needs[1] else None
        return [gx, gy]


class BMax(Elementwise):
    """The larger of ``x`` and ``y``, element by element; a tie's gradient goes to ``x``."""

    name = "bmax"
    arity = 2

    def forward(self, xp, ins, attrs, n):
        return xp.maximum(ins[0], ins[1])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        first = ins[0] >= ins[1]
        return [g * first if needs[0] else None, g * ~first if needs[1] else None]


class BMin(Elementwise):
    """The smaller of ``x`` and ``y``, element by element; a tie's gradient goes to ``x``."""

    name = "bmin"
    arity = 2

    def forward(self, xp, ins, attrs, n):
        return xp.minimum(ins[0], ins[1])

    def backward(self, xp, ins, out, g, attrs, n, needs):
        first = ins[0] <= ins[1]
        return [g * first if needs[0] else None, g * ~first if needs[1] else None]


abs = unary_elementwise(register(Abs()), "``|x|``, element by element.")  # noqa: A001
selu = unary_elementwise(register(Selu()), "the scaled exponential linear unit, element by element.")
softsign = unary_elementwise(register(Softsign()), "``x / (1 + |x|)``, element by element.")
log_sigmoid = unary_elementwise(register(LogSigmoid()), "``log(sigmoid(x))``, element by element.")
cube = unary_elementwise(register(Cube()), "``x ** 3``, element by element.")
sin = unary_elementwise(register(Sin()), "sine, element by element.")
cos = unary_elementwise(register(Cos()), "cosine, element by element.")
tan = unary_elementwise(register(Tan()), "tangent, element by element.")
asin = unary_elementwise(register(Asin()), "arcsine, element by element (``-1 <= x <= 1``).")
acos = unary_elementwise(register(Acos()), "arccosine, element by element (``-1 <= x <= 1``).")
atan = unary_elementwise(register(Atan()), "arctangent, element by element.")
sinh = unary_elementwise(register(Sinh()), "hyperbolic sine, element by element.")
cosh = unary_elementwise(register(Cosh()), "hyperbolic cosine, element by element.")
asinh = unary_elementwise(register(Asinh()), "inverse hyperbolic sine, element by element.")
acosh = unary_elementwise(register(Acosh()),
                          "inverse hyperbolic cosine, element by element (``x >= 1``).")
atanh = unary_elementwise(register(Atanh()),
                          "inverse hyperbolic tangent, element by element (``-1 < x < 1``).")
erf = unary_elementwise(register(Erf()), "the Gaussian error function, element by element.")
lgamma = unary_elementwise(register(LGamma()),
                           "``log |Gamma(x)|``, element by element (``inf`` at 0, -1, -2, ...).")
round = unary_elementwise(register(Round()),  # noqa: A001
                          "the nearest integer (halves away from zero), element by element; "
                          "its gradient is zero.")
floor = unary_elementwise(register(Floor()), "the integer below, element by element; its "
                          "gradient is zero.")
ceil = unary_elementwise(register(Ceil()), "the integer above, element by element; its "
                         "gradient is zero.")
pow = binary_elementwise(register(Pow()), "``x ** y`` for two same-shaped expressions.")  # noqa: A001
bmax = binary_elementwise(register(BMax()), "the larger of two same-shaped expressions, element by element.")
bmin = binary_elementwise(register(BMin()), "the smaller of two same-shaped expressions, element by element.")

__all__ = ["abs", "selu", "softsign", "log_sigmoid", "cube", "sin", "cos", "tan", "asin", "acos",
           "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "lgamma", "round",
           "floor", "ceil", "pow", "bmax", "bmin"]
