"""The public core: laziness, incremental forward, parameters and gradients, operators."""
import numpy as np
import pytest

import batchviz as bv
from batchviz.words import counted


def test_issue_example_runs_and_gradients_land_on_parameters():
    rng = np.random.default_rng(0)
    model = bv.Model(seed=0)
    W = model.add_parameters((64, 96))
    b = model.add_parameters((64,))
    E = model.add_lookup_parameters((1000, 32))
    U = model.add_parameters((8, 64))
    minibatch = [(rng.integers(0, 1000, size=n), rng.normal(size=8)) for n in (3, 5, 4)]
    with bv.Graph(strategy="agenda"):
        losses = []
        for words, target in minibatch:
            h = bv.zeros(64)
            for w in words:
                h = bv.tanh(W @ bv.concatenate([h, E[w]]) + b)
            losses.append(bv.squared_distance(U @ h, bv.input(target)))
        loss = bv.esum(losses)
        value = loss.value()
        loss.backward()
    assert isinstance(value, float) and value > 0
    assert W.grad.shape == (64, 96) and np.abs(W.grad).sum() > 0
    assert E.grad.shape == (1000, 32)
    assert set(np.nonzero(np.abs(E.grad).sum(axis=1))[0]) == set(
        int(w) for words, _ in minibatch for w in words)


def test_lazy_until_value():
    with bv.Graph() as g:
        x = bv.tanh(bv.input(np.ones(3)))
        assert g.n_evaluated == 0 and not g.plans
        assert x.shape == (3,)
        np.testing.assert_allclose(x.value(), np.tanh(np.ones(3)), rtol=1e-6)
        assert g.n_evaluated == len(g)


def test_incremental_forward_runs_only_the_delta():
    with bv.Graph():
        a = bv.tanh(bv.input(np.ones(3)))
        a.value()
        assert bv.last_run_stats().forward.nodes == 2
        b = bv.logistic(a) * 2.0
        c = bv.sum_elems(b)
        assert c.value() == pytest.approx(float((2 / (1 + np.exp(-np.tanh(1.0)))) * 3), rel=1e-6)
        assert bv.last_run_stats().forward.nodes == 3   # logistic, scale, sum_elems only
        np.testing.assert_allclose(a.value(), np.tanh(np.ones(3)), rtol=1e-6)


@pytest.mark.parametrize("strategy", ["agenda", "depth", "layout"])
def test_a_dropped_graph_is_freed_without_the_cycle_collector(strategy):
    """Nothing that a run leaves (views, their arrays, plans, layout) refers back in a
    cycle: a minibatch's graph goes as soon as the program drops it, not at the garbage
    collector's next full pass, which such graphs would make slower."""
    import gc
    import weakref

    model = bv.Model(seed=0)
    W, E = model.add_parameters((4, 4)), model.add_lookup_parameters((10, 4))
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        with bv.Graph(strategy=strategy) as g:
            hs = [bv.tanh(W @ E[w % 10]) for w in range(100)]
            loss = bv.sum_elems(bv.esum(hs))
            loss.value()
            loss.backward()
        graph = weakref.ref(g)
        del g, hs, loss
        assert graph() is None
    finally:
        if was_enabled:
            gc.enable()


def test_new_graph_without_with():
    g = bv.new_graph(strategy="depth")
    assert g.strategy.name == "depth"
    assert bv.current_graph() is g
    x = bv.input(2.0) * 3.0
    assert x.value() == 6.0


