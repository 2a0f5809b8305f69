"""Matrix multiplication and affine transforms: the heavy ops, and where batching pays.

Appendix A's shared-argument rule: when the left factor ``W`` of ``W @ h_i`` is a
parameter, every such node names ``W``'s node id in its signature, so a batch of them is
one matrix-matrix product ``W @ H`` (a single GEMM). When the left factor is an ordinary
expression (different per node), the signature names only the shapes and the batch runs
as one batched ``matmul`` over stacked matrices. Affine transforms ``b + W1 x1 + W2 x2``
share ``b`` and the ``W``s the same way, and never the ``x``s (the paper's heuristic).
"""
from __future__ import annotations

import numpy as np

from ..backend import constant
from ..graph import ExpressionBase, live_graph
from .base import Op, register, shared_node
from .elementwise import logistic_values
from ._build import (build, build_over_parameters, expression_list, parameter_node_of,
                     terms_memo_key)
from .gradients import RowSums, WeightGradient
from .parameter import PARAMETER


#: a shared ``A`` of at least ``TRANSPOSED_MIN_ROWS`` rows times a batch of at most
#: ``TRANSPOSED_UP_TO`` vectors is computed as ``(A x^T)^T`` even when the caller would
#: like rows: see :func:`_mm_forward` (and ``python -m benchmarks products``)
TRANSPOSED_UP_TO = 512
TRANSPOSED_MIN_ROWS = 64


def columns_first(rows_of_A: int, n: int) -> bool:
    """Whether NumPy computes a shared ``A`` (of ``rows_of_A`` rows) times ``n`` vectors as
    ``(A x^T)^T``, the faster way round on this BLAS (see :func:`_mm_forward`)."""
    return n <= TRANSPOSED_UP_TO and rows_of_A >= TRANSPOSED_MIN_ROWS


def _mm_forward(xp, A, x, shared, rows: bool = False):
    """``A @ x`` for a batch: ``x`` is ``(n, k)`` (vectors) or ``(n, k, c)`` (matrices).
    ``rows``: the result of vectors should be one contiguous row per node, as ``x A^T``
    gives it, when that is not slower.

    With a shared ``A``, a few vectors are one matrix-vector product each
    (:func:`per_vector`); more are usually ``(A x^T)^T``, the same numbers laid out a
    column per node (a transposed view, which the callers read as they read rows). The BLAS
    sees another call, which OpenBLAS runs faster for the small batches of vectors an
    LSTM's steps make; ``x A^T`` stays for large batches (a minibatch's thousand Tree-LSTM
    leaves) and for an ``A`` of few rows (an output layer of a few tags). Where the line
    lies depends on the BLAS: ``python -m benchmarks products`` measures both forms at the
    benchmark models' shapes (``TRANSPOSED_UP_TO``, ``TRANSPOSED_MIN_ROWS``)."""
    if shared:
        if x.ndim == 2:
            if per_vector(xp, len(x)):
                return xp.matmul(A, x[:, :, None])[:, :, 0]
            if rows and (xp is not np or not columns_first(len(A), len(x))):
                return x @ A.T
            return (A @ x.T).T
        return xp.matmul(A, x)
    if x.ndim == 2:
        return xp.matmul(A, x[:, :, None])[:, :, 0]
    return xp.matmul(A, x)


#: a shared ``A`` times at most this many vectors (and more than one), and their
#: gradients times ``A``, are computed one matrix-vector product per vector: see
#: :func:`per_vector`
PER_VECTOR_UP_TO = 6


def per_vector(xp, n: int) -> bool:
    """Whether a shared ``A`` times a batch of ``n`` vectors (forward), or the batch's
    ``(n, rows)`` gradient times ``A`` (backward), runs as one matrix-vector product per
    vector, in one NumPy call (a stack of them), rather than as one matrix product. A
    matrix product first copies all of ``A`` into its packed layout, which costs more
    than the products themselves for a few vectors (a Tree-LSTM's nodes come two or three
    at a time in a graph of one tree): on OpenBLAS, 2 to 6 vectors take half the time
    this way, and from 8 on the matrix product is faster (measured at 128 x 128 and
    128 x 256, float32). One vector is a matrix-vector product either way, and the
    vectors of a batch get the very numbers a batch of one gets."""
    return 1 < n <= PER_VECTOR_UP_TO and xp is np


