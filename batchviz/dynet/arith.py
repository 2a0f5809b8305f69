"""DyNet's element-wise and affine ops: activations, math functions, ``cmult``, ``cdiv``,
``pow``, ``bmax``, ``colwise_add``, sums and maxima of lists, ``affine_transform``, and
the convolutions (of images, of a sentence's columns, circular ones of vectors).

Each is the batchviz op of the same meaning on the node ``e.x``; the minibatch size ``bd``
follows DyNet's rules (an op of a batched and an unbatched argument is batched: the
unbatched one is used for every instance). Arguments of different dimensions are
broadcast as DyNet broadcasts them (:func:`.expression.elementwise`).
"""
from __future__ import annotations

import operator
from functools import reduce

from ..graph import shape_of
from ..ops import api as bv
# (the op built at every node, as a name of this module: not looked up in ``bv``)
from ..ops.api import cmult as bv_cmult
from .dims import combine_dims, dims_of, layout, to_shape
from .expression import (Affine, Expression, add, as_expression, elementwise, expression_of,
                         matmul, node_of)


def unary(op, name: str, x) -> Expression:
    """``op`` (a batchviz op of one argument) of the expression ``x`` (``name``: the DyNet
    function, for the error when ``x`` is not an expression)."""
    e = as_expression(x, name)
    return expression_of(op(node_of(e)), e.bd)


def activation(op, name: str, x) -> Expression:
    """:func:`unary` for an activation that ends an affine transform: of a pending ``b +
    W * x`` it is one node (:meth:`.expression.Affine.activated`)."""
    if type(x) is Affine:
        pending = x
        fused = pending.activated(name)
        if fused is not None:
            return fused
    return unary(op, name, x)


def _unary(op, name: str, doc: str):
    def construct(x):
        return unary(op, name, x)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = doc
    return construct


def _activation(op, name: str, doc: str):
    """The DyNet function of an activation (:func:`activation`)."""
    def construct(x):
        return activation(op, name, x)

    construct.__name__ = construct.__qualname__ = name
    construct.__doc__ = doc
    return construct


tanh = _activation(bv.tanh, "tanh", "Hyperbolic tangent, element by element.")
logistic = _activation(bv.logistic, "logistic", "The sigmoid ``1 / (1 + exp(-x))``.")
sigmoid = logistic
rectify = _activation(bv.rectify, "rectify", "ReLU, ``max(x, 0)``.")
relu = rectify
exp = _unary(bv.exp, "exp", "``e ** x``.")
log = _unary(bv.log, "log", "Natural logarithm.")
square = _unary(bv.square, "square", "``x * x``.")
sqrt = _unary(bv.sqrt, "sqrt", "Square root.")
abs = _unary(bv.abs, "abs", "``|x|``.")  # noqa: A001
cube = _unary(bv.cube, "cube", "``x ** 3``.")
sin = _unary(bv.sin, "sin", "Sine.")
cos = _unary(bv.cos, "cos", "Cosine.")
tan = _unary(bv.tan, "tan", "Tangent.")
asin = _unary(bv.asin, "asin", "Arcsine (``-1 <= x <= 1``).")
acos = _unary(bv.acos, "acos", "Arccosine (``-1 <= x <= 1``).")
atan = _unary(bv.atan, "atan", "Arctangent.")
sinh = _unary(bv.sinh, "sinh", "Hyperbolic sine.")
cosh = _unary(bv.cosh, "cosh", "Hyperbolic cosine.")
asinh = _unary(bv.asinh, "asinh", "Inverse hyperbolic sine.")
acosh = _unary(bv.acosh, "acosh", "Inverse hyperbolic cosine (``x >= 1``).")
atanh = _unary(bv.atanh, "atanh", "Inverse hyperbolic tangent (``-1 < x < 1``).")
erf = _unary(bv.erf, "erf", "The Gaussian error function.")
lgamma = _unary(bv.lgamma, "lgamma", "``log |Gamma(x)|`` (``inf`` at 0, -1, -2, ...); its slope is "
                "the digamma function.")