def test_operators(float64):
    model = bv.Model(seed=0)
    W = model.add_parameters((2, 3), init="normal")
    with bv.Graph():
        x = bv.input([1.0, -2.0, 0.5])
        y = bv.input([0.5, 0.25, 2.0])
        cases = {
            "add": (x + y, [1.5, -1.75, 2.5]),
            "sub": (x - y, [0.5, -2.25, -1.5]),
            "mul": (x * y, [0.5, -0.5, 1.0]),
            "scalar": (2.0 * x / 4.0, [0.5, -1.0, 0.25]),
            "rsub": (1.0 - x, [0.0, 3.0, 0.5]),
            "radd": (1.0 + x, [2.0, -1.0, 1.5]),
            "neg": (-x, [-1.0, 2.0, -0.5]),
            "div": (x / y, [2.0, -8.0, 0.25]),
            "pick": (x[1], -2.0),
            "slice": (x[1:3], [-2.0, 0.5]),
            "slice from the end": (x[-2:], [-2.0, 0.5]),
            "slice to the end": (x[:-1], [1.0, -2.0]),
            "whole slice": (x[:], [1.0, -2.0, 0.5]),
            "pick from the end": (x[-1], 0.5),
            "matmul": (W @ x, W.value() @ np.array([1.0, -2.0, 0.5])),
            "transpose": (x.T, [[1.0, -2.0, 0.5]]),
            "reshape -1": (bv.reshape(x, (-1, 1)), [[1.0], [-2.0], [0.5]]),
        }
        for name, (expr, expected) in cases.items():
            np.testing.assert_allclose(expr.value(), expected, rtol=1e-12, err_msg=name)


def test_operators_with_numbers_and_parameters(float64):
    """A number on either side, a parameter on the left, and the operators that refuse."""
    model = bv.Model(seed=0)
    v = model.add_parameters(3, init="normal")
    with bv.Graph():
        x = bv.input([1.0, -2.0, 0.5])
        data = np.array([1.0, -2.0, 0.5])
        cases = {
            "add number": (x + 2.0, data + 2.0),
            "sub number": (x - 2.0, data - 2.0),
            "mul number": (x * 3.0, data * 3.0),
            "numpy scalar": (np.float64(2.0) * x - np.int64(1), 2.0 * data - 1.0),
            "numpy scalar first": (np.float32(3.0) - x + np.float64(1.0), 4.0 - data),
            "np.add of expressions": (np.add(x, x), 2.0 * data),
            "np.negative": (np.negative(x), -data),
            "pos": (+x, data),
            "parameter + x": (v + x, v.value() + data),
            "parameter - x": (v - x, v.value() - data),
            "parameter * x": (v * x, v.value() * data),
        }
        for name, (expr, expected) in cases.items():
            assert isinstance(expr, bv.Expression), name
            np.testing.assert_allclose(expr.value(), expected, rtol=1e-12, err_msg=name)
        with pytest.raises(ZeroDivisionError, match="division of an expression by zero"):
            x / 0
        with pytest.raises(IndexError, match="step 1"):
            x[::2]
        with pytest.raises(TypeError, match="no truth value"):
            bool(x)


@pytest.mark.parametrize("combine", [
    lambda data, x: data + x,
    lambda data, x: data - x,
    lambda data, x: data * x,
    lambda data, x: np.ones((2, 3)) @ x,
], ids=["add", "sub", "mul", "matmul"])
def test_a_numpy_array_with_an_expression_asks_for_bv_input(combine):
    """Left to NumPy, ``array + x`` would loop over the array and return an object array
    of expressions, one per element; it must raise and say what to do instead."""
    with bv.Graph():
        x = bv.input([1.0, -2.0, 0.5])
        with pytest.raises(TypeError, match=r"got ndarray \(wrap data with bv.input"):
            combine(np.ones(3), x)


