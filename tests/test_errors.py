"""Bad input gets a clear error, naming what was wrong, raised while the user's line runs."""
import re
import traceback

import numpy as np
import pytest

import batchviz as bv
from batchviz import nn
from batchviz.schedule import STRATEGIES, AgendaBatching, DepthBatching


def raised_at_this_file(excinfo):
    frames = traceback.extract_tb(excinfo.tb)
    return any(f.filename == __file__ for f in frames)


def test_shape_mismatch_names_op_and_both_shapes():
    model = bv.Model()
    W = model.add_parameters((4, 5))
    with bv.Graph():
        x = bv.zeros(3)
        with pytest.raises(bv.ShapeError) as excinfo:
            W @ x  # the user's line
    message = str(excinfo.value)
    assert "matmul" in message and "(4, 5)" in message and "(3,)" in message
    assert raised_at_this_file(excinfo)
    assert str(excinfo.traceback[-1].path) != __file__  # raised inside batchviz, shown at our line


def test_elementwise_shape_mismatch():
    with bv.Graph():
        with pytest.raises(bv.ShapeError, match=r"add: .*\(3,\) and \(4,\)"):
            bv.zeros(3) + bv.zeros(4)


def test_expression_of_finished_graph():
    with bv.Graph():
        x = bv.zeros(3)
    with pytest.raises(bv.GraphFinishedError, match="finished when its `with bv.Graph"):
        bv.tanh(x)
    with pytest.raises(bv.GraphFinishedError):
        x.value()


def test_new_graph_finishes_the_previous_one():
    bv.new_graph()
    x = bv.zeros(2)
    bv.new_graph()
    with pytest.raises(bv.GraphFinishedError, match="bv.new_graph"):
        x + x


def test_mixing_graphs():
    g1, g2 = bv.Graph(), bv.Graph()
    from batchviz.graph import graph_scope
    with graph_scope(g1):
        a = bv.zeros(2)
    with graph_scope(g2):
        b = bv.zeros(2)
    with pytest.raises(bv.GraphMismatchError, match="graph #"):
        a + b


def test_backward_on_non_scalar():
    with bv.Graph():
        x = bv.tanh(bv.input(np.ones(3)))
        with pytest.raises(bv.BatchvizError, match=r"scalar loss.*shape \(3,\).*sum_elems"):
            x.backward()


def test_lookup_index_out_of_range():
    model = bv.Model()
    E = model.add_lookup_parameters((10, 4), name="E")
    with bv.Graph():
        with pytest.raises(IndexError, match=r"lookup index 10 .* E, which has 10 rows"):
            E[10]
        with pytest.raises(IndexError):
            bv.lookup(E, -1)


def test_unknown_strategy_lists_valid_ones():
    with pytest.raises(ValueError, match=r"unknown strategy 'agneda'.*'none'.*'depth'.*'agenda'"):
        bv.Graph(strategy="agneda")


@pytest.fixture
def registry():
    """The strategy registry, put back as it was after the test."""
    saved = dict(STRATEGIES)
    yield STRATEGIES
    STRATEGIES.clear()
    STRATEGIES.update(saved)


class Reversed(bv.Strategy):
    """A student's strategy (it schedules as depth batching does)."""
    name = "agenda"  # the mistake: the built-in's name

    def schedule(self, view):
        return DepthBatching().schedule(view)


def test_register_strategy_refuses_a_built_in_name_unless_replacing(registry):
    with pytest.raises(ValueError, match=r"'agenda' is the name of a built-in strategy.*"
                                         r"another name, or pass replace=True"):
        bv.register_strategy(Reversed)
    assert type(bv.Graph(strategy="agenda").strategy) is AgendaBatching
    assert bv.register_strategy(Reversed, "reversed") is Reversed
    assert type(bv.Graph(strategy="reversed").strategy) is Reversed
    bv.register_strategy(Reversed, replace=True)
    assert type(bv.Graph(strategy="agenda").strategy) is Reversed


def test_register_strategy_as_a_decorator_and_again_for_a_rerun_cell(registry):
    for _ in range(2):  # a notebook cell run twice registers its own name twice
        @bv.register_strategy
        class Mine(bv.Strategy):
            name = "mine"

            def schedule(self, view):
                return DepthBatching().schedule(view)
        assert type(bv.Graph(strategy="mine").strategy) is Mine