def _rows_times(xp, g, A, out=None):
    """``g @ A`` for the ``(n, rows)`` gradient ``g`` of a batch's products with a shared
    ``A``: the gradient of their vectors (:func:`per_vector` says how); in ``out`` when it
    is given."""
    if per_vector(xp, len(g)):
        if out is None:
            return xp.matmul(g[:, None, :], A)[:, 0, :]
        xp.matmul(g[:, None, :], A, out=out[:, None, :])
        return out
    return xp.matmul(g, A, out=out)


def _mm_backward(xp, A, x, g, shared, need_A, need_x, out_x=None):
    """The gradients ``(of A, of x)`` of ``A @ x`` (the one of a shared ``x``'s vectors
    written in ``out_x`` when it is given: see ``Op.writes_gradients``)."""
    gA = gx = None
    if shared:
        if x.ndim == 2:
            if need_A:
                gA = WeightGradient(g, x)
            if need_x:
                gx = _rows_times(xp, g, A, out_x)
        else:
            if need_A:  # columns are instances: one row per instance, n * c of them
                gA = WeightGradient(_instances_as_rows(g), _instances_as_rows(x))
            if need_x:
                gx = xp.matmul(A.T, g)
    else:
        if x.ndim == 2:
            if need_A:
                gA = g[:, :, None] * x[:, None, :]
            if need_x:
                gx = xp.matmul(g[:, None, :], A)[:, 0, :]
        else:
            if need_A:
                gA = xp.matmul(g, x.transpose(0, 2, 1))
            if need_x:
                gx = xp.matmul(A.transpose(0, 2, 1), g)
    return gA, gx


def _instances_as_rows(m):
    """``(n, rows, c)`` blocks of ``c`` instances each as ``(n * c, rows)``: one row per
    instance, as :class:`WeightGradient` takes them. It is a transposed view of a
    ``(rows, n * c)`` copy: that copy moves whole rows of ``c`` numbers, where making the
    ``(n * c, rows)`` array itself would read every number ``c`` apart (a language
    model's output layer: megabytes per time step)."""
    return m.transpose(1, 0, 2).reshape(m.shape[1], -1).T


def _mm_shape(op, a, x):
    if len(a) != 2:
        raise op.error(f"the left factor must be a matrix, got shape {a}")
    if len(x) not in (1, 2) or x[0] != a[1]:
        raise op.error(f"cannot multiply shapes {a} and {x}: inner dimensions {a[1]} and "
                       f"{x[0] if x else '()'} differ")
    return (a[0],) + x[1:]


def _factor_key(graph, node):
    """Shared (node id) if the factor is a parameter, otherwise only its shape."""
    if graph.ops[node] is PARAMETER:
        return shared_node(node), True
    return graph.shapes[node], False


class MatMul(Op):
    name = "matmul"
    cheap = False
    arity = 2
    writes_gradients = True

    def infer_shape(self, shapes, attrs):
        return _mm_shape(self, shapes[0], shapes[1])

    def signature(self, graph, args, attrs, shape):
        a_key, shared = _factor_key(graph, args[0])
        return ("matmul", a_key, graph.shapes[args[1]]), ((0,) if shared else ())

    def memo_key(self, graph, args, attrs):
        return product_memo_key(self, graph, args)

    def forward(self, xp, ins, attrs, n):
        A, x = ins
        return _mm_forward(xp, A, x, A.ndim == 2)

    def backward(self, xp, ins, out, g, attrs, n, needs, into=None):
        A, x = ins
        return list(_mm_backward(xp, A, x, g, A.ndim == 2, needs[0], needs[1],
                                 None if into is None else into[1]))


def product_memo_key(op, graph, args: tuple) -> tuple:
    """:meth:`MatMul.memo_key`: the left factor's node id when it is a parameter (the
    signature names it), else its shape, and the right factor's shape."""
    a, x = args
    shapes = graph.shapes
    return (op, a if a in graph.param_of_node else shapes[a], shapes[x])


def affine_terms(b, weights, inputs, who: str) -> list:
    """``[b, W1, x1, W2, x2, ...]`` from a bias, the weights and their inputs (one weight
    per input): the argument list of every op over affine terms (``who`` names the caller
    in the error)."""
    if len(weights) != len(inputs):
        raise ValueError(f"{who}: {len(weights)} weight matrices but {len(inputs)} inputs; "
                         "give one matrix per piece of input")
    terms = [b]
    for W, x in zip(weights, inputs):
        terms += [W, x]
    return terms