softsign = _unary(bv.softsign, "softsign", "``x / (1 + |x|)``.")
log_sigmoid = _unary(bv.log_sigmoid, "log_sigmoid", "``log(sigmoid(x))``, without overflow.")
selu = _unary(bv.selu, "selu", "The scaled exponential linear unit.")


def elu(x, alpha: float = 1.0) -> Expression:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    return Expression(bv.elu(as_expression(x, "elu").x, alpha), x.bd)


def silu(x, beta: float = 1.0) -> Expression:
    """``x * sigmoid(beta * x)`` (SiLU, swish). Its gradient is the true one, ``s + beta * x
    * s * (1 - s)`` with ``s = sigmoid(beta * x)``; DyNet 2.1's lacks the factor ``beta``
    (they agree for ``beta = 1``), see "What differs" in the docs."""
    x = as_expression(x, "silu")
    return Expression(bv.silu(x.x, beta), x.bd)


def round(x, gradient_mode: str = "zero_gradient") -> Expression:  # noqa: A001
    """The nearest integer, halves away from zero, element by element; see :func:`_stepped`
    for ``gradient_mode``."""
    return _stepped(bv.round, x, gradient_mode, "round")


def floor(x, gradient_mode: str = "zero_gradient") -> Expression:
    """The integer below, element by element; see :func:`_stepped`."""
    return _stepped(bv.floor, x, gradient_mode, "floor")


def ceil(x, gradient_mode: str = "zero_gradient") -> Expression:
    """The integer above, element by element; see :func:`_stepped`."""
    return _stepped(bv.ceil, x, gradient_mode, "ceil")


def _stepped(op, x, gradient_mode: str, who: str) -> Expression:
    """``op(x)`` with DyNet's gradient modes: ``"zero_gradient"``, the true slope (zero),
    or ``"straight_through_gradient"``, the gradient passed on as if ``op`` were the
    identity: ``x + (op(x) - x)`` with no gradient through the difference (whose value is
    exact: ``op(x)`` is within 1 of ``x``)."""
    x = as_expression(x, who)
    if gradient_mode not in ("zero_gradient", "straight_through_gradient"):
        raise ValueError(f"Unknown gradient mode for {who}: {gradient_mode!r} (DyNet's are "
                         "'zero_gradient' and 'straight_through_gradient')")
    stepped = op(x.x)
    if gradient_mode == "straight_through_gradient":
        stepped = bv.add(x.x, bv.nobackprop(bv.sub(stepped, x.x)))
    return Expression(stepped, x.bd)


def cmult(x, y) -> Expression:
    """Element-wise product (DyNet's ``*`` is the matrix product)."""
    return elementwise(bv_cmult, x, y, "cmult")


def cdiv(x, y) -> Expression:
    """Element-wise quotient; ``y`` may broadcast (dimensions of 1), ``x`` not."""
    return elementwise(bv.cdiv, x, y, "cdiv", right_only=True)


def pow(x, y) -> Expression:  # noqa: A001
    """``x ** y``, element by element (``y`` is usually one number, broadcast)."""
    return elementwise(bv.pow, x, y, "pow")


def bmax(x, y) -> Expression:
    return elementwise(bv.bmax, x, y, "bmax")


def bmin(x, y) -> Expression:
    return elementwise(bv.bmin, x, y, "bmin")


def colwise_add(x, y) -> Expression:
    """A matrix plus a column vector added to each of its columns."""
    x, y = as_expression(x, "colwise_add"), as_expression(y, "colwise_add")
    if len(dims_of(y)) != 1 or dims_of(y)[0] != dims_of(x)[0]:
        raise ValueError(f"colwise_add: {y.dim()} is not a column of {x.dim()}")
    return add(x, y)