def test_register_strategy_with_swapped_arguments_says_which_is_which(registry):
    with pytest.raises(TypeError, match=r"takes the strategy first and its name second; got "
                                        r"the string 'drop' first and the class Reversed second: "
                                        r"call register_strategy\(Reversed, 'drop'\)"):
        bv.register_strategy("drop", Reversed)
    with pytest.raises(ValueError) as excinfo:
        bv.Graph(strategy="drop")
    message = str(excinfo.value)
    assert "valid strategies are 'none', 'depth', 'agenda', 'lookahead', 'layout' (" in message
    assert "<class" not in message


@pytest.mark.parametrize("args, message", [
    ((object,), "the class object does not subclass bv.Strategy"),
    ((bv.Strategy, "plain"), "the class Strategy defines no schedule"),
    ((3, "three"), "int 3 has no schedule"),
    ((Reversed, 3), "name must be a non-empty string, got int 3"),
    ((Reversed, ""), "name must be a non-empty string"),
    ((type("Nameless", (DepthBatching,), {"name": "?"}),), "the class Nameless has no name"),
])
def test_register_strategy_checks_its_arguments(registry, args, message):
    before = dict(registry)
    with pytest.raises(TypeError, match=re.escape(message)):
        bv.register_strategy(*args)
    assert registry == before


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input(bad):
    with bv.Graph():
        with pytest.raises(ValueError, match=r"NaN or infinity.*index \(1,\)"):
            bv.input(np.array([0.0, bad, 1.0]))


@pytest.mark.parametrize("data, message", [
    (np.array(["a", "b"]), "bv.input needs numbers, got an array of <U1"),
    (["a", 1.0], "bv.input needs a number or an array of numbers, got list"),
    (None, "bv.input needs a number or an array of numbers, got None"),
    ([[1.0, 2.0], [3.0]], "bv.input needs a number or an array of numbers, got list"),
], ids=["strings", "mixed-list", "none", "ragged"])
def test_input_that_is_not_numbers(data, message):
    with bv.Graph():
        with pytest.raises(TypeError, match=re.escape(message)):
            bv.input(data)


def _model():
    model = bv.Model(seed=0)
    return model, model.add_lookup_parameters((5, 2)), model.add_parameters((3, 2))


@pytest.mark.parametrize("build, error, message", [
    (lambda E, W: bv.zeros((0, 2)), ValueError, "bv.zeros: dimensions must be positive, got (0, 2)"),
    (lambda E, W: bv.lookup(E, 1.5), TypeError, "lookup index into E0 must be an int, got float"),
    (lambda E, W: bv.lookup(W, 1), TypeError, "bv.lookup needs lookup parameters, got Parameters"),
    (lambda E, W: bv.concatenate([bv.input(1.0), bv.input(2.0)]), bv.ShapeError,
     "cannot concatenate scalars; make them vectors with bv.reshape(x, (1,))"),
    (lambda E, W: bv.concatenate([]), ValueError, "concatenate: needs at least one expression"),
    (lambda E, W: bv.concatenate(bv.zeros(3)), TypeError,
     "concatenate: needs a list of expressions, got a single Expression; put it in a list"),
    (lambda E, W: bv.esum(bv.zeros(3)), TypeError, "esum: needs a list of expressions, got a "
     "single Expression; put it in a list (bv.sum_elems works on the elements of one expression)"),
    (lambda E, W: bv.average(W), TypeError, "average: needs a list of expressions, got a single "
     "Parameters; put it in a list (bv.mean_elems works on the elements of one expression)"),
    (lambda E, W: bv.affine_transform([]), ValueError, "affine_transform: needs at least one expression"),
    (lambda E, W: bv.pick(bv.input(1.0), 0), bv.ShapeError, "pick: cannot pick from a scalar"),
    (lambda E, W: bv.reshape(bv.zeros(6), (4,)), bv.ShapeError,
     "cannot reshape (6,) into (4,): sizes differ"),
    (lambda E, W: bv.reshape(bv.zeros(6), (4, -1)), bv.ShapeError,
     "cannot reshape (6,) into (4, -1): one dimension may be -1, and the others must divide"),
    (lambda E, W: bv.reshape(bv.zeros(6), (0, 6)), bv.ShapeError,
     "reshape: dimensions must be positive (one may be -1), got (0, 6)"),
    (lambda E, W: bv.transpose(bv.zeros((2, 2, 2))), bv.ShapeError,
     "transpose: needs a vector or a matrix, got shape (2, 2, 2)"),
    (lambda E, W: bv.pickneglogsoftmax(bv.zeros((2, 2)), 0), bv.ShapeError,
     "pickneglogsoftmax: needs a vector, got shape (2, 2)"),
    (lambda E, W: bv.pickneglogsoftmax(bv.zeros(3), 1.0), TypeError,
     "pickneglogsoftmax: index must be an int, got float"),
    (lambda E, W: bv.dropout(bv.zeros(3), 1.0), ValueError, "dropout: p must be in [0, 1), got 1.0"),
    (lambda E, W: bv.lookup_batch(E, [1, 2.5]), TypeError, "lookup_batch: indices must be ints, got float"),
    (lambda E, W: bv.lookup_batch(E, []), ValueError, "lookup_batch: needs at least one index"),
    (lambda E, W: bv.lookup_batch(W, [1]), TypeError, "lookup_batch needs lookup parameters, got Parameters"),
    (lambda E, W: bv.pickneglogsoftmax_batch(bv.zeros(3), [0]), bv.ShapeError,
     "pickneglogsoftmax_batch: needs a (classes, m) matrix, got shape (3,)"),
], ids=["zeros", "lookup-float", "lookup-dense", "concat-scalars", "concat-empty", "concat-one",
        "esum-one", "average-parameter", "affine-empty", "pick-scalar",
        "reshape", "reshape-minus-one", "reshape-zero", "transpose", "loss-matrix", "loss-index", "dropout", "lookup_batch-float",
        "lookup_batch-empty", "lookup_batch-dense", "loss_batch-vector"])