class AffineArguments(Op):
    """Ops over ``[b, W1, x1, W2, x2, ...]`` (affine transforms, LSTM gates, manual-batching
    affines). Appendix A's heuristic: the bias and the ``W`` positions are shared arguments
    when they are parameters (their node ids go into the signature), the ``x`` positions
    never are (only their shapes do)."""

    def check_terms(self, shapes, vector_bias: bool = False) -> None:
        """Raise unless ``shapes`` are ``[b, W1, x1, ...]``: an odd number (>= 3) of them
        (and, with ``vector_bias``, a bias that is a vector)."""
        if len(shapes) < 3 or len(shapes) % 2 == 0:
            raise self.error("takes [b, W1, x1, W2, x2, ...]: an odd number (>= 3) of "
                             f"expressions, got {len(shapes)}")
        if vector_bias and len(shapes[0]) != 1:
            raise self.error(f"the bias must be a vector, got shape {shapes[0]}")

    def signature_prefix(self, attrs) -> tuple:
        """What besides the op's name and the arguments the signature holds (default nothing)."""
        return ()

    def signature(self, graph, args, attrs, shape):
        parts, shared = self.terms_signature(graph, args)
        return (self.name, *self.signature_prefix(attrs), *parts), shared

    #: whether a bias with columns (a matrix) is shared when it is a parameter; the gate
    #: ops read a shared bias as a vector, so for them such a bias is one per node
    shares_matrix_bias = True

    def terms_signature(self, graph, terms) -> tuple:
        """``(parts, shared positions)`` of the terms ``[b, W1, x1, ...]``: a shared part
        (node id) for the bias and every ``W`` that is a parameter, the shape otherwise."""
        parts, shared = [], []
        for pos, node in enumerate(terms):
            if pos == 0 and not self.shares_matrix_bias and len(graph.shapes[node]) > 1:
                parts.append(graph.shapes[node])
            elif pos == 0 or pos % 2 == 1:  # the bias and the W positions may be shared
                part, is_shared = _factor_key(graph, node)
                parts.append(part)
                if is_shared:
                    shared.append(pos)
            else:
                parts.append(graph.shapes[node])
        return parts, tuple(shared)

    def products(self, xp, ins, rows: bool = False):
        """``W1 x1 + W2 x2 + ...`` for the batch (positions 1, 2, 3, 4, ... of ``ins``);
        ``rows``: as one contiguous row per node (see ``_mm_forward``)."""
        total = None
        for i in range(1, len(ins), 2):
            A = ins[i]
            term = _mm_forward(xp, A, ins[i + 1], A.ndim == 2, rows)
            if total is None:
                total = term
            else:
                total += term
        return total

    def products_backward(self, xp, ins, g, needs, grads, into=None) -> list:
        """Fill ``grads`` for every ``W_j`` and ``x_j`` position, given the gradient ``g`` of
        ``W1 x1 + W2 x2 + ...`` (the ``x_j``'s written in ``into``'s targets, where it has
        them); the bias position is the op's own business."""
        for i in range(1, len(ins), 2):
            A = ins[i]
            grads[i], grads[i + 1] = _mm_backward(xp, A, ins[i + 1], g, A.ndim == 2,
                                                  needs[i], needs[i + 1],
                                                  None if into is None else into[i + 1])
        return grads

    def memo_key(self, graph, args, attrs):
        """See :func:`~batchviz.ops._build.terms_memo_key`."""
        return terms_memo_key(self, self.signature_prefix(attrs), graph, args)


class AffineTransform(AffineArguments):
    """``b + W1 @ x1 + W2 @ x2 + ...`` as one node (DyNet's ``affine_transform``)."""

    name = "affine"
    cheap = False
    arity = None

    def infer_shape(self, shapes, attrs):
        self.check_terms(shapes)
        out = shapes[0]
        for i in range(1, len(shapes), 2):
            term = _mm_shape(self, shapes[i], shapes[i + 1])
            if term != out:
                raise self.error(f"term {i // 2 + 1} (W{shapes[i]} @ x{shapes[i + 1]}) has shape "
                                 f"{term} but the bias has shape {out}")
        return out

    #: the sum is formed in the batch's own segment: no result array copied in afterwards
    writes_output = True
    writes_gradients = True

    def forward(self, xp, ins, attrs, n, out=None):
        return xp.add(self.products(xp, ins, rows=True), ins[0], out=out)

    def backward(self, xp, ins, out, g, attrs, n, needs, into=None):
        grads = [None] * len(ins)
        if needs[0]:  # a shared bias: the sum of the rows, which the executor forms later
            grads[0] = RowSums(g) if ins[0].ndim == g.ndim - 1 else g
        return self.products_backward(xp, ins, g, needs, grads, into)