@pytest.mark.parametrize("call, message", [
    (lambda x: np.tanh(x), r"np.tanh does not work on a batchviz expression .*use bv.tanh\(x\)"),
    (lambda x: np.exp(x), r"np.exp does not .*use bv.exp\(x\)"),
    (lambda x: np.maximum(x, 0), r"np.maximum does not .*use bv.relu\(x\) for np.maximum\(x, 0\)"),
    (lambda x: np.power(x, 2), r"np.power does not .*write it with batchviz's ops"),
    (lambda x: np.add.reduce(x), r"np.add.reduce does not work on a batchviz expression"),
    (lambda x: np.float64(2.0) / x, r"unsupported operand types for np.divide: float64 and"),
], ids=["tanh", "exp", "maximum", "power", "reduce", "divide-by"])
def test_numpy_functions_name_the_batchviz_function(call, message):
    """``np.tanh(x)`` cannot build a node; the error says what does."""
    with bv.Graph():
        x = bv.input([1.0, -2.0, 0.5])
        with pytest.raises(TypeError, match=message):
            call(x)


def test_a_numpy_array_cannot_take_an_expression_in_place():
    with bv.Graph():
        x = bv.input([1.0, -2.0, 0.5])
        data = np.ones(3)
        with pytest.raises(TypeError, match=r"np.add\(\.\.\., out=\.\.\.\) cannot take a "
                                            r"batchviz expression.*bv.input"):
            data += x
        np.testing.assert_array_equal(data, np.ones(3))


def test_expression_inspection_and_values():
    """What an expression tells without computing, and the forms of its value."""
    with bv.Graph() as g:
        x = bv.input([[1.0, 2.0], [3.0, 4.0]])
        total = bv.sum_elems(x)
        assert x.shape == x.dim() == (2, 2) and x.op == "input"
        assert repr(total) == f"<Expression node {total.node}: sum_elems {total.shape}>"
        assert g.n_evaluated == 0                      # none of that ran anything
        assert total.forward() == total.value() == total.scalar_value() == 10.0
        assert isinstance(total.value(), float)
        assert bv.pick(bv.input([5.0]), 0).scalar_value() == 5.0
        v = x.npvalue()
        v[0, 0] = 99.0                                 # a copy: the graph keeps its value
        assert x.value()[0, 0] == 1.0
        with pytest.raises(bv.BatchvizError, match=r"scalar_value\(\) of an expression of shape \(2, 2\)"):
            x.scalar_value()


def test_last_run_stats_count_the_run_and_read_as_a_sentence():
    """The counters a run leaves (the README prints them): three sequences of the Figure 1
    RNN, forward and backward, as a dict and as one line."""
    model = bv.Model(seed=0)
    W = model.add_parameters((4, 4))
    with bv.Graph(strategy="agenda") as g:
        losses = []
        for length in (2, 3, 4):
            h = bv.zeros(4)
            for _ in range(length):
                h = bv.tanh(W @ h)
            losses.append(bv.sum_elems(h))
        loss = bv.esum(losses)
        loss.value()
        loss.backward()
        stats = bv.last_run_stats()
        assert stats is g.last_stats
        d = stats.to_dict()
        forward = d["forward"]
        assert d["strategy"] == "agenda"
        assert forward["nodes"] == len(g.ops) - 1                   # all but W's node
        assert forward["batches"] == len(g.layout.batches)
        assert forward["kernels"] == forward["batches"] + forward["copies"]
        assert d["backward"]["batches"] > 0
        line = str(stats)
        assert line.startswith(f"strategy agenda: forward {counted(forward['nodes'], 'node')} in "
                               f"{counted(forward['batches'], 'batch')}, "
                               f"{counted(forward['copies'], 'copy')}")
        assert line.endswith(f"backward {counted(d['backward']['batches'], 'batch')}, "
                             f"{counted(d['backward']['copies'], 'scatter')}")


def test_counts_read_in_words():
    assert [counted(1, "node"), counted(3, "node"), counted(1, "batch"), counted(2, "batch"),
            counted(2, "copy"), counted(0, "box")] == [
        "1 node", "3 nodes", "1 batch", "2 batches", "2 copies", "0 boxes"]


