"""The executor (batchviz.execute): each kind of read carried out forward (the block the
kernel sees) and backward (the gradient added where the arguments live), on the current
backend, against plain NumPy oracles; and what a run and a backward pass leave and reach."""
import numpy as np
import pytest

import batchviz as bv
from batchviz.backend import state, to_numpy
from batchviz.execute.backward import add_gradient
from batchviz.execute.forward import read_block
from batchviz.execute.memory import copy_index, strided_array
from batchviz.ops.gradients import BlockGradient
from batchviz.plan import Concat, Copy, CopyFromArenas, Shared, Stack, Strided, View

RNG = np.random.default_rng(0)


class FakeGraph:
    """What the executor reads of a graph for these reads: the parameters by node."""

    def __init__(self, params: dict):
        self.param_of_node = params


class FakeParam:
    def __init__(self, values):
        self.array = state.xp.asarray(values, dtype=float)
        self.shape = self.array.shape
        self.grad = state.xp.zeros_like(self.array)

    def grad_array(self):
        return self.grad

    def grad_to_write(self):
        return self.grad, False


def arenas():
    return [state.xp.asarray(RNG.normal(size=n)) for n in (40, 30)]


def zeros_like(arrays):
    return [state.xp.zeros(a.size) for a in arrays]


def oracle_gather(arrays, pieces):
    """``pieces``: (arena, start, size) per argument, in batch order."""
    return np.concatenate([to_numpy(arrays[a])[s:s + n] for a, s, n in pieces])


def oracle_scatter(shapes, pieces, grad):
    out = [np.zeros(n) for n in shapes]
    at = 0
    for a, s, n in pieces:
        out[a][s:s + n] += grad[at:at + n]
        at += n
    return out