class ActivatedAffine(AffineTransform):
    """``f(b + W1 @ x1 + W2 @ x2 + ...)`` as one node, ``f`` the op's ``activation``
    (``logistic``, ``tanh`` or ``rectify``).

    A layer, a Tree-LSTM's gate, is an affine transform and its activation: two nodes,
    two batches per step of the schedule, and an array written and read back between
    them. As one node it is one batch, and the activation runs on the batch's segment
    right after the products, while it is in the cache. The values are those of the two
    ops: the same operations, in the same order."""

    def __init__(self, activation: str):
        self.activation = activation
        self.name = f"affine_{activation}"

    def forward(self, xp, ins, attrs, n, out=None):
        out = AffineTransform.forward(self, xp, ins, attrs, n, out)  # (no super object per batch)
        if self.activation == "logistic":  # bv.logistic's values, in place
            logistic_values(xp, out, out=out)
        elif self.activation == "tanh":
            xp.tanh(out, out=out)
        else:
            xp.maximum(out, 0.0, out=out)
        return out

    def backward(self, xp, ins, out, g, attrs, n, needs, into=None):
        # the gradient times the activation's slope, from its value, in one new array
        # (the numbers of ``g * out * (1.0 - out)`` and ``g * (1.0 - out * out)``)
        if self.activation == "logistic":
            d = xp.multiply(g, out)
            d *= xp.subtract(constant(xp, 1.0, out), out)
        elif self.activation == "tanh":
            d = xp.multiply(out, out)
            xp.subtract(constant(xp, 1.0, out), d, out=d)
            d *= g
        else:
            d = g * (out > 0)
        return AffineTransform.backward(self, xp, ins, out, d, attrs, n, needs, into)


_MATMUL = register(MatMul())
_AFFINE = register(AffineTransform())
#: the activations an affine transform may end with, and their ops
ACTIVATIONS = ("logistic", "tanh", "rectify")
_ACTIVATED = {f: register(ActivatedAffine(f)) for f in ACTIVATIONS}


def matmul(a, x):
    """``a @ x``: matrix times vector, or matrix times matrix.

    ``W @ h`` with ``W`` a parameter that the graph of ``h`` already holds (an output
    layer, once per word or tree node) is a memo lookup and a push (the graph's
    ``add_memoized``), as ``affine_transform``'s is."""
    if isinstance(x, ExpressionBase):
        e = x  # (an expression: its fields are read directly when compiled)
        g = live_graph(e)  # (raises for a finished graph or reverted node)
        W = parameter_node_of(g, a)
        if W is not None:
            n = e.node
            args = (W, n)
            return g.add_known(_MATMUL, args, None, g.depths[n] + 1,
                               product_memo_key(_MATMUL, g, args))
    return build(_MATMUL, (a, x))


def affine_transform(terms):
    """``b + W1 @ x1 + W2 @ x2 + ...`` from the list ``[b, W1, x1, W2, x2, ...]``."""
    if (type(terms) is list or type(terms) is tuple) and len(terms) % 2 and len(terms) > 2:
        return build_over_parameters(_AFFINE, terms)  # (usually parameters and vectors)
    return build(_AFFINE, expression_list(terms, "affine_transform"))


def activated_affine(activation: str, terms):
    """``activation(b + W1 @ x1 + ...)`` from the list ``[b, W1, x1, W2, x2, ...]``, as one
    node: ``activated_affine("tanh", [b, W, x])`` is ``bv.tanh(bv.affine_transform([b, W,
    x]))``. ``activation`` is ``"logistic"``, ``"tanh"`` or ``"rectify"``."""
    op = _ACTIVATED.get(activation)
    if op is None:
        raise ValueError(f"activated_affine: activation must be one of {ACTIVATIONS}, got "
                         f"{activation!r}")
    if (type(terms) is list or type(terms) is tuple) and len(terms) % 2 and len(terms) > 2:
        return build_over_parameters(op, terms)
    return build(op, expression_list(terms, "activated_affine"))


__all__ = ["matmul", "affine_transform", "activated_affine"]
