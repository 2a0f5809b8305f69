"""Finite-difference gradient checks, in float64, for every op, under every strategy.

Each op runs in batches of several instances (so its batched kernel, with shared and
unshared arguments, views and copies, is what is checked), and the gradient that reaches
the parameters is compared with central differences of the loss."""
import zlib

import numpy as np
import pytest

import batchviz as bv
from batchviz.ops import REGISTRY

from helpers import STRATEGIES, assert_central_differences
from op_cases import CASES, NO_GRADIENT

N_INSTANCES = 4
EPS = 1e-6


def _loss_value(model_params, build, weights, strategy):
    with bv.Graph(strategy=strategy):
        terms = []
        for k in range(N_INSTANCES):
            out = build(model_params, k)
            w = bv.input(weights[k])
            terms.append(bv.dot_product(out, w) if out.shape else out * float(weights[k]))
        loss = bv.esum(terms)
        value = loss.value()
        loss.backward()
    return value


def _weights(model_params, build, rng):
    with bv.Graph():
        shapes = [build(model_params, k).shape for k in range(N_INSTANCES)]
    return [rng.normal(size=s) if s else rng.normal() for s in shapes]


def check_gradients(param_shapes, build, strategy, rng):
    model = bv.Model(seed=int(rng.integers(1 << 30)))
    params = [model.add_parameters(s, init="normal") for s in param_shapes]
    for p in params:
        p.set_value(rng.normal(size=p.shape))
    weights = _weights(params, build, rng)
    model.zero_grad()
    _loss_value(params, build, weights, strategy)
    analytic = [p.grad for p in params]
    for p, grad in zip(params, analytic):
        size = int(np.prod(p.shape))
        entries = [np.unravel_index(i, p.shape)
                   for i in rng.choice(size, size=min(size, 6), replace=False)]
        assert_central_differences(p, lambda: _loss_value(params, build, weights, "none"), grad,
                                   entries, eps=EPS, abs=1e-7, what=f"under {strategy}: entry")
        model.zero_grad()


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("op", sorted(k for k, v in CASES.items() if v[1] is not None))
def test_op_gradient(op, strategy, float64):
    shapes, build = CASES[op]
    check_gradients(shapes, build, strategy, np.random.default_rng(zlib.crc32(op.encode())))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_parameter_used_as_a_shared_bias_and_as_a_weight(strategy, float64):
    """``B`` is the shared bias of affine transforms (its gradient sums rows, kept until
    the end of the backward pass) and the left factor of products (a weight's gradient):
    both sums land in the one ``B.grad``."""
    rng = np.random.default_rng(5)

    def build(params, k):
        B, W = params
        x = bv.input(rng_inputs[k])
        return bv.sum_elems(bv.affine_transform([B, W, x])) + bv.sum_elems(B @ bv.input(vs[k]))

    rng_inputs = [rng.normal(size=(4, 3)) for _ in range(N_INSTANCES)]
    vs = [rng.normal(size=3) for _ in range(N_INSTANCES)]
    check_gradients([(2, 3), (2, 4)], build, strategy, rng)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_lookup_gradient(strategy, float64):
    rng = np.random.default_rng(3)
    model = bv.Model(seed=0)
    E = model.add_lookup_parameters((6, 3))
    W = model.add_parameters((2, 3))
    rows = [1, 4, 1, 0, 5]  # a repeated row must accumulate
    weights = rng.normal(size=(len(rows), 2))

    def loss_value(strat):
        with bv.Graph(strategy=strat):
            loss = bv.esum([bv.dot_product(W @ E[r], bv.input(w)) for r, w in zip(rows, weights)])
            value = loss.value()
            loss.backward()
        return value

    model.zero_grad()
    loss_value(strategy)
    analytic = E.grad
    assert analytic.shape == E.shape
    assert np.all(analytic[[2, 3]] == 0.0)  # rows never looked up get no gradient
    assert_central_differences(E, lambda: loss_value("none"), analytic,
                               [(r, c) for r in (1, 4, 0) for c in range(3)], eps=EPS)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_lookup_table_used_whole_and_by_rows(strategy, float64):
    """Output weights tied to the embeddings: ``E @ h`` reads the whole table, ``E[r]``
    reads rows; both gradients land in the one ``E.grad``."""
    model = bv.Model(seed=0)
    E = model.add_lookup_parameters((5, 3))
    E.set_value(np.random.default_rng(4).normal(size=(5, 3)))

    def loss_value(strat):
        with bv.Graph(strategy=strat):
            losses = [bv.pickneglogsoftmax(E.expr() @ bv.tanh(E[a] + E[b]), label)
                      for a, b, label in ((1, 3, 2), (0, 1, 4), (3, 3, 0))]
            loss = bv.esum(losses)
            value = loss.value()
            loss.backward()
        return value

    model.zero_grad()
    loss_value(strategy)
    assert_central_differences(E, lambda: loss_value("none"), E.grad, np.ndindex(E.shape),
                               eps=EPS)