# (read, its arguments as (arena, start, size) pieces in batch order)
CASES = {
    "view": (View(0, 4, 12), [(0, 4, 4), (0, 8, 4), (0, 12, 4)]),
    "strided": (Strided(0, 2, 3, 2, 5), [(0, 2, 2), (0, 7, 2), (0, 12, 2)]),
    "concat": (Concat(0, ((0, 6), (20, 6)), 3), [(0, 0, 3), (0, 3, 3), (0, 20, 3), (0, 23, 3)]),
    "copy": (Copy(0, np.array([9, 1, 30]), 3, True), [(0, 9, 3), (0, 1, 3), (0, 30, 3)]),
    "copy, a node twice": (Copy(0, np.array([5, 5, 11]), 2, False),
                           [(0, 5, 2), (0, 5, 2), (0, 11, 2)]),
    "copy of rows": (Copy(0, np.array([20, 0]), 16, True), [(0, 20, 16), (0, 0, 16)]),
    "copy of several sizes": (Copy(0, np.array([10, 2]), (3, 5), True),
                              [(0, 10, 3), (0, 2, 5)]),
    "from two arenas": (CopyFromArenas(((0, np.array([0, 2]), np.array([3, 30])),
                                        (1, np.array([1]), np.array([4]))), 3, 2, True),
                        [(0, 3, 2), (1, 4, 2), (0, 30, 2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_read_gives_the_block_and_takes_its_gradient_back(name):
    read, pieces = CASES[name]
    arrays, xp = arenas(), state.xp
    block, index = read_block(FakeGraph({}), arrays, read, xp)
    np.testing.assert_array_equal(to_numpy(block).reshape(-1), oracle_gather(arrays, pieces))
    grad = RNG.normal(size=sum(n for _, _, n in pieces))
    grads = zeros_like(arrays)
    add_gradient(FakeGraph({}), grads, read, xp.asarray(grad), index, xp)
    want = oracle_scatter([a.size for a in arrays], pieces, grad)
    for got, expected in zip(grads, want):
        np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-12)  # read twice: added twice


def test_a_view_and_a_strided_view_read_in_place():
    arrays, xp = arenas(), state.xp
    view, _ = read_block(FakeGraph({}), arrays, View(0, 4, 12), xp)
    strided, _ = read_block(FakeGraph({}), arrays, Strided(0, 2, 3, 2, 5), xp)
    assert xp.shares_memory(view, arrays[0]) and xp.shares_memory(strided, arrays[0])
    copied, index = read_block(FakeGraph({}), arrays, CASES["copy"][0], xp)
    assert not xp.shares_memory(copied, arrays[0])
    assert index[1] == 1 and np.array_equal(
        to_numpy(index[0]), to_numpy(copy_index(np.array([9, 1, 30]), 3)[0]))


def test_a_strided_array_is_the_view_as_strided_makes():
    """strided_array (a batch's blocks, plane by plane; a strided read past the end of a
    reshaped segment) gives as_strided's array, in place, on every backend."""
    xp = state.xp
    flat = xp.arange(80.0)
    item = flat.itemsize
    shape, strides = (3, 2, 4), (20 * item, 4 * item, item)
    made = strided_array(xp, flat, 5, shape, strides)
    want = xp.lib.stride_tricks.as_strided(flat[5:], shape=shape, strides=strides)
    np.testing.assert_array_equal(to_numpy(made), to_numpy(want))
    made[1, 1, 2] = -1.0  # a view: the kernels write into it
    assert float(flat[5 + 20 + 4 + 2]) == -1.0


def test_shared_and_stacked_parameters():
    W, b = FakeParam(RNG.normal(size=(2, 3))), FakeParam(RNG.normal(size=3))
    graph, arrays, xp = FakeGraph({7: W, 8: b}), arenas(), state.xp
    block, _ = read_block(graph, arrays, Shared(7), xp)
    assert block is W.array
    add_gradient(graph, zeros_like(arrays), Shared(7), xp.ones((2, 3)), None, xp)
    np.testing.assert_array_equal(to_numpy(W.grad), np.ones((2, 3)))
    stack = Stack(((None, 8, 3), (0, 5, 3), (None, 8, 3)))  # b, a node, b again
    block, _ = read_block(graph, arrays, stack, xp)
    b_values, first = to_numpy(b.array), to_numpy(arrays[0])
    np.testing.assert_array_equal(to_numpy(block), np.concatenate([b_values, first[5:8], b_values]))
    grads = zeros_like(arrays)
    add_gradient(graph, grads, stack, xp.arange(9.0), None, xp)
    np.testing.assert_array_equal(to_numpy(b.grad), np.arange(3.0) + np.arange(6.0, 9.0))
    np.testing.assert_array_equal(to_numpy(grads[0])[5:8], [3.0, 4.0, 5.0])


@pytest.mark.parametrize("read", [View(0, 0, 12), Strided(0, 0, 2, 6, 10),
                                  Copy(0, np.array([10, 0]), 6, True)], ids=str)
def test_a_gradient_of_a_band_of_rows_lands_in_those_rows_only(read):
    """BlockGradient (lstm_h's gradient of its gates' o block): added into its rows of the
    view, or made dense for a copy."""
    xp, arrays = state.xp, arenas()
    grads = zeros_like(arrays)
    values = RNG.normal(size=(2, 2))
    grad = BlockGradient((2, 6), 2, 4, xp.asarray(values))
    _, index = read_block(FakeGraph({}), arrays, read, xp)
    add_gradient(FakeGraph({}), grads, read, grad, index, xp)
    dense = to_numpy(grad.dense(xp))
    starts = {"View": [0, 6], "Strided": [0, 10], "Copy": [10, 0]}[type(read).__name__]
    want = np.zeros(40)
    for row, start in zip(dense, starts):
        want[start:start + 6] += row
    np.testing.assert_allclose(to_numpy(grads[0]), want, rtol=1e-12)


def test_a_run_leaves_its_plan_and_what_backward_needs():
    model = bv.Model(seed=0)
    W = model.add_parameters((3, 3))
    with bv.Graph("agenda") as g:
        xs = [bv.input(RNG.normal(size=3)) for _ in range(4)]
        loss = bv.sum_elems(bv.esum([bv.tanh(W @ x) for x in xs]))
        loss.value()
        assert len(g.plans) == 1 and len(g.batch_runs) == len(g.layout.batches)
        for batch, run in zip(g.layout.batches, g.batch_runs):
            assert len(run.ins) == len(batch.reads) and run.out.shape == batch.out_shape
        extra = bv.tanh(loss)  # a second run: a second plan, batches numbered on
        extra.value()
        assert len(g.plans) == 2 and g.plans[1].batches[0].index == len(g.plans[0].batches)


def test_backward_runs_only_the_batches_the_loss_reaches():
    model = bv.Model(seed=0)
    W = model.add_parameters((3, 3))
    with bv.Graph("depth") as g:
        x = bv.input(RNG.normal(size=3))
        loss = bv.sum_elems(bv.tanh(W @ x))
        unrelated = bv.sum_elems(bv.exp(W @ bv.input(np.ones(3))) * 2.0)
        bv.esum([loss, unrelated]).value()
        loss.backward()
        reached = bv.last_run_stats().backward.batches
        x_value = x.value()
    # sum_elems, tanh and matmul batches carry the loss's gradient; exp and its scale
    # (and the esum of both) are never reached
    assert reached == 3
    np.testing.assert_allclose(
        W.grad, np.outer(1 - np.tanh(W.value() @ x_value) ** 2, x_value), rtol=1e-5)


class WeightByWeight(bv.schedule.AgendaBatching):
    """The agenda, but each batch's weight gradient added on its own."""
    name = "agenda-weight-by-weight"
    batches_weight_gradients = False


def test_weight_gradients_summed_at_the_end_equal_those_added_batch_by_batch(float64):
    def grads(strategy):
        model = bv.Model(seed=3)
        W, U = model.add_parameters((4, 4)), model.add_parameters((4, 4))
        with bv.Graph(strategy):
            h = bv.input(np.arange(4.0))
            for _ in range(5):
                h = bv.tanh(W @ h + U @ bv.input(np.ones(4)))
            bv.sum_elems(h).backward()
        return W.grad, U.grad

    for got, want in zip(grads("agenda"), grads(WeightByWeight())):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_gradients_written_where_none_had_reached_equal_those_added(float64, monkeypatch):
    """A kernel that writes a position's gradient straight into untouched arguments
    (``Op.writes_gradients``: an element-wise product, an affine transform, a product, a
    classification loss) leaves the numbers that adding it into zeros leaves: every
    parameter's gradient and every node's."""
    from batchviz.ops.base import REGISTRY

    def run():
        model = bv.Model(seed=5)
        W, U = model.add_parameters((4, 3)), model.add_parameters((4, 4))
        b, V = model.add_parameters((4,)), model.add_parameters((5, 4))
        with bv.Graph("agenda") as graph:
            graph.keep_gradients = True
            losses, nodes = [], []
            for k in range(3):
                x = bv.input(np.arange(3.0) + k)
                g = bv.activated_affine("logistic", [b, W, x])
                u = bv.tanh(bv.affine_transform([b, W, x]))
                h = bv.cmult(g, u)
                h = bv.cmult(h, bv.matmul(U, h))
                s = bv.cmult(h, h)  # one batch read at two positions: written, then added
                nodes += [g, u, h, s]
                losses.append(bv.pickneglogsoftmax(bv.matmul(V, s), k))
            bv.esum(losses).backward()
            kept = [graph.gradient_of(e.node) for e in nodes]
        return [W.grad, U.grad, b.grad, V.grad] + kept

    written = run()
    for op in REGISTRY.values():
        if op.writes_gradients:
            monkeypatch.setattr(type(op), "writes_gradients", False)
    added = run()
    for got, want in zip(written, added):
        np.testing.assert_array_equal(got, want)