def test_parameter_values_are_copies_and_dtype_switch():
    model = bv.Model(seed=0)
    W = model.add_parameters((2, 2))
    v = W.value()
    v[:] = 100.0
    assert not np.any(W.value() == 100.0)
    assert W.value().dtype == np.float32
    bv.set_dtype(np.float64)
    assert W.value().dtype == np.float64
    with bv.Graph():
        assert (W @ bv.input([1.0, 1.0])).npvalue().dtype == np.float64


def test_input_is_copied_at_construction():
    data = np.ones(3)
    with bv.Graph():
        x = bv.input(data)
        data[:] = 5.0   # changing the array afterwards must not change the graph
        np.testing.assert_allclose(x.value(), np.ones(3))


def test_gradients_accumulate_until_zero_grad():
    model = bv.Model(seed=0)
    p = model.add_parameters(3)
    for _ in range(2):
        with bv.Graph():
            bv.sum_elems(p * 1.0).backward()
    np.testing.assert_allclose(p.grad, 2 * np.ones(3))
    model.zero_grad()
    np.testing.assert_allclose(p.grad, np.zeros(3))


def test_dropout_is_reproducible_and_independent_of_batching(float64):
    values = {}
    for strategy in ("none", "agenda"):
        with bv.Graph(strategy=strategy):
            xs = [bv.dropout(bv.input(np.ones(50)), 0.5, seed=s) for s in range(4)]
            values[strategy] = [x.value() for x in xs]
    for a, b in zip(values["none"], values["agenda"]):
        np.testing.assert_array_equal(a, b)
    kept = np.concatenate(values["none"])
    assert set(np.unique(kept)) == {0.0, 2.0}
    assert 0.3 < (kept == 0).mean() < 0.7


def test_sums_of_any_number_of_terms_run_as_one_batch(float64):
    """A sum is element-wise: its signature names its shape, not its number of terms, so the
    losses of sentences of three lengths add up in one batch (the kernel adds each node's
    run of rows), with the values and gradients of running every sum on its own."""
    model = bv.Model(seed=0)
    W = model.add_parameters((2, 2), init="normal")
    lengths = (3, 5, 2)

    def run(strategy):
        model.zero_grad()
        with bv.Graph(strategy=strategy) as g:
            sums = []
            for n in lengths:
                terms = [bv.sum_elems(bv.tanh(W @ bv.input(np.full(2, 0.1 * (k + 1)))))
                         for k in range(n)]
                sums.append(bv.average(terms) if n == 5 else bv.esum(terms))
            loss = bv.esum([s * (i + 1.0) for i, s in enumerate(sums)])
            value = loss.value()
            loss.backward()
            esums = [r for r in g.layout.batches if r.op.name == "esum" and len(r.nodes) > 1]
        return value, W.grad.copy(), esums

    value, grad, _ = run("none")
    for strategy in ("depth", "agenda"):
        v, gr, esums = run(strategy)
        assert v == pytest.approx(value, rel=1e-12)
        np.testing.assert_allclose(gr, grad, rtol=1e-12)
    assert [r.counts for r in esums] == [[3, 2]]  # agenda: both esums in one batch


def test_segment_sums_without_reduceat_add_the_same_runs():
    """CuPy's path of segment_sums (the rows scattered onto their run's sum, no reduceat),
    run on NumPy, against NumPy's reduceat."""
    from batchviz.backend import _segment_sums_by_scatter, segment_sums

    rng = np.random.default_rng(0)
    rows = rng.normal(size=(9, 4))
    counts = [3, 1, 5]
    expected = np.stack([rows[:3].sum(0), rows[3], rows[4:].sum(0)])
    np.testing.assert_allclose(segment_sums(np, rows, counts), expected, rtol=1e-12)
    np.testing.assert_allclose(_segment_sums_by_scatter(np, rows, counts), expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["esum", "average"])