def _common(xs, who: str):
    """``(node ids laid out alike, bd)`` for a list of expressions broadcast together."""
    xs = [as_expression(x, who) for x in xs]
    if not xs:
        raise ValueError(f"{who}: needs at least one expression")
    first = xs[0]
    shape, bd = shape_of(node_of(first)), first.bd
    nodes = []
    for x in xs:
        e = x
        node = node_of(e)
        if e.bd != bd or shape_of(node) != shape:
            return _broadcast_common(xs, who)
        nodes.append(node)
    return nodes, bd


def _broadcast_common(xs: list, who: str):
    """:func:`_common` of expressions of different dimensions or minibatch sizes."""
    first = xs[0]
    dims, bd = reduce(lambda acc, x: combine_dims(acc, x.dim(), who), xs[1:], first.dim())
    return [to_shape(x, dims, bd) for x in xs], bd


def esum(xs) -> Expression:
    """The sum of a list of expressions (broadcast together)."""
    nodes, bd = _common(list(xs), "esum")
    return expression_of(nodes[0] if len(nodes) == 1 else bv.esum(nodes), bd)


def average(xs) -> Expression:
    """The element-wise mean of a list of expressions."""
    nodes, bd = _common(list(xs), "average")
    return Expression(nodes[0] if len(nodes) == 1 else bv.average(nodes), bd)


def emax(xs) -> Expression:
    """The element-wise maximum of a list of expressions."""
    nodes, bd = _common(list(xs), "emax")
    return Expression(reduce(bv.bmax, nodes), bd)


def logsumexp(xs) -> Expression:
    """``log(sum_i exp(x_i))`` element by element over a list of expressions."""
    nodes, bd = _common(list(xs), "logsumexp")
    if len(nodes) == 1:
        return Expression(nodes[0], bd)
    ndim = len(nodes[0].shape)
    return Expression(bv.logsumexp_axis(bv.concatenate_axis(nodes, ndim), ndim), bd)


def affine_transform(exprs) -> Expression:
    """``b + W1 * x1 + W2 * x2 + ...`` from ``[b, W1, x1, W2, x2, ...]``: one node when the
    bias and the weights are unbatched (a minibatch of inputs, or inputs that are matrices,
    get the bias added to each column), else the sum of the products."""
    terms = [as_expression(e, "affine_transform") for e in exprs]
    if len(terms) % 2 == 0:
        raise ValueError(f"affine_transform: takes [b, W1, x1, ...], an odd number of "
                         f"expressions, got {len(terms)}")
    if len(terms) == 1:
        return terms[0]
    b, weights, inputs = terms[0], terms[1::2], terms[2::2]
    unbatched = b.bd == 1 and all(W.bd == 1 for W in weights)
    bd = max(x.bd for x in inputs)
    if unbatched and all(x.bd == bd for x in inputs):
        b_shape, x_shapes = b.x.shape, [x.x.shape for x in inputs]
        if len(b_shape) == 1 and all(len(s) == 1 for s in x_shapes) and bd == 1:
            return Expression(bv.affine_transform([t.x for t in terms]), 1)
        if len(b_shape) == 1 and all(len(s) == 2 for s in x_shapes):  # columns / a batch
            return Expression(bv.affine_batch([t.x for t in terms]), bd)
    products = [matmul(W, x) for W, x in zip(weights, inputs)]
    return esum([b] + products)


def conv2d(x, f, stride, is_valid: bool = True) -> Expression:
    """The 2-D convolution of ``x`` (``(H, W, C_in)``, or ``(H, W)``: one channel; or a
    minibatch of them) by the filter ``f`` (``(kH, kW, C_in, C_out)``), ``stride = [rows,
    columns]`` apart; ``is_valid``: only the windows
    inside ``x`` ("VALID"), else ``x`` padded with zeros to ``ceil(H / s)`` outputs
    ("SAME"). A correlation, as DyNet's (:mod:`batchviz.ops.conv`)."""
    return _conv(x, f, None, stride, is_valid, "conv2d")