def test_op_errors_name_what_was_wrong(build, error, message):
    _, E, W = _model()
    with bv.Graph():
        with pytest.raises(error, match=re.escape(message)) as excinfo:
            build(E, W)
    assert raised_at_this_file(excinfo)


@pytest.mark.parametrize("build, message", [
    (lambda m: nn.SGDTrainer(m, clip_threshold=0), "clip_threshold must be positive or None, got 0"),
    (lambda m: nn.SGDTrainer(m, decay=-1), "decay must be >= 0, got -1"),
    (lambda m: nn.AdamTrainer(m, beta1=1.0), "betas must be in [0, 1), got 1.0, 0.999"),
    (lambda m: nn.LSTMBuilder(0, 3, 4, m), "an LSTM needs at least one layer, got 0"),
    (lambda m: nn.LSTMBuilder(1, 3, 0, m), "hidden_dim must be positive, got 0"),
    (lambda m: nn.LSTMBuilder(1, 0, 4, m), "input dimensions must be positive, got 0"),
    (lambda m: nn.BiLSTMBuilder(0, 3, 4, m), "a BiLSTM needs at least one layer, got 0"),
    (lambda m: nn.BiLSTMBuilder(1, 3, 4, m).transduce([]), "BiLSTM.transduce: needs at least one input"),
    (lambda m: nn.TreeLSTMCell(m, 0, 4), "dimensions must be positive, got input 0, hidden 4"),
    (lambda m: nn.CharBiLSTMEmbedder(m, 0), "n_chars must be positive, got 0"),
], ids=["clip", "decay", "betas", "lstm-layers", "lstm-hidden", "lstm-input", "bilstm-layers",
        "bilstm-empty", "tree-dims", "char-n"])
def test_builder_and_trainer_errors_name_what_was_wrong(build, message):
    model = bv.Model(seed=0)
    with bv.Graph():
        with pytest.raises(ValueError, match=re.escape(message)):
            build(model)


def test_non_numeric_argument_suggests_input():
    with bv.Graph():
        with pytest.raises(TypeError, match=r"bv.input"):
            bv.tanh(np.ones(3))


def test_invalid_user_schedule_is_caught_before_running():
    class Backwards(bv.Strategy):
        name = "backwards"

        def schedule(self, view):
            return [[i] for i in reversed(view.nodes)]

    with bv.Graph(strategy=Backwards()):
        loss = bv.sum_elems(bv.tanh(bv.zeros(3)))
        with pytest.raises(bv.ScheduleError, match="arguments must run in an earlier batch"):
            loss.value()


