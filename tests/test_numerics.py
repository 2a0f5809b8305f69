"""Never silent: ``bv.check_numerics()`` and ``bv.Graph(check_numerics=True)`` stop at the
first batch that makes NaN or infinity, forward or backward, and name its op, node, batch and
the user's line; unchecked, a run warns at the user's line instead of letting NumPy point into
batchviz's kernels; training's guard names the node; and with the check off the executor
never calls it."""
import inspect
import warnings
from pathlib import Path

import numpy as np
import pytest

import batchviz as bv
from batchviz.execute import numerics
from batchviz.nn import SGDTrainer, train

from helpers import STRATEGIES, warns_on_numpy

HERE = Path(__file__).name


def here() -> int:
    """The line of the caller: where a test builds the node an error must name."""
    return inspect.currentframe().f_back.f_lineno


@pytest.fixture
def model():
    """A model and its one parameter ``W`` (3 x 3)."""
    m = bv.Model(seed=0)
    return m, m.add_parameters((3, 3), name="W")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_forward_nan_log_of_a_negative(strategy):
    with bv.check_numerics(), bv.Graph(strategy) as graph:
        x = bv.input(np.array([2.0, 3.0, 4.0]))
        healthy = bv.log(x)                                  # finite: log of positives
        bad, line = bv.log(bv.neg(x) + 1.0), here()          # log(-1), log(-2), log(-3)
        loss = bv.sum_elems(healthy) + bv.sum_elems(bad)
        with pytest.raises(bv.NumericsError) as caught:
            loss.value()
    e = caught.value
    assert isinstance(e, FloatingPointError)
    assert (e.pass_, e.op, e.node, e.signature, e.source) == (
        "forward", "log", bad.node, "log", f"{__file__}:{line}")
    assert e.batch == graph.layout.batch_of[bad.node]
    text = str(e)
    assert text.startswith(f"the forward pass made NaN at node #{bad.node}: op `log`")
    assert f"built at {HERE}:{line}" in text
    assert "its arguments: #" in text and "from -3 to -1" in text  # what log was given


def test_forward_infinity_exp_overflow_as_a_graph_option():
    with bv.Graph(check_numerics=True) as graph:
        assert graph.sources == []  # the check records lines, so that errors can name them
        big, line = bv.exp(bv.input(np.array([1.0, 1000.0, 2.0]))), here()
        with pytest.raises(bv.NumericsError) as caught:
            bv.sum_elems(big).value()
    e = caught.value
    assert (e.pass_, e.op, e.node, e.source) == ("forward", "exp", big.node, f"{__file__}:{line}")
    assert str(e).startswith(f"the forward pass made +infinity at node #{big.node}: op `exp`")


def test_backward_infinity_sqrt_at_zero(model):
    _, W = model
    with bv.check_numerics(), bv.Graph() as graph:
        h = W @ bv.input(np.array([1.0, 2.0, 3.0]))
        zero = bv.cmult(h, bv.input(np.zeros(3)))              # exactly 0, and depends on W
        root, line = bv.sqrt(zero), here()                     # sqrt(0) = 0: fine forward
        loss = bv.sum_elems(root)
        assert loss.value() == 0.0
        with pytest.raises(bv.NumericsError) as caught:
            loss.backward()                                     # d sqrt(x)/dx = 1/(2 sqrt(0))
    e = caught.value
    assert (e.pass_, e.op, e.node, e.source) == ("backward", "sqrt", root.node, f"{__file__}:{line}")
    assert "infinity in the gradient of argument 0 of node" in str(e)
    assert f"built at {HERE}:{line}" in str(e)
    assert e.batch == graph.layout.batch_of[root.node]


@pytest.mark.skipif(bv.get_backend() != "numpy",
                    reason="CuPy's kernels report no floating-point errors to warn about")
def test_unchecked_runs_warn_at_the_users_line_not_in_batchviz():
    with bv.Graph() as graph, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = bv.sum_elems(bv.log(bv.input(np.array([-1.0, 1.0]))))
        value, line = loss.value(), here()
    assert np.isnan(value)
    assert graph.sources is None  # nothing recorded, nothing checked
    assert [(w.category, Path(w.filename).name, w.lineno) for w in caught] == [
        (bv.NumericsWarning, HERE, line)]
    assert "bv.check_numerics()" in str(caught[0].message)
    assert not any("/batchviz/" in w.filename for w in caught)