def test_every_op_has_a_gradient_check():
    missing = set(REGISTRY) - set(CASES) - NO_GRADIENT
    assert not missing, f"ops without a gradient check in tests/op_cases.py: {sorted(missing)}"


class SumOfSquares(bv.ops.elementwise.Elementwise):
    """A ``one_gather`` op that keeps :class:`~batchviz.ops.Op`'s default
    ``forward_together`` and ``backward_together``: its per-position kernels run on the
    views of the one gathered block."""

    name, arity, one_gather = "sum_of_squares", None, True

    def forward(self, xp, ins, attrs, n):
        return sum(x * x for x in ins)

    def backward(self, xp, ins, out, g, attrs, n, needs):
        return [2.0 * x * g for x in ins]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_one_gather_op_with_the_default_kernels(strategy, float64):
    """Values and gradients of an op read with one gather, through the default kernels."""
    op = SumOfSquares()
    rng = np.random.default_rng(7)
    model = bv.Model(seed=0)
    params = [model.add_parameters((3,), init="normal") for _ in range(3)]
    for p in params:
        p.set_value(rng.normal(size=3))
    weights = rng.normal(size=(N_INSTANCES, 3))
    uses = [[0, 1], [2, 0], [1, 1], [0, 2]]   # one node read twice in instance 2

    def loss_value(strat):
        with bv.Graph(strategy=strat) as g:
            xs = [bv.tanh(p) for p in params]
            terms = []
            for w, use in zip(weights, uses):
                y = g.add(op, tuple(xs[j].node for j in use), None)
                terms.append(bv.dot_product(y, bv.input(w)))
            loss = bv.esum(terms)
            value = loss.value()
            if strat == strategy:
                assert any(r.together and len(r.nodes) > 1 for r in g.layout.batches
                           if r.op is op) or strat == "none"
            loss.backward()
        return value

    t = [np.tanh(p.value()) for p in params]
    assert loss_value(strategy) == pytest.approx(
        sum(w @ sum(t[j] ** 2 for j in use) for w, use in zip(weights, uses)), rel=1e-12)
    for p in params:
        p.grad_array()[...] = 0.0
    loss_value(strategy)
    analytic = [p.grad.copy() for p in params]
    for p, grad in zip(params, analytic):
        base = p.value()
        for idx in range(3):
            plus, minus = base.copy(), base.copy()
            plus[idx] += EPS
            minus[idx] -= EPS
            p.set_value(plus)
            f_plus = loss_value("none")
            p.set_value(minus)
            f_minus = loss_value("none")
            p.set_value(base)
            assert grad[idx] == pytest.approx((f_plus - f_minus) / (2 * EPS), rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("rows", [1, 3])
def test_a_shared_weights_gradient_is_the_sum_of_its_outer_products(rows):
    """``WeightGradient.value`` is ``sum_k g_k x_k^T`` whether it holds one row (unbatched
    execution, computed as an outer product) or several (one matrix product)."""
    from batchviz.ops.linalg import WeightGradient

    rng = np.random.default_rng(rows)
    g, x = rng.normal(size=(rows, 5)), rng.normal(size=(rows, 7))
    want = sum(np.outer(g[k], x[k]) for k in range(rows))
    got = WeightGradient(g, x).value(np)
    assert got.shape == (5, 7)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("rows_of_A", [3, 70])
@pytest.mark.parametrize("n", [1, 5, 8, 600])
def test_a_shared_matrix_times_a_batch_is_the_same_either_way_round(n, rows_of_A):
    """``_mm_forward`` computes ``x A^T`` or ``(A x^T)^T`` (a transposed view), whichever
    ``columns_first`` says OpenBLAS does faster, or a few vectors one at a time
    (``per_vector``: rows, with the numbers of a batch of one); all are ``A @ x_i`` for
    every node, and a caller reads rows of any."""
    from batchviz.ops import linalg

    rng = np.random.default_rng(n)
    A, x = rng.normal(size=(rows_of_A, 7)), rng.normal(size=(n, 7))
    got = linalg._mm_forward(np, A, x, shared=True, rows=True)
    assert got.shape == (n, rows_of_A)
    np.testing.assert_allclose(got, np.stack([A @ v for v in x]), rtol=1e-12)
    if linalg.per_vector(np, n):
        assert got.flags.c_contiguous
        assert all(np.array_equal(got[i], A @ v) for i, v in enumerate(x))
    elif n > 1:  # which way it went (a single row is contiguous either way)
        assert got.flags.c_contiguous == (not linalg.columns_first(rows_of_A, n))
    assert linalg.columns_first(rows_of_A, n) == (rows_of_A == 70 and n <= 512)