def test_mixed_signature_batch_is_caught():
    class Lump(bv.Strategy):
        name = "lump"

        def schedule(self, view):
            return [list(view.nodes)]

    with bv.Graph(strategy=Lump()):
        loss = bv.sum_elems(bv.tanh(bv.zeros(3)))
        with pytest.raises(bv.ScheduleError, match="mixes signatures"):
            loss.value()


def test_cupy_backend_missing_is_explained():
    try:
        import cupy  # noqa: F401  (only whether it imports matters)
        pytest.skip("CuPy is installed here")
    except Exception:
        pass
    with pytest.raises(bv.BackendError, match=r"pip install batchviz\[gpu\]"):
        bv.set_backend("cupy")
    assert bv.get_backend() == "numpy"


def test_unknown_backend_and_dtype():
    with pytest.raises(ValueError, match="valid backends are numpy, cupy"):
        bv.set_backend("tpu")
    with pytest.raises(ValueError, match="float32 or float64"):
        bv.set_dtype(np.int32)


def test_bad_pick_range_and_concatenate():
    with bv.Graph():
        x = bv.zeros(4)
        with pytest.raises(bv.ShapeError, match=r"range 2:9 is not inside"):
            x[2:9]
        with pytest.raises(bv.ShapeError, match=r"range -7:2 is not inside"):
            x[-7:2]
        with pytest.raises(bv.ShapeError, match=r"range 3:1 of shape \(4,\) is empty"):
            x[-1:1]
        with pytest.raises(bv.ShapeError, match=r"cannot take a range of a scalar"):
            bv.input(2.0)[0:1]
        with pytest.raises(bv.ShapeError, match="concatenate"):
            bv.concatenate([bv.zeros((2, 3)), bv.zeros((2, 4))])
        with pytest.raises(IndexError, match="pickneglogsoftmax: class 7"):
            bv.pickneglogsoftmax(x, 7)


def test_picks_and_numbers_are_checked_after_their_kind_is_memoized():
    """``pick``, ``scale`` and ``shift`` of an expression remember their shape and signature
    per graph (``Op.memo_key``); a bad index or number must still fail, at the user's line,
    after good ones of the same shape were built, on expressions and on parameters."""
    model = bv.Model()
    W = model.add_parameters((4,), name="w")
    with bv.Graph():
        x = bv.zeros(4)
        x[3], x[-4], x * 2.0, x + 1, W[2]
        with pytest.raises(IndexError, match=r"pick: index 4 is out of range for shape \(4,\)") as e:
            x[4]
        assert raised_at_this_file(e)
        with pytest.raises(IndexError, match="index -5"):
            x[-5]
        with pytest.raises(IndexError, match="index 4"):
            W[4]
        with pytest.raises(TypeError, match="pick: index must be an int, got float"):
            x[1.0]
        with pytest.raises(TypeError, match="shift: the factor must be a finite number, got nan"):
            x + float("nan")
        with pytest.raises(TypeError, match=r"scale: the factor must be a finite number, got .*inf"):
            x * np.float64("inf")
        assert x[np.int64(2)].value() == 0.0 and (x * np.float32(3) + 2).value().tolist() == [2.0] * 4