def conv2d_bias(x, f, b, stride, is_valid: bool = True) -> Expression:
    """:func:`conv2d` plus the bias ``b`` (``(C_out,)``) at every output position."""
    return _conv(x, f, as_expression(b, "conv2d_bias"), stride, is_valid, "conv2d_bias")


def maxpooling2d(x, ksize, stride, is_valid: bool = True) -> Expression:
    """The maximum of every ``ksize = [rows, columns]`` window of every channel of ``x``
    (``(H, W)`` or ``(H, W, C)``, or a minibatch of them), windows ``stride`` apart,
    "VALID" or "SAME" as :func:`conv2d`."""
    x = as_expression(x, "maxpooling2d")
    image = _image(x, "maxpooling2d")
    pooled = bv.maxpool2d(image, tuple(ksize), tuple(stride), valid=bool(is_valid))
    if len(dims_of(x)) == 2:
        pooled = bv.reshape(pooled, layout(pooled.shape[:2], x.bd))
    return Expression(pooled, x.bd)


def kmax_pooling(x, k: int, d: int = 1) -> Expression:
    """The ``k`` largest entries along dimension ``d`` (1: of every row of a matrix), in the
    order they stand in, as DyNet's (k-max pooling over a sentence's positions)."""
    x = as_expression(x, "kmax_pooling")
    dims = dims_of(x)
    if not 0 <= d < len(dims):
        raise ValueError(f"kmax_pooling: dimension {d} out of range for {x.dim()}")
    return Expression(bv.kmax_axis(to_shape(x, dims, x.bd), k, d), x.bd)


def filter1d_narrow(x, f) -> Expression:
    """DyNet's narrow one-dimensional convolution of the matrix ``x`` (``(d, n)``, a
    sentence's vectors as columns) by the filter ``f`` (``(d, k)``): output column ``j`` is
    the sum of ``x[:, j:j+k]`` times ``f``, a ``(1, n - k + 1)`` row. It is ``conv2d`` of
    ``x`` as a one-channel image by a one-filter ``(d, k, 1, 1)`` filter, "VALID"."""
    x, f = as_expression(x, "filter1d_narrow"), as_expression(f, "filter1d_narrow")
    if x.bd != 1 or f.bd != 1:
        raise NotImplementedError("filter1d_narrow of a minibatch: build one expression per "
                                  "instance and let autobatching batch them (--dynet-autobatch 1)")
    dx, df = dims_of(x), dims_of(f)
    if len(dx) != 2 or len(df) != 2 or dx[0] != df[0] or df[1] > dx[1]:
        raise ValueError(f"filter1d_narrow: needs a (d, n) matrix and a (d, k) filter with "
                         f"k <= n, got {x.dim()} and {f.dim()}")
    image = bv.reshape(x.x, dx + (1,))
    row = bv.conv2d(image, bv.reshape(f.x, df + (1, 1)), stride=(1, 1), valid=True)
    return Expression(bv.reshape(row, (1, dx[1] - df[1] + 1)), 1)


def kmh_ngram(x, v: int) -> Expression:
    """DyNet's n-gram sums of a sentence's columns: column ``j`` of the result is the sum of
    columns ``j`` to ``j + n - 1`` of the ``(d, T)`` matrix ``x``, a ``(d, T - n + 1)``
    matrix, for ``n = v`` (DyNet's Python name for it). It is the sum of ``n`` windows of
    ``T - n + 1`` columns, window ``k`` starting at column ``k``: ``n`` column selections
    and one sum, whose gradient puts each output column's gradient on the ``n`` columns it
    sums, as DyNet's."""
    x, n = as_expression(x, "kmh_ngram"), operator.index(v)
    if x.bd != 1:
        raise NotImplementedError(f"kmh_ngram of a minibatch (dimension {x.dim()}): DyNet "
                                  "computes it for one matrix; build one expression per "
                                  "instance and let autobatching batch them "
                                  "(--dynet-autobatch 1)")
    dims = dims_of(x)
    if len(dims) != 2 or not 1 <= n <= dims[1]:
        raise ValueError(f"kmh_ngram: needs a (d, T) matrix and 1 <= n <= T, got dimension "
                         f"{x.dim()} and n={n}")
    if n == 1:
        return x
    width = dims[1] - n + 1
    windows = [bv.select_axis(x.x, list(range(k, k + width)), 1) for k in range(n)]
    return Expression(bv.esum(windows), 1)