def test_a_sums_kernels_agree(name):
    """A sum's kernel by argument positions (the op's definition), over the ``(n, k, size)``
    block (every node with k terms) and over rows (nodes of different numbers of terms)
    give the same values and gradients."""
    from batchviz.ops.base import REGISTRY

    op = REGISTRY[name]
    rng = np.random.default_rng(1)
    block = rng.normal(size=(2, 3, 4))
    g = rng.normal(size=(2, 4))
    by_position = op.forward(np, [block[:, j] for j in range(3)], [None] * 2, 2)
    np.testing.assert_allclose(op.forward_together(np, block, [None] * 2, 2), by_position)
    np.testing.assert_allclose(op.forward_segments(np, block.reshape(6, 4), [3, 3], [None] * 2, 2),
                               by_position)
    grads = op.backward(np, [block[:, j] for j in range(3)], by_position, g, [None] * 2, 2,
                        [True] * 3)
    expected = np.stack(grads, axis=1)
    np.testing.assert_allclose(op.backward_together(np, block, by_position, g, [None] * 2, 2),
                               expected)
    np.testing.assert_allclose(op.backward_segments(np, block.reshape(6, 4), [3, 3],
                                                    by_position, g, [None] * 2, 2),
                               expected.reshape(6, 4))
    rows = rng.normal(size=(5, 4))  # two nodes, of 2 and of 3 terms
    sums = np.stack([rows[:2].sum(0), rows[2:].sum(0)])
    if name == "average":
        sums /= np.array([[2.0], [3.0]])
    np.testing.assert_allclose(op.forward_segments(np, rows, [2, 3], [None] * 2, 2), sums)


def _trees_after_a_revert(tried: bool) -> tuple:
    """Tree-LSTM encodings (whose unit builders learn a graph's units once) and LSTM
    sequences built after other ones were tried out and reverted, or never tried: the
    graph's nodes and the values and gradients."""
    from batchviz.data import synthetic_trees
    from batchviz.nn import LSTMBuilder, TreeLSTMCell

    model = bv.Model(seed=0)
    cell, lstm = TreeLSTMCell(model, 5, 4), LSTMBuilder(1, 5, 4, model)
    E, U = model.add_lookup_parameters((30, 5)), model.add_parameters((2, 4))
    first, second = synthetic_trees(2, min_leaves=3, max_leaves=6, vocab_size=30, seed=4)
    with bv.Graph(strategy="agenda") as g:
        start = E[0] * 1.0
        start.value()
        if tried:
            g.checkpoint()           # the parameters enter the graph after the mark
            states = cell.encode(first, lambda word: E[sum(map(ord, word)) % 30])
            tried_h = lstm.initial_state().transduce([E[1], E[2], start])
            bv.esum([U @ states[-1][1], U @ tried_h[-1]]).value()
            assert g.revert() > 30 and len(g) == 3   # E, its row, start
        states = cell.encode(second, lambda word: E[sum(map(ord, word)) % 30])
        hs = lstm.initial_state().transduce([E[3], start, E[4]])
        loss = bv.sum_elems(U @ states[-1][1]) + bv.sum_elems(U @ hs[-1])
        loss.backward()
        nodes = [[op.name for op in g.ops], list(g.args), list(g.shapes), list(g.sigs),
                 [a if isinstance(a, (int, tuple, type(None))) else repr(a) for a in g.attrs]]
        return nodes, [loss.value()] + [p.grad for p in model.parameters()]


def test_a_graph_reverted_to_its_checkpoint_builds_and_runs_as_if_never_cut():
    nodes, results = _trees_after_a_revert(tried=True)
    fresh_nodes, fresh = _trees_after_a_revert(tried=False)
    assert nodes == fresh_nodes
    for a, b in zip(results, fresh):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_revert_needs_a_checkpoint_and_a_live_graph():
    with bv.Graph() as g:
        with pytest.raises(bv.BatchvizError, match="no checkpoint to go back to"):
            g.revert()
        assert g.checkpoint() == 0
    assert g.checkpoints == []     # a finished graph forgets its marks
    with pytest.raises(bv.GraphFinishedError):
        g.revert()