def test_an_output_layer_on_the_fast_path_is_the_node_the_checked_path_builds():
    """``affine_transform([b, W, x])`` with parameters the graph already holds takes a memo
    lookup instead of the general coercion: it must build the node the general path builds
    (arguments, shape, signature, depth), and a wrong shape, another graph's expression or a
    finished graph must still fail at the user's line."""
    from batchviz.ops._build import build
    from batchviz.ops.linalg import _AFFINE

    model = bv.Model(seed=0)
    W, b = model.add_parameters((3, 4)), model.add_parameters(3)
    W2 = model.add_parameters((3, 5))
    with bv.Graph() as g:
        h = bv.tanh(bv.input(np.ones(4)))
        first = bv.affine_transform([b, W, h])        # first use: the checked path
        x = bv.tanh(h)
        fast = bv.affine_transform([b, W, x])         # parameters held: the fast path
        checked = build(_AFFINE, (b, W, x))           # the general path, for comparison
        for node in (fast.node, checked.node):
            assert g.args[node] == (g.param_node[b], g.param_node[W], x.node)
            assert g.depths[node] == g.depths[x.node] + 1 and g.shapes[node] == (3,)
        assert g.sigs[fast.node] == g.sigs[first.node] == g.sigs[checked.node]
        other = bv.affine_transform([b, W2, bv.zeros(5)])  # another W: a kind of its own
        assert other.shape == (3,) and g.sigs[other.node] != g.sigs[fast.node]
        y = bv.zeros(5)  # two products, b + W x + W2 y, with y the deeper argument
        for terms in ([b, W, h, W2, y], [b, W, bv.tanh(x), W2, y], [b, W, x, W2 * 1.0, y]):
            fast, checked = bv.affine_transform(terms), build(_AFFINE, tuple(terms))
            assert g.args[fast.node][::2] == g.args[checked.node][::2]  # (b and the xs)
            for get in (g.sigs, g.shapes, g.depths):
                assert get[fast.node] == get[checked.node]
        assert g.depths[fast.node] == max(g.depths[x.node], g.depths[y.node]) + 1
        with pytest.raises(bv.ShapeError, match=r"cannot multiply shapes \(3, 4\) and \(5,\)") as e:
            bv.affine_transform([b, W, bv.zeros(5)])
        assert raised_at_this_file(e)
        with pytest.raises(TypeError, match="wrap data with bv.input"):
            bv.affine_transform([b, W, np.ones(4)])
        with bv.Graph():
            with pytest.raises(bv.GraphMismatchError, match="cannot combine"):
                bv.affine_transform([b, bv.zeros((3, 4)), h])
    with pytest.raises(bv.GraphFinishedError):
        bv.affine_transform([b, W, h])


def test_a_step_bias_must_be_a_vector_or_have_the_inputs_columns():
    """An lstm_step's bias is one per node when it is an input projection: a vector, or a
    matrix with the inputs' columns. Any other shape is named at the user's line."""
    model = bv.Model()
    Wh = model.add_parameters((8, 2))
    with bv.Graph():
        h = bv.zeros((2, 3))                                 # 3 columns
        with pytest.raises(bv.ShapeError) as excinfo:
            bv.lstm_step([bv.zeros((8, 4)), Wh, h], [h], 2)  # a bias of 4 columns
        assert "bias" in str(excinfo.value) and "(8, 4)" in str(excinfo.value)
        assert raised_at_this_file(excinfo)
        with pytest.raises(ValueError, match="2 weight matrices but 1 inputs"):
            bv.sequence_step(model.add_parameters((8,)), [Wh, Wh], Wh, [h], h, h, 2)


@pytest.mark.parametrize("make, message", [
    (lambda m: m.add_parameters(3, init="xavier"), "unknown initializer 'xavier'; use 'glorot'"),
    (lambda m: m.add_parameters(3, init=[1.0, 2.0]), r"initial values have shape \(2,\), expected \(3,\)"),
    (lambda m: m.add_parameters(3, init=[1.0, np.inf, 2.0]), "initial values contain NaN or infinity"),
    (lambda m: m.add_parameters(2, init=float("nan")), "initial values contain NaN or infinity"),
    (lambda m: m.add_parameters((0, 3)), r"positive dimensions, got \(0, 3\)"),
    (lambda m: m.add_lookup_parameters((4, 2, 2)), r"lookup parameters need a shape \(rows, dim\)"),
    (lambda m: [m.add_parameters(2, name="W"), m.add_parameters(2, name="W")],
     "a parameter named 'W' already exists"),
    (lambda m: m.add_parameters((2, 2)).set_value(np.ones(3)), r"new values have shape \(3,\), expected \(2, 2\)"),
    (lambda m: m.add_parameters(2).set_value([0.0, np.nan]), "new values contain NaN or infinity"),
], ids=["initializer", "init-shape", "init-inf", "init-nan", "shape", "lookup-shape", "name",
        "set-shape", "set-nan"])
def test_model_errors_name_what_was_wrong(make, message):
    model = bv.Model(seed=0)
    with pytest.raises(ValueError, match=message):
        make(model)
    assert all(np.all(np.isfinite(p.value())) for p in model.parameters())