def test_no_check_no_call(monkeypatch, model):
    """With the check off the executor never calls it; on, once per batch and pass."""
    calls = []
    for name in ("check_forward", "check_backward", "check_parameters"):
        monkeypatch.setattr(numerics, name, lambda *a, name=name: calls.append(name))
    _, W = model

    def run(**options):
        with bv.Graph(**options) as graph:
            xs = [bv.input(np.full(3, k, dtype=float)) for k in range(4)]
            loss = bv.esum([bv.sum_elems(bv.tanh(W @ x)) for x in xs])
            loss.value()
            loss.backward()
            return graph

    run()
    assert calls == []
    graph = run(check_numerics=True)
    batches = len(graph.layout.batches)
    assert calls.count("check_forward") == batches
    assert 0 < calls.count("check_backward") <= batches and calls.count("check_parameters") == 1


def test_training_names_the_first_node_that_was_not_finite(model):
    m, W = model
    data = [np.array([1.0, 2.0, 3.0]), np.array([-1.0, -2.0, -3.0])]

    def loss_fn(x):
        return bv.sum_elems(bv.log(W @ bv.input(x) * 0.0 + bv.input(x)))  # log(x): NaN for x < 0

    with warns_on_numpy(bv.NumericsWarning), \
            pytest.raises(bv.NumericsError, match=r"minibatch 2 of epoch 1 is nan.*first node "
                          r"that was not finite: the forward pass made NaN at node #\d+: op `log`"):
        train(loss_fn, data, SGDTrainer(m), batch_size=1, shuffle=False, progress=False)
    with bv.check_numerics(), pytest.raises(bv.NumericsError) as caught:
        train(loss_fn, data, SGDTrainer(m), batch_size=1, shuffle=False, progress=False)
    assert caught.value.op == "log" and caught.value.source.endswith(
        f"{HERE}:{inspect.getsourcelines(loss_fn)[1] + 1}")


def test_backward_overflow_in_a_shared_weights_summed_gradient(model):
    """Each batch's share of ``W``'s gradient is finite; their sum, made once at the end of
    the backward pass (one product over every use of ``W``), overflows float32."""
    _, W = model
    W.set_value(np.full((3, 3), 1e-3))
    big = np.array([3e38, 0.0, 0.0])                       # float32's largest is 3.4e38
    with bv.Graph(check_numerics=True) as graph:
        loss = bv.pick(W @ bv.input(big), 0) + bv.pick(W @ bv.input(big), 0)
        assert np.isfinite(loss.value())                    # 2 x 3e35: fine forward
        with pytest.raises(bv.NumericsError, match=r"backward pass made NaN or infinity in the "
                           r"gradient of parameter W \(#\d+\), summed over the batches") as caught:
            loss.backward()
    assert caught.value.node == graph.param_node[W] and caught.value.pass_ == "backward"


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_run_that_stopped_leaves_the_graph_usable(strategy):
    """A forward run stopped by the check keeps its plan for the error's batch number to
    point into, and ran nothing that a later run reads: asked again, the graph stops at
    the same node of the same batch; reverted to before the bad node, it runs and
    backpropagates as a graph that never failed."""
    with bv.check_numerics(), bv.Graph(strategy) as graph:
        x = bv.input(np.array([2.0, 3.0, 4.0]))
        healthy = bv.tanh(x)
        graph.checkpoint()
        bad = bv.sum_elems(bv.log(bv.neg(healthy)))
        errors = []
        for _ in range(2):
            with pytest.raises(bv.NumericsError) as caught:
                bad.value()
            errors.append((caught.value.node, caught.value.batch, str(caught.value)))
            assert graph.layout.batch_of[caught.value.node] == caught.value.batch
        assert errors[0] == errors[1]
        graph.revert()
        loss = bv.sum_elems(healthy * healthy)
        assert loss.value() == pytest.approx(float((np.tanh([2.0, 3.0, 4.0]) ** 2).sum()))
        loss.backward()
        assert len(graph.batch_runs) == len(graph.layout.batches)