def circ_conv(u, v) -> Expression:
    """The circular convolution of two vectors of one length ``d``: ``y[k] = sum_i u[i]
    v[(k - i) mod d]``, as DyNet's (of vectors, not minibatches)."""
    return Expression(bv.circ_conv(*_vector_pair(u, v, "circ_conv")), 1)


def circ_corr(u, v) -> Expression:
    """The circular correlation of two vectors of one length ``d``: ``y[k] = sum_i u[i]
    v[(i + k) mod d]``, as DyNet's (of vectors, not minibatches)."""
    return Expression(bv.circ_corr(*_vector_pair(u, v, "circ_corr")), 1)


def _vector_pair(u, v, who: str):
    """The nodes of two vectors of one length, which DyNet's circular ops take (and no
    minibatch of them)."""
    u, v = as_expression(u, who), as_expression(v, who)
    if u.bd != 1 or v.bd != 1:
        raise NotImplementedError(f"{who} of a minibatch (dimensions {u.dim()} and {v.dim()}): "
                                  "DyNet computes it for two vectors; build one expression "
                                  "per instance and let autobatching batch them "
                                  "(--dynet-autobatch 1)")
    du, dv = dims_of(u), dims_of(v)
    if len(du) != 1 or du != dv:
        raise ValueError(f"{who}: needs two vectors of one length, got dimensions {u.dim()} "
                         f"and {v.dim()}")
    return to_shape(u, du, 1), to_shape(v, dv, 1)


def _image(x: Expression, who: str):
    """The batchviz node of ``x``, a DyNet image ``(H, W)`` or ``(H, W, C)`` (a matrix is
    one channel), as ``(H, W, C)``, or ``(H, W, C, bd)`` for a minibatch of images (the
    instances last, as batchviz's convolutions take them)."""
    dims = dims_of(x)
    if len(dims) not in (2, 3):
        raise ValueError(f"{who}: the input must be (rows, columns) or (rows, columns, "
                         f"channels), got {x.dim()}")
    return to_shape(x, dims + (1,) * (3 - len(dims)), x.bd)


def _conv(x, f, b, stride, is_valid, who: str) -> Expression:
    x, f = as_expression(x, who), as_expression(f, who)
    if f.bd != 1 or (b is not None and b.bd != 1):
        raise NotImplementedError(f"{who} with a minibatch of filters or biases: batchviz.dynet "
                                  "convolves with one filter; build one expression per filter")
    if len(dims_of(f)) != 4:
        raise ValueError(f"{who}: the filter must be (rows, columns, in channels, out "
                         f"channels), got {f.dim()}")
    return Expression(bv.conv2d(_image(x, who), f.x, stride=tuple(stride),
                                valid=bool(is_valid),
                                b=None if b is None else to_shape(b, dims_of(b), 1)), x.bd)


__all__ = ["tanh", "logistic", "sigmoid", "rectify", "relu", "exp", "log", "square", "sqrt", "abs",
           "cube", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
           "atanh", "erf", "lgamma", "softsign", "log_sigmoid", "selu", "elu", "silu", "cmult",
           "cdiv", "pow", "bmax", "bmin", "colwise_add", "esum", "average", "emax", "logsumexp",
           "affine_transform", "round", "floor", "ceil", "conv2d", "conv2d_bias", "maxpooling2d",
           "kmax_pooling", "filter1d_narrow", "kmh_ngram", "circ_conv", "circ_corr"]
