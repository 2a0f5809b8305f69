"""batchviz.dynet on its own (no real DyNet needed): settings and flags, graphs, errors,
uses that cannot have DyNet's meaning, files, dropout and random inputs, and how DyNet's minibatches batch and
are counted by batchviz."""
import importlib.util
import sys
import warnings
import zipfile

import numpy as np
import pytest

import batchviz as bv
import batchviz.dynet as dy
from batchviz.dynet import config, metafile
from batchviz.dynet.metafile import Global

from helpers import assert_central_differences, warns_on_numpy


@pytest.fixture(autouse=True)
def _settings_of_each_test(monkeypatch):
    """Every test reads the settings afresh, from no flags."""
    monkeypatch.setattr("sys.argv", ["prog.py"])
    monkeypatch.setattr(dy.graph.session, "settings", None)
    monkeypatch.setattr(config, "_given", {})


# --- settings -------------------------------------------------------------------------------
@pytest.mark.parametrize("argv, strategy", [
    ([], "none"),                                      # DyNet's default: no autobatching
    (["--dynet-autobatch", "1"], "agenda"),
    (["--dynet-autobatch=2"], "depth"),
    (["--dynet-autobatch", "0"], "none"),
    (["--dynet-autobatch", "lookahead"], "lookahead"),  # a batchviz strategy by name
    (["--dynet-seed", "4", "--dynet-mem", "2048", "--dynet_autobatch", "1"], "agenda"),
])
def test_autobatch_flags(argv, strategy):
    assert config.settings(["prog.py"] + argv)["strategy"] == strategy


@pytest.mark.parametrize("argv, gpus", [
    ([], 0), (["--dynet-gpus", "1"], 1), (["--dynet-gpu"], 1), (["--dynet-devices", "GPU:0"], 1),
    (["--dynet-devices", "CPU"], 0),
])
def test_gpu_flags(argv, gpus):
    """Asking DyNet for a GPU asks batchviz for CuPy (``config.use_device``)."""
    assert config.settings(["prog.py"] + argv)["gpus"] == gpus


def test_a_gpu_asked_for_without_cupy_says_which_flag_asked(monkeypatch):
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed: the program gets its GPU")
    monkeypatch.setattr("sys.argv", ["prog.py", "--dynet_gpus", "1"])
    with pytest.raises(bv.BackendError, match="the program asks for a GPU .*--dynet-gpus.*CuPy"):
        dy.renew_cg()


def test_devices_are_dynet_names_and_the_program_runs_on_one(monkeypatch):
    """Parameters and expressions placed on several devices run on the program's one
    device, with the same values; a warning names each device not used, once."""
    monkeypatch.setattr(config, "_ignored_devices", [])
    here = config.device_in_use()                   # CPU, or GPU:0 with BATCHVIZ_BACKEND=cupy
    pc = dy.ParameterCollection()
    with pytest.warns(UserWarning, match="add_parameters: device 'GPU:1' is not used; "
                                         f"batchviz.dynet runs every expression on one device, here {here}"):
        W = pc.add_parameters((2, 2), init=1.0, device="GPU:1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # the same device again: no warning
        pc.add_lookup_parameters((3, 2), device="GPU:1")
        dy.renew_cg()
        x = dy.inputVector([1.0, 2.0], device=here)   # the device in use: none either
    with pytest.warns(UserWarning, match="to_device: device 'GPU:2' is not used"):
        moved = dy.to_device(W * x, "GPU:2")
    assert moved.value() == [3.0, 3.0]
    dy.sum_elems(moved).backward()
    assert W.grad_as_array().tolist() == [[1.0, 2.0], [1.0, 2.0]]   # gradients flow through
    for bad in ("gpu0", "GPU", 3):
        with pytest.raises(ValueError, match="invalid device name .*DyNet's are 'CPU', 'GPU:0'"):
            dy.vecInput(2, bad)


def test_seed_flag_and_a_bad_autobatch_value():
    assert config.settings(["p", "--dynet-seed=17"])["seed"] == 17
    with pytest.raises(ValueError, match="--dynet-autobatch '7'"):
        config.settings(["p", "--dynet-autobatch", "7"])


def test_dynet_config_set_before_the_first_graph(monkeypatch):
    dy.dynet_config.set(autobatch=1, random_seed=3)
    assert dy.dynet_config.get()["autobatch"] == 1
    dy.renew_cg()
    assert dy.cg().graph.strategy.name == "agenda"
    monkeypatch.setattr("sys.argv", ["prog.py", "--dynet-autobatch", "2"])  # flags win
    assert config.settings()["strategy"] == "depth"


def test_renew_cg_autobatching_and_versions():
    g1 = dy.renew_cg()
    v = dy.cg_version()
    dy.renew_cg(autobatching=2)
    assert dy.cg_version() == v + 1 and dy.cg().graph.strategy.name == "depth"
    assert dy.cg().graph is bv.current_graph()   # batchviz's tools see the DyNet graph
    assert g1 is dy.cg()


def test_weight_decay_is_refused():
    with pytest.raises(NotImplementedError, match="weight_decay"):
        dy.dynet_config.set(weight_decay=1e-4)


def test_the_seed_makes_parameters_and_random_inputs_reproducible():
    def draw():
        dy.reset_random_seed(11)
        pc = dy.ParameterCollection()
        p = pc.add_parameters((3, 4))
        dy.renew_cg()
        return p.as_array(), dy.random_normal(5).npvalue(), dy.random_uniform(4, -1, 1).npvalue()

    first, second = draw(), draw()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


# --- expressions ------------------------------------------------------------------------------
def test_star_is_a_matrix_product_here_and_element_wise_in_batchviz():
    dy.renew_cg()
    W = dy.inputTensor(np.arange(6.0).reshape(2, 3))
    x = dy.inputVector([1.0, 2.0, 3.0])
    assert (W * x).value() == pytest.approx([8.0, 26.0])
    with bv.Graph():   # batchviz's own * is untouched
        a = bv.input([1.0, 2.0])
        assert (a * a).value().tolist() == [1.0, 4.0]


def test_numbers_on_the_left():
    """DyNet 2.1 on Python 3 refuses ``2 * x`` and ``1 - x``; here they work."""
    dy.renew_cg()
    x = dy.inputVector([1.0, 2.0])
    assert (2.0 * x).value() == [2.0, 4.0]
    assert (1 - x).value() == [0.0, -1.0]
    assert (3 + x).value() == [4.0, 5.0]


def test_stale_expressions_raise():
    dy.renew_cg()
    x = dy.inputVector([1.0, 2.0])
    dy.renew_cg()
    with pytest.raises(RuntimeError, match="finished"):
        dy.tanh(x).value()


@pytest.mark.parametrize("build, error, message", [
    (lambda: dy.inputTensor(np.ones((2, 3))) * dy.inputVector([1.0, 2.0]), ValueError,
     "mismatched dimensions"),
    (lambda: dy.cmult(dy.inputVector([1.0, 2.0]), dy.inputVector([1.0, 2.0, 3.0])), ValueError,
     "must match or be 1"),
    (lambda: dy.pickneglogsoftmax(dy.inputTensor(np.ones((3, 2)), batched=True), 1), ValueError,
     "minibatch of 2"),
    (lambda: dy.inputTensor(np.ones((3, 2)), batched=True).backward(), ValueError,
     "scalar nodes"),
    (lambda: dy.tanh([1.0, 2.0]), TypeError, "tanh: expected a dynet Expression"),
    (lambda: dy.binary_log_loss(dy.inputTensor(np.ones((3, 2)) / 2, batched=True),
                                dy.inputTensor(np.ones((3, 2)), batched=True)), ValueError,
     "minibatches"),
    (lambda: dy.inputVector([1.0, 2.0])[2], IndexError, "out of range"),
    (lambda: dy.fold_rows(dy.inputTensor(np.ones((4, 3)), batched=True)), ValueError,
     "first instance only"),
    (lambda: dy.fold_rows(dy.inputVector([1.0, 2.0, 3.0])), ValueError, "multiple of 2 rows"),
    (lambda: dy.moment_elems(dy.inputVector([1.0, 2.0]), 0), ValueError, "integer >= 1"),
    (lambda: dy.huber_distance(dy.inputVector([1.0, 2.0]), dy.inputVector([1.0])), ValueError,
     "same dimensions"),
    (lambda: dy.pairwise_rank_loss(dy.inputVector([1.0, 2.0]), dy.inputVector([1.0, 0.0])),
     ValueError, "rows"),
    (lambda: dy.poisson_loss(dy.scalarInput(0.5), 2.5), ValueError, "integer >= 0"),
    (lambda: dy.weight_norm(dy.inputVector([1.0, 2.0]), dy.inputVector([1.0, 2.0])),
     ValueError, "one number"),
    (lambda: dy.argmax(dy.inputVector([1.0, 2.0]), "zero"), ValueError, "gradient mode"),
    (lambda: dy.argmax(dy.inputTensor(np.ones((2, 2))), "zero_gradient"), ValueError,
     "needs a vector"),
])
def test_mistakes_are_reported_where_they_are_made(build, error, message):
    dy.renew_cg()
    with pytest.raises(error, match=message):
        build()


def test_dynets_value_holders_hold_values_and_init_from_params_applies_settings(monkeypatch):
    """DyNet's four value holders keep what they are given, converted as DyNet's C++ types
    would be; init_from_params applies a DynetParams; HAVE_CUDA says whether CuPy is there."""
    one, index = dy.FloatValue(2), dy.UnsignedValue(3.0)
    assert (one.get(), index.get()) == (2.0, 3) and type(index.get()) is int
    one.set(-1.5)
    assert one.get() == -1.5
    values, indices = dy.FloatVectorValue([1, 2]), dy.UnsignedVectorValue((4, 5, 6))
    indices.set([7])
    assert (values.get(), values.size(), indices.get(), indices.size()) == ([1.0, 2.0], 2, [7], 1)
    applied = {}
    monkeypatch.setattr(dy.dynet_config, "set", lambda **settings: applied.update(settings))
    params = dy.DynetParams()
    params.set_random_seed(5)
    params.set_autobatch(1)
    dy.init_from_params(params)
    assert applied == {"random_seed": 5, "autobatch": 1}
    assert dy.HAVE_CUDA == (importlib.util.find_spec("cupy") is not None)
    assert "CuPy" in dy.ERRMSG


def test_dynetparams_settings_reach_dynet_config(monkeypatch):
    applied = {}
    monkeypatch.setattr(dy.dynet_config, "set", lambda **settings: applied.update(settings))
    params = dy.DynetParams()
    params.from_config({"mem": "1024", "seed": 3, "autobatch": 1, "shared_params": True})
    params.set_gpu_mask([0, 1])
    params.init()
    assert applied == {"mem": "1024", "random_seed": 3, "autobatch": 1,
                       "shared_parameters": True, "gpu_mask": [0, 1], "requested_gpus": 1}
    params.set_cpu_mode()
    params.set_weight_decay(0.0)
    params.init()
    assert applied["requested_gpus"] == 0 and applied["weight_decay"] == 0.0
    with pytest.raises(ValueError, match="gpu_mask should only contain 0 and 1s"):
        params.set_gpu_mask([2])


def test_cg_methods_by_dynets_node_numbers_say_what_to_use():
    dy.renew_cg()
    for call, instead in ((lambda: dy.cg().forward_scalar(0), "scalar_value"),
                          (lambda: dy.cg().inc_forward_vec(0), "vec_value"),
                          (lambda: dy.cg().backward(0), "backward"),
                          (lambda: dy.cg().inputMatrixLiteral([1.0], (1,)), "inputTensorTranspose"),
                          (lambda: dy.cg().inputSparseTensor([0], [1.0], (2,)), "sparse_inputTensor"),
                          (lambda: dy.SoftmaxBuilder().sample(None), "StandardSoftmaxBuilder")):
        with pytest.raises(NotImplementedError, match=instead):
            call()


def test_a_gradient_that_was_not_kept_says_how_to_keep_it():
    dy.renew_cg()
    x = dy.inputVector([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"backward\(full=True\)"):
        x.gradient()


def test_restricted_log_softmax_and_hinge_dim_say_what_is_wrong():
    dy.renew_cg()
    x = dy.inputVector([1.0, 2.0, 0.5])
    assert dy.log_softmax(x, restrict=[0, 2]).npvalue()[1] == -np.inf
    with pytest.raises(ValueError, match=r"allowed entries must be at least one of the 3"):
        dy.log_softmax(x, restrict=[3])
    with pytest.raises(ValueError, match="needs a vector"):
        dy.log_softmax(dy.inputTensor(np.ones((3, 2))), restrict=[0])
    with pytest.raises(ValueError, match="3 indices for the 2 columns"):
        dy.hinge_dim(dy.inputTensor(np.ones((3, 2))), [0, 1, 2])
    with pytest.raises(ValueError, match="needs a matrix"):
        dy.hinge_dim(x, [0])


def test_a_layer_normalized_lstm_is_built_of_dynet_ops():
    """``VanillaLSTMBuilder(..., ln_lstm=True)`` (any true value, as DyNet reads it: a
    course's program passes a class there by mistake) is the layer-normalized LSTM."""
    pc = dy.ParameterCollection()
    builder = dy.VanillaLSTMBuilder(1, 2, 3, pc, dy.LSTMBuilder)
    from batchviz.dynet.lstm import LayerNormLSTMBuilder
    assert isinstance(builder, LayerNormLSTMBuilder) and builder.spec[3] is True
    dy.renew_cg()
    out = builder.initial_state().transduce([dy.inputVector([1.0, -1.0])] * 2)[-1]
    assert out.dim() == ((3,), 1) and np.all(np.isfinite(out.npvalue()))
    ops = {op.name for op in dy.cg().graph.ops}
    assert "lstm_step" not in ops and "sqrt" in ops   # the norms' standard deviations


def test_set_recomputes_the_graph():
    dy.renew_cg()
    x = dy.vecInput(2)
    y = dy.tanh(x) * 2.0
    x.set([0.5, -1.0])
    assert y.value() == pytest.approx(list(2 * np.tanh([0.5, -1.0])), rel=1e-6)
    x.set([2.0, 0.0])
    assert y.value() == pytest.approx(list(2 * np.tanh([2.0, 0.0])), rel=1e-6)
    m = dy.matInput(2, 2)
    m.set([1.0, 2.0, 3.0, 4.0])  # DyNet's column-major order
    assert m.npvalue().tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_immediate_compute_and_check_validity():
    dy.renew_cg(immediate_compute=True, check_validity=True)
    x = dy.inputVector([1.0, -1.0])
    y = dy.tanh(x)
    assert dy.cg().graph.n_evaluated == len(dy.cg().graph)   # computed as it was made
    with pytest.raises(RuntimeError, match="NaN or infinite"), \
            warns_on_numpy(bv.NumericsWarning, match="made NaN or infinity"):
        dy.log(x)                                            # fails at its own line
    dy.renew_cg()
    dy.tanh(dy.inputVector([1.0]))
    assert dy.cg().graph.n_evaluated == 0 and y.dim() == ((2,), 1)


# --- gradients that differ from DyNet's on purpose ----------------------------------------
def test_binary_log_loss_gradient_with_respect_to_the_targets(float64):
    """DyNet's gradient for the targets is that of the loss with its arguments swapped;
    batchviz's is the loss's own (checked by central differences)."""
    pc = dy.ParameterCollection()
    p, q = pc.add_parameters(3), pc.add_parameters(3)
    p.set_value([0.3, -0.4, 1.0])
    q.set_value([-0.2, 0.5, 0.1])

    def loss_value():
        dy.renew_cg()
        loss = dy.binary_log_loss(dy.logistic(p), dy.logistic(q))
        value = loss.value()
        loss.backward()
        return value

    loss_value()
    assert_central_differences(q._p, loss_value, q.grad_as_array(), [(0,), (1,), (2,)])


def test_poisson_loss_gradient_takes_in_the_gradient_reaching_it(float64):
    """DyNet's ``poisson_loss`` passes back ``exp(log_lambda) - x`` whatever gradient reaches
    it; batchviz's is the loss's own (checked by central differences on half the loss)."""
    pc = dy.ParameterCollection()
    log_lambda = pc.add_parameters(1)
    log_lambda.set_value([0.4])

    def loss_value():
        dy.renew_cg()
        loss = dy.poisson_loss(log_lambda, 3) * 0.5
        value = loss.value()
        loss.backward()
        return value

    loss_value()
    assert_central_differences(log_lambda._p, loss_value, log_lambda.grad_as_array(), [(0,)])


# --- dropout and noise ---------------------------------------------------------------------
def test_dropout_keeps_the_expected_share_and_scales_the_rest():
    dy.renew_cg()
    v = dy.dropout(dy.ones(20000), 0.3).npvalue()
    np.testing.assert_allclose(np.unique(v), [0.0, 1 / 0.7], rtol=1e-6)
    assert (v == 0).mean() == pytest.approx(0.3, abs=0.02)
    b = dy.dropout_batch(dy.ones(4, batch_size=5000), 0.5).npvalue()   # whole instances
    assert np.all((b == 0).all(axis=0) | (b == 2.0).all(axis=0))
    n = dy.noise(dy.zeros(20000), 0.5).npvalue()
    assert n.std() == pytest.approx(0.5, rel=0.05)


def test_builder_dropout_uses_one_mask_for_every_step():
    pc = dy.ParameterCollection()
    E = pc.add_lookup_parameters((5, 3))
    lstm = dy.VanillaLSTMBuilder(1, 3, 4, pc)
    lstm.set_dropout(0.5)

    def inputs_of_a_graph():
        dy.renew_cg()
        outs = lstm.initial_state().transduce([E[1], E[2], E[3]])
        assert all(np.isfinite(o.npvalue()).all() for o in outs)
        graph = dy.cg().graph
        return [n for n in range(len(graph.ops)) if graph.ops[n].name == "input"]

    assert len(inputs_of_a_graph()) == 2  # one mask for the inputs, one for the state
    lstm.disable_dropout()
    assert inputs_of_a_graph() == []


# --- files -------------------------------------------------------------------------------
def test_collection_save_and_populate(tmp_path):
    pc = dy.ParameterCollection()
    W, E = pc.add_parameters((3, 2)), pc.add_lookup_parameters((4, 2))
    lstm = dy.VanillaLSTMBuilder(1, 2, 3, pc)
    path = str(tmp_path / "model")
    pc.save(path)
    saved = [p.as_array() for p in (W, E, *lstm.get_parameters()[0])]
    for p in (W, E, *lstm.get_parameters()[0]):
        p.set_value(np.zeros(p.shape()))
    pc.populate(path)
    for p, v in zip((W, E, *lstm.get_parameters()[0]), saved):
        np.testing.assert_array_equal(p.as_array(), v)
    # the LSTM bias is saved as DyNet sees it: zeros (the forget bias is added at each step)
    assert not lstm.get_parameters()[0][2].as_array().any()
    # DyNet's text format: parameters first, then tables, by their full names
    headers = [line.split()[:3] for line in open(path) if line.startswith("#")]
    assert headers == [["#Parameter#", "/_0", "{3,2}"],
                       ["#Parameter#", "/vanilla-lstm-builder/_0", "{12,2}"],
                       ["#Parameter#", "/vanilla-lstm-builder/_1", "{12,3}"],
                       ["#Parameter#", "/vanilla-lstm-builder/_2", "{12}"],
                       ["#LookupParameter#", "/_1", "{2,4}"]]
    assert not zipfile.is_zipfile(path)


def test_dy_save_and_load_make_the_objects_again(tmp_path):
    pc = dy.ParameterCollection()
    E = pc.add_lookup_parameters((5, 3))
    lstm = dy.VanillaLSTMBuilder(2, 3, 4, pc)
    bi = dy.BiRNNBuilder(1, 3, 4, pc, dy.GRUBuilder)
    W = pc.add_parameters((2, 4))
    base = str(tmp_path / "saved")
    dy.save(base, [E, lstm, bi, W])
    meta = metafile.read(base + ".meta")     # (read without unpickling)
    assert [m[0] for m in meta] == ["LookupParameters", Global("_dynet", "VanillaLSTMBuilder"),
                                    Global("_dynet", "BiRNNBuilder"), "Parameters"]
    assert meta[2][1][3] == Global("_dynet", "GRUBuilder")   # the spec names DyNet's class
    pc2 = dy.ParameterCollection()
    E2, lstm2, bi2, W2 = dy.load(base, pc2)
    np.testing.assert_array_equal(E2.as_array(), E.as_array())
    np.testing.assert_array_equal(W2.as_array(), W.as_array())
    for a, b in zip(lstm.get_parameters(), lstm2.get_parameters()):
        for p, q in zip(a, b):
            np.testing.assert_array_equal(p.as_array(), q.as_array())
    dy.renew_cg()
    xs = [E[1], E[2]]
    np.testing.assert_allclose(bi2.transduce([E2[1], E2[2]])[-1].npvalue(),
                               bi.transduce(xs)[-1].npvalue(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="never pickles"):
        dy.save(base, [object()])
    normed = dy.VanillaLSTMBuilder(1, 3, 4, pc, ln_lstm=True)   # as DyNet: its collection's
    dy.save(base, [normed])                                      # W_x, W_h, b are saved
    (normed2,) = dy.load(base, dy.ParameterCollection())
    assert normed2.spec == normed.spec
    for p, q in zip(normed.get_parameters()[0], normed2.get_parameters()[0]):
        np.testing.assert_array_equal(p.as_array(), q.as_array())


class OneLayerMLP:
    """A user's own saveable class, as in DyNet's saving tutorial: a ``spec`` (with the
    activation function in it), a ``param_collection()`` and a static ``from_spec``."""

    def __init__(self, model, num_input, num_hidden, num_out, act=dy.tanh):
        self.pc = model.add_subcollection()
        self.W1 = self.pc.add_parameters((num_hidden, num_input))
        self.b1 = self.pc.add_parameters(num_hidden)
        self.W2 = self.pc.add_parameters((num_out, num_hidden))
        self.spec = (num_input, num_hidden, num_out, act)

    def __call__(self, x):
        return dy.softmax(self.W2 * self.spec[3](self.W1 * x + self.b1))

    def param_collection(self):
        return self.pc

    @staticmethod
    def from_spec(spec, model):
        return OneLayerMLP(model, *spec)


def test_dy_save_and_load_a_class_of_ones_own(tmp_path):
    pc = dy.ParameterCollection()
    E = pc.add_lookup_parameters((10, 4))
    mlp = OneLayerMLP(pc, 4, 5, 3, dy.rectify)
    base = str(tmp_path / "basename")
    dy.save(base, [mlp, E])
    meta = metafile.read(base + ".meta")
    assert meta[0][0] == Global(__name__, "OneLayerMLP")
    assert meta[0][1][3] == Global("_dynet", "rectify")     # DyNet's name of dy.rectify
    mlp2, E2 = dy.load(base, dy.ParameterCollection())
    assert isinstance(mlp2, OneLayerMLP) and mlp2.spec == mlp.spec
    dy.renew_cg()
    np.testing.assert_array_equal(mlp2(E2[3]).npvalue(), mlp(E[3]).npvalue())
    mlp.spec = (4, 5, 3, object())                     # not something a file can hold
    with pytest.raises(NotImplementedError, match="its spec holds a value of type object, .*never pickles"):
        dy.save(base, [mlp])
    metafile.write(base + ".meta", [(Global("some_module_not_imported", "Evil"),) + meta[0][1:],
                                    meta[1]])
    with pytest.raises(RuntimeError, match="some_module_not_imported.Evil, which is not in any "
                                           "module this program has imported"):
        dy.load(base, dy.ParameterCollection())
    assert "some_module_not_imported" not in sys.modules


def test_populate_refuses_a_file_of_another_model(tmp_path):
    pc = dy.ParameterCollection()
    pc.add_parameters((3, 2))
    path = str(tmp_path / "m")
    pc.save(path)
    other = dy.ParameterCollection()
    other.add_parameters((2, 2))
    with pytest.raises(RuntimeError, match=r"/_0 \{3,2\}\): the dimensions of parameter /_0 in "
                                           r"the file do not match /_0 of the collection /, "
                                           r"\{2,2\}"):
        other.populate(path)


# --- the minibatch dimension and batching --------------------------------------------------
def _minibatched_loss(strategy: str, minibatches: int):
    pc = dy.ParameterCollection()
    W, E = pc.add_parameters((5, 4)), pc.add_lookup_parameters((10, 4))
    dy.renew_cg(autobatching=strategy)
    losses = []
    for k in range(minibatches):
        X = dy.lookup_batch(E, [k, k + 1, k + 2])
        losses.append(dy.sum_batches(dy.pickneglogsoftmax_batch(dy.tanh(W * X), [0, 1, 2])))
    return dy.esum(losses)


def test_manual_batches_are_one_node_each_and_batch_with_each_other():
    loss = _minibatched_loss("agenda", 4)
    loss.value()
    graph = dy.cg().graph
    products = [n for n in range(len(graph.ops)) if graph.ops[n].name == "matmul"]
    assert len(products) == 4 and all(graph.shapes[n] == (5, 3) for n in products)
    stats = graph.last_stats.forward
    unbatched = _minibatched_loss("none", 4)
    unbatched.value()
    assert stats.batches < dy.cg().graph.last_stats.forward.batches   # autobatching on top


def test_explain_counts_a_batched_node_once_with_its_size():
    loss = _minibatched_loss("agenda", 3)
    explanation = bv.explain(loss.x)
    rows = {row.name: row for row in explanation.rows}
    product = next(name for name in rows if name.startswith("matmul"))
    assert rows[product].nodes == 3          # one node per minibatch, not per instance
    assert "5x3" not in product and "4x3" in product   # the signature names the 3 columns


def test_a_layer_written_as_act_of_b_plus_W_times_x_is_one_node():
    pc = dy.ParameterCollection()
    W, U, b = pc.add_parameters((3, 4)), pc.add_parameters((3, 2)), pc.add_parameters(3)
    dy.renew_cg()
    x, c = dy.inputVector([1.0, 2.0, 3.0, 4.0]), dy.inputVector([1.0, -1.0])
    graph = dy.cg().graph
    before = len(graph)

    def new_nodes():   # (a parameter gets a node of its own in each graph on first use)
        return [graph.ops[n].name for n in range(before, len(graph))
                if graph.ops[n].name != "parameter"]

    y = dy.tanh(b + W * x + U * c)
    assert new_nodes() == ["affine_tanh"]
    expected = np.tanh(b.as_array() + W.as_array() @ [1, 2, 3, 4] + U.as_array() @ [1, -1])
    np.testing.assert_allclose(y.npvalue(), expected, rtol=1e-5, atol=1e-6)  # (float32 sums)
    h = W * x                                  # used twice: one product node
    dy.cmult(h, h)
    assert new_nodes() == ["affine_tanh", "matmul", "cmult"]
    z = b + W * x
    dy.tanh(dy.cmult(z, z))                    # not an activation of z itself: z is a node
    assert new_nodes()[3:] == ["affine", "cmult", "tanh"]


def test_the_gradient_of_a_transform_built_into_its_activation():
    """``a = b + W * x`` used by ``dy.logistic(a)`` (one node with its activation) and by
    another op (then a node of its own): ``a.gradient()`` adds both paths, as DyNet's
    single node of ``a`` has it; checked against the same graph with ``a`` made a node
    first (``a.value()``), where nothing is fused."""
    pc = dy.ParameterCollection()
    W, b = pc.add_parameters((3, 4)), pc.add_parameters(3)
    W.set_value(np.arange(12.0).reshape(3, 4) / 10 - 0.5)
    b.set_value([0.1, -0.2, 0.3])

    def gradient_of_a(node_first: bool):
        dy.renew_cg()
        x = dy.inputVector([1.0, -2.0, 0.5, 0.25])
        a = b + W * x
        if node_first:
            a.value()
        y = dy.logistic(a)
        z = dy.rectify(a)
        loss = dy.sum_elems(dy.cmult(y, y) + dy.cmult(z, y) + dy.cmult(a, a))
        loss.backward(full=True)
        return a.gradient(), [n for n in dy.cg().graph.ops if n.name.startswith("affine")]

    fused, fused_ops = gradient_of_a(False)
    plain, plain_ops = gradient_of_a(True)
    assert sorted(op.name for op in fused_ops) == ["affine", "affine_logistic", "affine_rectify"]
    assert [op.name for op in plain_ops] == ["affine"]
    np.testing.assert_allclose(fused, plain, rtol=1e-5, atol=1e-7)


def test_an_expression_is_true_as_in_dynet():
    """DyNet programs build a node once with ``w = w or W * M``: every expression, pending
    products included, is true (batchviz's own expressions refuse a truth value)."""
    pc = dy.ParameterCollection()
    W = pc.add_parameters((2, 3))
    dy.renew_cg()
    x = dy.inputVector([1.0, 2.0, 3.0])
    product = W * x
    assert bool(x) and bool(product) and bool(dy.tanh(x))
    cached = None
    for _ in range(2):
        cached = cached or product
    assert cached is product
    with pytest.raises(TypeError, match="no truth value"):
        bool(x.x)


def test_a_gradient_that_is_not_finite_stops_the_update_as_in_dynet():
    """With clipping on (DyNet's default) an update whose gradient norm is NaN or infinite
    raises DyNet's error and changes no parameter; with clipping off it is DyNet's choice
    too to go on."""
    pc = dy.ParameterCollection()
    p = pc.add_parameters(2)
    p.set_value([1.0, -1.0])
    trainer = dy.SimpleSGDTrainer(pc)
    dy.renew_cg()
    loss = dy.sum_elems(dy.sqrt(p))                       # sqrt(-1): NaN
    with warns_on_numpy(bv.NumericsWarning, match="made NaN or infinity"):
        loss.backward()
    with pytest.raises(RuntimeError, match=r"Magnitude of gradient is bad: nan .*check_numerics"):
        trainer.update()
    assert p.as_array().tolist() == [1.0, -1.0]
    trainer.set_clip_threshold(0)
    trainer.update()                                       # DyNet updates without clipping
    assert np.isnan(p.as_array()[1])


@pytest.mark.parametrize("make", [
    lambda pc: dy.SimpleSGDTrainer(pc), lambda pc: dy.MomentumSGDTrainer(pc),
    lambda pc: dy.AdagradTrainer(pc), lambda pc: dy.AdadeltaTrainer(pc),
    lambda pc: dy.RMSPropTrainer(pc), lambda pc: dy.AdamTrainer(pc),
    lambda pc: dy.AmsgradTrainer(pc), lambda pc: dy.CyclicalSGDTrainer(pc)])
def test_a_large_parameter_is_updated_piece_by_piece_with_the_same_values(make, monkeypatch):
    """On NumPy a parameter larger than trainers.PIECE_BYTES goes through the update rule
    in pieces that stay in the cache; every rule is element-wise, so the values are
    exactly those of the rule on the whole arrays, for a dense parameter (clipped: its
    gradient scaled) and for the rows of a table, update after update."""
    from batchviz.dynet import trainers

    def train(piece_bytes):
        monkeypatch.setattr(trainers, "PIECE_BYTES", piece_bytes)
        pc = dy.ParameterCollection()
        W = pc.add_parameters((7, 9), init=dy.NormalInitializer(0, 1))
        E = pc.add_lookup_parameters((11, 6), init=dy.NormalInitializer(0, 1))
        W.set_value(np.linspace(-1, 1, 63).reshape(7, 9))
        E.set_value(np.linspace(-2, 2, 66).reshape(11, 6))
        trainer = make(pc)
        for step in range(3):
            dy.renew_cg()
            x = dy.inputVector(np.arange(9.0) - step)
            h = dy.tanh(W * x)
            rows = dy.concatenate([E[1], E[4], E[step + 5]])
            loss = dy.sum_elems(dy.cmult(h, h)) * 40.0 + dy.sum_elems(dy.cmult(rows, rows))
            loss.backward()
            trainer.update()
        return W.as_array(), E.as_array()

    whole = train(1 << 30)
    pieces = train(16)   # four float32 values a piece
    for a, b in zip(whole, pieces):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(whole[0], np.linspace(-1, 1, 63).reshape(7, 9))


def test_convolutions_say_what_is_wrong():
    pc = dy.ParameterCollection()
    F, b = pc.add_parameters((2, 2, 3, 4)), pc.add_parameters(4)
    dy.renew_cg()
    image = dy.inputTensor(np.ones((5, 5, 3)))
    assert dy.conv2d_bias(image, F, b, [1, 1], is_valid=False).dim() == ((5, 5, 4), 1)
    images = dy.inputTensor(np.ones((5, 5, 3, 2)), batched=True)     # a minibatch of two
    assert dy.maxpooling2d(dy.conv2d(images, F, [1, 1]), [2, 2], [2, 2]).dim() == ((2, 2, 4), 2)
    matrices = dy.inputTensor([np.ones((5, 4)), np.zeros((5, 4))])  # (H, W): one channel
    assert dy.maxpooling2d(matrices, [2, 2], [1, 1]).dim() == ((4, 3), 2)
    with pytest.raises(NotImplementedError, match="minibatch of filters"):
        dy.conv2d(image, dy.inputTensor(np.ones((2, 2, 3, 4, 2)), batched=True), [1, 1])
    with pytest.raises(ValueError, match="reads 3 channels but the input has 2"):
        dy.conv2d(dy.inputTensor(np.ones((5, 5, 2))), F, [1, 1])
    with pytest.raises(ValueError, match="stride must be two positive ints"):
        dy.conv2d(image, F, [0, 1])
    with pytest.raises(ValueError, match="window \\(6, 2\\) to fit"):
        dy.maxpooling2d(image, [6, 2], [1, 1])
    table = pc.add_lookup_parameters((7, 1, 1, 3))
    assert table.shape() == (7, 1, 1, 3) and table[2].dim() == ((1, 1, 3), 1)
    assert dy.lookup_batch(table, [1, 2]).dim() == ((1, 1, 3), 2)
    with pytest.raises(NotImplementedError, match="look its rows up"):
        table.x


def test_a_state_gives_the_same_expressions_each_time_and_the_graph_counts_from_zero():
    """``s()`` and ``h()`` asked twice add no nodes (a tutorial prints them twice), and
    ``cg_version()`` goes up by one with each ``renew_cg``, as DyNet's."""
    pc = dy.ParameterCollection()
    lstm = dy.VanillaLSTMBuilder(1, 2, 3, pc)
    dy.renew_cg()
    state = lstm.initial_state().add_input(dy.inputVector([1.0, 2.0]))
    cells, outputs = state.s(), state.h()
    nodes = len(dy.cg().graph)
    assert state.s() is cells and state.h() is outputs and len(dy.cg().graph) == nodes
    version = dy.cg_version()
    dy.renew_cg()
    assert dy.cg_version() == version + 1 and repr(state.output()).startswith("expression ")


def test_matrix_functions_say_what_is_wrong_and_a_negative_determinant_is_nan():
    dy.renew_cg()
    swap = dy.inputTensor(np.array([[0.0, 1.0], [1.0, 0.0]]))       # determinant -1
    assert np.isnan(dy.logdet(swap).value())                         # as DyNet: log(-1)
    assert dy.inverse(swap).npvalue().tolist() == [[0.0, 1.0], [1.0, 0.0]]
    with pytest.raises(ValueError, match="inverse: needs a square matrix, got dimension"):
        dy.inverse(dy.inputTensor(np.ones((2, 3))))
    with pytest.raises(NotImplementedError, match="logdet of a minibatch of matrices"):
        dy.logdet(dy.inputTensor(np.ones((2, 2, 3)), batched=True))


def test_kmax_pooling_and_filter1d_narrow_say_what_is_wrong():
    dy.renew_cg()
    sentence = dy.inputTensor(np.arange(10.0).reshape(2, 5))
    with pytest.raises(ValueError, match="k=6 must be between 1 and the 5 entries of axis 1"):
        dy.kmax_pooling(sentence, 6)
    with pytest.raises(ValueError, match="filter1d_narrow: needs a \\(d, n\\) matrix and a "
                                         "\\(d, k\\) filter"):
        dy.filter1d_narrow(sentence, dy.inputTensor(np.ones((3, 2))))
    with pytest.raises(NotImplementedError, match="filter1d_narrow of a minibatch"):
        dy.filter1d_narrow(dy.inputTensor(np.ones((2, 5, 3)), batched=True),
                           dy.inputTensor(np.ones((2, 2))))


def test_circular_ops_take_two_vectors_of_one_length_as_dynet():
    dy.renew_cg()
    u = dy.inputVector([1.0, 2.0, 3.0])
    assert dy.circ_conv(u, dy.inputVector([0.0, 1.0, 0.0])).npvalue().tolist() == [3.0, 1.0, 2.0]
    assert dy.circ_corr(u, dy.inputVector([0.0, 1.0, 0.0])).npvalue().tolist() == [2.0, 1.0, 3.0]
    with pytest.raises(ValueError, match="circ_conv: needs two vectors of one length, got "
                                         "dimensions"):
        dy.circ_conv(u, dy.inputVector([1.0, 2.0]))
    with pytest.raises(ValueError, match="circ_corr: needs two vectors"):
        dy.circ_corr(dy.inputTensor(np.ones((3, 1))), dy.inputTensor(np.ones((3, 1))))
    with pytest.raises(NotImplementedError, match="circ_corr of a minibatch"):
        dy.circ_corr(u, dy.inputTensor(np.ones((3, 2)), batched=True))


def test_sparsemax_takes_a_vector_as_dynet():
    dy.renew_cg()
    assert dy.sparsemax(dy.inputVector([1.0, 1.0, -5.0])).npvalue().tolist() == [0.5, 0.5, 0.0]
    with pytest.raises(ValueError, match="sparsemax: needs a vector, as DyNet's; got dimension"):
        dy.sparsemax(dy.inputTensor(np.ones((2, 2))))
    with pytest.raises(NotImplementedError, match="sparsemax of a minibatch"):
        dy.sparsemax(dy.inputTensor(np.ones((3, 2)), batched=True))


def test_kmh_ngram_sums_n_consecutive_columns_and_says_what_is_wrong():
    dy.renew_cg()
    sentence = dy.inputTensor(np.arange(10.0).reshape(2, 5))
    assert dy.kmh_ngram(sentence, 4).npvalue().tolist() == [[6.0, 10.0], [26.0, 30.0]]
    with pytest.raises(ValueError, match=r"kmh_ngram: needs a \(d, T\) matrix and 1 <= n <= T, "
                                         r"got dimension \(\(2, 5\), 1\) and n=6"):
        dy.kmh_ngram(sentence, 6)
    with pytest.raises(ValueError, match="kmh_ngram: needs a"):
        dy.kmh_ngram(dy.inputVector([1.0, 2.0]), 1)
    with pytest.raises(NotImplementedError, match="kmh_ngram of a minibatch"):
        dy.kmh_ngram(dy.inputTensor(np.ones((2, 5, 3)), batched=True), v=2)


def test_parameter_expressions_of_a_builder_need_its_initial_state_in_this_graph():
    """As in DyNet, whose builders load their parameters into the graph there."""
    pc = dy.ParameterCollection()
    gru = dy.GRUBuilder(1, 2, 3, pc)
    dy.renew_cg()
    with pytest.raises(ValueError, match="call initial_state before accessing GRUBuilder"):
        gru.get_parameter_expressions()
    gru.initial_state()
    assert [len(layer) for layer in gru.get_parameter_expressions()] == [9]
    dy.renew_cg()                                     # a new graph: stale again
    with pytest.raises(ValueError, match="renew CG and/or call initial_state"):
        gru.get_parameter_expressions()


@pytest.mark.parametrize("mode, slope", [("zero_gradient", 0.0),
                                         ("straight_through_gradient", 1.0)])
def test_round_floor_ceil_take_halves_away_from_zero_and_their_gradient_mode(mode, slope):
    expected = {"round": [1.0, 2.0, -1.0, 3.0, -2.0], "floor": [0.0, 1.0, -1.0, 2.0, -3.0],
                "ceil": [1.0, 2.0, 0.0, 3.0, -2.0]}
    for name, values in expected.items():
        p = dy.ParameterCollection().add_parameters(5)
        p.set_value(np.array([0.5, 1.5, -0.5, 2.7, -2.2]))
        dy.renew_cg()
        y = getattr(dy, name)(p * 1.0, mode)
        assert y.value() == values, name
        dy.dot_product(y, dy.inputVector([1.0, 2.0, 3.0, 4.0, 5.0])).backward()
        assert p.grad_as_array().tolist() == [slope * w for w in (1, 2, 3, 4, 5)], name
    with pytest.raises(ValueError, match="Unknown gradient mode for round: 'bogus'"):
        dy.round(p, "bogus")


# --- softmax layers -------------------------------------------------------------------------
def _factored(tmp_path, text="a x\nb y 3\na z\n", bias=True):
    clusters = tmp_path / "clusters.txt"
    clusters.write_text(text)
    pc = dy.ParameterCollection()
    return pc, dy.ClassFactoredSoftmaxBuilder(3, str(clusters), {"x": 0, "y": 1, "z": 2}, pc,
                                              bias)


def test_softmax_builders_are_saved_and_loaded_without_their_cluster_file(tmp_path):
    pc, factored = _factored(tmp_path)
    standard = dy.StandardSoftmaxBuilder(3, 4, pc, bias=False)
    for p in pc.parameters_list():
        p.set_value(np.random.default_rng(1).normal(size=p.shape()))
    base = str(tmp_path / "softmaxes")
    dy.save(base, [factored, standard])
    (tmp_path / "clusters.txt").unlink()                 # the spec holds the clusters
    factored2, standard2 = dy.load(base, dy.ParameterCollection())
    assert (factored2.spec, standard2.spec) == (factored.spec, standard.spec)
    assert [p.name() for p in factored2.param_collection().parameters_list()] == [
        "/class-factored-softmax-builder/_0", "/class-factored-softmax-builder/_1",
        "/class-factored-softmax-builder/_2", "/class-factored-softmax-builder/_3"]
    dy.renew_cg()
    rep = dy.inputVector([0.5, -1.0, 0.25])
    for a, b in ((factored, factored2), (standard, standard2)):
        np.testing.assert_array_equal(a.full_log_distribution(rep).npvalue(),
                                      b.full_log_distribution(rep).npvalue())


def test_softmax_builders_say_what_is_wrong_with_dynets_messages(tmp_path):
    pc, factored = _factored(tmp_path)
    dy.renew_cg()
    rep = dy.inputVector([0.5, -1.0, 0.25])
    with pytest.raises(ValueError, match="Word ID 3 missing from clusters"):
        factored.neg_log_softmax(rep, 3)
    with pytest.raises(ValueError, match="cluster 1 holds one word"):
        factored.subclass_logits(rep, 1)
    with pytest.raises(OverflowError, match="non-negative"):
        factored.neg_log_softmax(rep, -1)
    with pytest.raises(ValueError, match="same batch size, got 1 for rep and 2"):
        dy.StandardSoftmaxBuilder(3, 4, pc).neg_log_softmax_batch(rep, [0, 1])
    with pytest.raises(ValueError, match=r"Invalid format in cluster file .*\(line 2"):
        _factored(tmp_path, "a x\n\nb y\n")
    with pytest.raises(RuntimeError, match="Unknown word encountered in frozen dictionary: w"):
        _factored(tmp_path, "a x\nb w\n")
    with pytest.raises(ValueError, match="Could not find cluster file"):
        dy.ClassFactoredSoftmaxBuilder(3, str(tmp_path / "none.txt"), {}, pc)
    with pytest.raises(ValueError, match="unique ids from 0 to num_classes"):
        dy.ClassFactoredSoftmaxBuilder(3, str(tmp_path / "clusters.txt"), {"x": 0, "y": 2}, pc)


def test_softmax_samples_follow_the_distribution(tmp_path):
    _, factored = _factored(tmp_path)
    dy.renew_cg()
    rep = dy.inputVector([0.5, -1.0, 0.25])
    dy.reset_random_seed(3)
    draws = np.bincount([factored.sample(rep) for _ in range(2000)], minlength=3) / 2000
    np.testing.assert_allclose(draws, np.exp(factored.full_log_distribution(rep).npvalue()),
                               atol=0.04)


def test_softmax_losses_of_many_positions_batch_under_autobatching():
    pc = dy.ParameterCollection()
    sm, E = dy.StandardSoftmaxBuilder(4, 6, pc), pc.add_lookup_parameters((10, 4))
    batches = {}
    for strategy in ("none", "agenda"):
        dy.renew_cg(autobatching=strategy)
        dy.esum([sm.neg_log_softmax(dy.tanh(E[w]), w % 6) for w in range(8)]).value()
        batches[strategy] = dy.cg().graph.last_stats.forward.batches
    assert batches["agenda"] * 3 < batches["none"]


def test_fast_lstm_is_dynets_its_peepholes_unused_and_saved_like_the_others(tmp_path):
    pc = dy.ParameterCollection()
    fast = dy.FastLSTMBuilder(2, 3, 4, pc)
    assert [p.shape() for p in fast.get_parameters()[1]] == [
        (4, 4), (4, 4), (4, 1), (4,), (4, 4), (4, 4), (4, 1), (4,), (4, 4), (4, 4), (4,)]
    assert fast.get_parameters()[0][0].name() == "/fast-lstm-builder/_0"
    dy.renew_cg()
    with pytest.raises(ValueError, match="call initial_state before accessing FastLSTMBuilder"):
        fast.get_parameter_expressions()
    with pytest.raises(ValueError, match="2 times as many expressions as layers"):
        fast.initial_state([dy.ones(4), dy.ones(4)])
    fast.set_dropout(0.5)                            # DyNet's FastLSTM applies no dropout
    x = dy.inputVector([0.5, -1.0, 0.25])
    out = fast.initial_state().transduce([x, x])[-1]
    assert fast.get_parameter_expressions()[0][0] is fast.get_parameters()[0][0]
    fast.disable_dropout()
    np.testing.assert_array_equal(out.npvalue(),
                                  fast.initial_state().transduce([x, x])[-1].npvalue())
    dy.sum_elems(out).backward()
    assert not fast.get_parameters()[0][2].grad_as_array().any()   # the peephole columns
    base = str(tmp_path / "fast")
    dy.save(base, [fast])
    (fast2,) = dy.load(base, dy.ParameterCollection())
    np.testing.assert_array_equal(fast2.initial_state().transduce([x, x])[-1].npvalue(),
                                  out.npvalue())


def test_print_graphviz_prints_batchviz_picture_of_the_graph(capsys):
    pc = dy.ParameterCollection()
    W = pc.add_parameters((2, 2))
    dy.renew_cg(autobatching=1)
    dy.esum([dy.tanh(W * dy.inputVector([1.0, k])) for k in range(3)])
    dy.print_text_graphviz()
    dot = capsys.readouterr().out
    assert dot.startswith("digraph batchviz {") and dot.rstrip().endswith("}")
    assert dot.count('label="tanh') == 3 and dot.count('label="W * x') == 3  # (as written)


# --- DyNet's fused LSTM ops and contractions ----------------------------------------------
def _step_parameters(seed: int = 3):
    rng = np.random.default_rng(seed)
    pc = dy.ParameterCollection()
    return [pc.add_parameters(s, init=dy.NumpyInitializer(rng.normal(size=s)))
            for s in [(8, 3), (8, 2), (8,)]]


def test_vanilla_lstm_weight_noise_is_noise_added_to_the_weights():
    """``weightnoise_std > 0``: the gates of ``Wx``, ``Wh`` and ``b`` plus Gaussian noise,
    drawn for this node from the seeded generator (DyNet 2.1 draws it and then leaves the
    products out); the gradient reaches the weights through the noisy ones."""
    Wx, Wh, b = _step_parameters()
    x, h = [0.3, -1.0, 0.5], [0.2, 0.7]
    dy.renew_cg()
    dy.reset_random_seed(11)
    noisy = dy.vanilla_lstm_gates(dy.inputVector(x), dy.inputVector(h), Wx, Wh, b, 0.5)
    dy.reset_random_seed(11)
    Wx2, Wh2, b2 = (p + dy.random_normal(p.dim()[0], 0.0, 0.5) for p in (Wx, Wh, b))
    by_hand = dy.vanilla_lstm_gates(dy.inputVector(x), dy.inputVector(h), Wx2, Wh2, b2)
    np.testing.assert_allclose(noisy.npvalue(), by_hand.npvalue(), rtol=1e-6)
    plain = dy.vanilla_lstm_gates(dy.inputVector(x), dy.inputVector(h), Wx, Wh, b)
    assert not np.allclose(noisy.npvalue(), plain.npvalue())
    dy.sum_elems(noisy).backward()
    assert Wx.grad_as_array().any() and Wh.grad_as_array().any()


def test_vanilla_lstm_gates_dropout_masks_get_their_gradient():
    """DyNet gives the masks no gradient; batchviz's is the true one."""
    Wx, Wh, b = _step_parameters()
    pc = dy.ParameterCollection()
    mx, mh = pc.add_parameters((3,), init=1.5), pc.add_parameters((2,), init=0.5)
    x, h, w = np.array([0.3, -1.0, 0.5]), np.array([0.2, 0.7]), np.arange(8.0)
    dy.renew_cg()
    g = dy.vanilla_lstm_gates_dropout(dy.inputVector(x), dy.inputVector(h), Wx, Wh, b, mx, mh)
    dy.sum_elems(dy.cmult(g, dy.inputVector(w))).backward()
    a = Wx.as_array() @ (x * 1.5) + Wh.as_array() @ (h * 0.5) + b.as_array()
    a[2:4] += 1.0                                   # DyNet's forget gate bias
    s, t = 1 / (1 + np.exp(-a[:6])), np.tanh(a[6:])
    d = w * np.concatenate([s * (1 - s), 1 - t * t])   # d loss / d a
    np.testing.assert_allclose(mx.grad_as_array(), x * (Wx.as_array().T @ d), rtol=1e-4)
    np.testing.assert_allclose(mh.grad_as_array(), h * (Wh.as_array().T @ d), rtol=1e-4)


def test_vanilla_lstm_c_and_h_broadcast_an_unbatched_argument():
    """DyNet refuses a cell and gates of different minibatch sizes; batchviz uses the
    unbatched one for every instance, as DyNet's element-wise ops do."""
    dy.renew_cg()
    gates = dy.inputVector(np.linspace(0.1, 0.8, 8))
    cells = np.arange(6.0).reshape(2, 3) / 4.0
    c = dy.vanilla_lstm_c(dy.inputTensor(cells, batched=True), gates)
    h = dy.vanilla_lstm_h(c, gates)
    g = np.linspace(0.1, 0.8, 8)
    expected_c = (g[:2] * g[6:])[:, None] + g[2:4, None] * cells
    assert c.dim() == ((2,), 3) and h.dim() == ((2,), 3)
    np.testing.assert_allclose(c.npvalue(), expected_c, rtol=1e-6)
    np.testing.assert_allclose(h.npvalue(), g[4:6, None] * np.tanh(expected_c), rtol=1e-6)


@pytest.mark.parametrize("build, error, message", [
    (lambda P, v: dy.vanilla_lstm_gates(v(4), v(2), *P), ValueError,
     r"Wx must be \(8, 4\) for inputs of 4 and a state of 2"),
    (lambda P, v: dy.vanilla_lstm_gates(v(3), v(3), *P), ValueError, r"Wx must be \(12, 3\)"),
    (lambda P, v: dy.vanilla_lstm_gates(dy.inputTensor(np.ones((3, 1))), v(2), *P), ValueError,
     "x_t must be a vector"),
    (lambda P, v: dy.vanilla_lstm_gates_concat([], v(2), *P), ValueError, "at least one input"),
    (lambda P, v: dy.vanilla_lstm_gates_concat([v(1), v(3)], v(2), *P), ValueError,
     r"inputs of 4"),
    (lambda P, v: dy.vanilla_lstm_gates_dropout(v(3), v(2), *P, v(2), v(2)), ValueError,
     "dropout_mask_x must be a vector of 3"),
    (lambda P, v: dy.vanilla_lstm_gates_dropout(v(3), v(2), *P, v(3), v(3)), ValueError,
     "dropout_mask_h must be a vector of 2"),
    (lambda P, v: dy.vanilla_lstm_gates(dy.inputTensor(np.ones((3, 2)), batched=True),
                                        dy.inputTensor(np.ones((2, 3)), batched=True), *P),
     ValueError, r"minibatch sizes \[2, 3\] differ"),
    (lambda P, v: dy.vanilla_lstm_gates(v(3), v(2), P[0], P[1], dy.inputTensor(
        np.ones((8, 2)), batched=True)), NotImplementedError, "b is a minibatch.*first instance"),
    (lambda P, v: dy.vanilla_lstm_gates(v(3), v(2), *P, weightnoise_std=-1.0), ValueError,
     "weightnoise_std must be >= 0"),
    (lambda P, v: dy.vanilla_lstm_c(v(2), v(6)), ValueError, r"gates_t \(4 times the size"),
    (lambda P, v: dy.vanilla_lstm_h(dy.inputTensor(np.ones((2, 2))), v(8)), ValueError,
     "c_t must be a vector"),
    (lambda P, v: dy.contract3d_1d(dy.inputTensor(np.ones((2, 3))), v(3)), ValueError,
     r"x must be a 3-d tensor \(I, J, K\)"),
    (lambda P, v: dy.contract3d_1d(dy.inputTensor(np.ones((2, 3, 4))), v(3)), ValueError,
     "y must be a vector of 4"),
    (lambda P, v: dy.contract3d_1d_bias(dy.inputTensor(np.ones((2, 3, 4))), v(4), v(6)),
     ValueError, r"the bias b must be \(2, 3\)"),
    (lambda P, v: dy.contract3d_1d_1d(dy.inputTensor(np.ones((2, 3, 4))), v(4), v(4)),
     ValueError, "z must be a vector of 3"),
    (lambda P, v: dy.contract3d_1d_1d_bias(dy.inputTensor(np.ones((2, 3, 4))), v(4), v(3),
                                           v(3)), ValueError, r"the bias b must be \(2,\)"),
])
def test_lstm_op_and_contraction_mistakes_say_what_is_wrong(build, error, message):
    P = _step_parameters()
    dy.renew_cg()
    with pytest.raises(error, match=message):
        build(P, lambda n: dy.inputVector(np.ones(n)))


def test_contract3d_1d_1d_of_minibatches_is_one_contraction_per_instance():
    """DyNet 2.1 refuses minibatches in ``contract3d_1d_1d``; here every argument may be one
    (an unbatched one used for every instance), as in ``contract3d_1d``."""
    rng = np.random.default_rng(0)
    x, y, z, b = (rng.normal(size=s) for s in [(2, 3, 4, 5), (4, 5), (3,), (2, 5)])
    dy.renew_cg()
    t = dy.contract3d_1d_1d_bias(dy.inputTensor(x, batched=True),
                                 dy.inputTensor(y, batched=True), dy.inputVector(z),
                                 dy.inputTensor(b, batched=True))
    assert t.dim() == ((2,), 5)
    np.testing.assert_allclose(t.npvalue(), np.einsum("ijkb,kb,j->ib", x, y, z) + b,
                               rtol=1e-5, atol=1e-6)
    zs = rng.normal(size=(3, 5))
    u = dy.contract3d_1d_1d(dy.inputTensor(x[..., 0]), dy.inputVector(y[:, 0]),
                            dy.inputTensor(zs, batched=True))
    assert u.dim() == ((2,), 5)
    np.testing.assert_allclose(u.npvalue(), np.einsum("ijk,k,jb->ib", x[..., 0], y[:, 0], zs),
                               rtol=1e-5, atol=1e-6)


# --- constrained_softmax, SparseLSTMBuilder, StackedRNNState, EGTrainer -----------------------
def test_constrained_softmax_holds_entries_at_their_bounds():
    dy.renew_cg()
    x = np.array([1.0, 2.0, 0.5, 3.0, -1.0])
    p = dy.constrained_softmax(dy.inputVector(x), dy.inputVector([0.3, 0.2, 0.5, 0.25, 0.4]))
    free = np.exp(x[[2, 4]]) / np.exp(x[[2, 4]]).sum() * (1 - 0.3 - 0.2 - 0.25)
    np.testing.assert_allclose(p.npvalue(), [0.3, 0.2, free[0], 0.25, free[1]], rtol=1e-6)
    loose = dy.constrained_softmax(dy.inputVector(x), dy.inputVector(np.ones(5)))
    np.testing.assert_allclose(loose.npvalue(), dy.softmax(dy.inputVector(x)).npvalue(),
                               rtol=1e-6)
    tight = dy.constrained_softmax(dy.inputVector([1.0, 2.0, 3.0]), dy.inputVector([0.2] * 3))
    np.testing.assert_allclose(tight.npvalue(), [0.2, 0.2, 0.2])   # no room: the bounds
    column = dy.constrained_softmax(dy.inputTensor(np.ones((3, 1))), dy.inputVector([0.5] * 3))
    assert column.dim() == ((3, 1), 1)


@pytest.mark.parametrize("build, error, message", [
    (lambda: dy.constrained_softmax(dy.inputTensor(np.ones((3, 2)), batched=True),
                                    dy.inputVector([0.5] * 3)),
     NotImplementedError, "constrained_softmax of a minibatch"),
    (lambda: dy.constrained_softmax(dy.inputVector([1.0] * 3), dy.inputVector([0.5] * 2)),
     ValueError, "vectors of one size"),
    (lambda: dy.constrained_softmax(dy.inputTensor(np.ones((2, 2))),
                                    dy.inputTensor(np.ones((2, 2)))),
     ValueError, "vectors of one size, as DyNet's; got dimensions"),
    (lambda: bv.constrained_softmax(bv.input(np.ones(3)), bv.input(np.ones(2))),
     bv.ShapeError, r"constrained_softmax: needs scores and bounds of one shape"),
])
def test_constrained_softmax_mistakes_say_what_is_wrong(build, error, message):
    dy.renew_cg()
    with pytest.raises(error, match=message):
        build()


def test_constrained_softmaxes_of_one_size_are_one_batch_under_the_agenda():
    rng = np.random.default_rng(1)
    xs, us = rng.normal(size=(4, 5)), rng.uniform(0.1, 0.4, size=(4, 5))
    values = {}
    for strategy in ("none", "agenda"):
        dy.renew_cg(autobatching=strategy)
        outs = [dy.constrained_softmax(dy.inputVector(x), dy.inputVector(u))
                for x, u in zip(xs, us)]
        total = dy.esum([dy.sum_elems(o) for o in outs])
        total.value()
        values[strategy] = [o.npvalue() for o in outs]
        batches = [b for b in dy.cg().graph.layout.batches if b.op.name == "constrained_softmax"]
        assert len(batches) == (4 if strategy == "none" else 1)
    np.testing.assert_allclose(values["agenda"], values["none"], rtol=1e-6)


def _sparse(layers=1, **kw):
    pc = dy.ParameterCollection()
    return pc, dy.SparseLSTMBuilder(layers, 3, 4, pc, **kw)


def test_sparse_lstm_is_a_vanilla_lstm_with_masked_weights():
    pc, sparse = _sparse(2)
    vanilla = dy.VanillaLSTMBuilder(2, 3, 4, dy.ParameterCollection())
    for a, b in zip(sparse.get_parameters(), vanilla.get_parameters()):
        for p, q in zip(a, b):
            q.set_value(p.as_array())
        assert [m.as_array().tolist() for m in a[3:]] == [np.ones(m.shape()).tolist()
                                                          for m in a[3:]]
    dy.renew_cg()
    xs = [dy.inputVector([0.1 * k, -0.2, 0.3]) for k in range(3)]
    np.testing.assert_allclose(sparse.initial_state().transduce(xs)[-1].npvalue(),
                               vanilla.initial_state().transduce(xs)[-1].npvalue(), rtol=1e-6)


def test_set_sparsity_switches_off_the_smallest_weights_and_they_get_no_gradient():
    pc, sparse = _sparse(2)
    rng = np.random.default_rng(5)   # fixed values, the biases too: with zero biases, a
    for layer in sparse.get_parameters():   # layer whose candidate rows are all pruned
        for p in layer[:3]:                 # would output 0 and pass no gradient on
            p.set_value(rng.uniform(-1.0, 1.0, p.shape()))
    weights = [p.as_array() for layer in sparse.get_parameters() for p in layer[:2]]
    sparse.set_sparsity(0.5)
    masks = [m.as_array() for layer in sparse.get_parameters() for m in layer[3:]]
    assert sum(int(m.sum()) for m in masks) == sum(m.size for m in masks) // 2
    off = np.concatenate([np.abs(w)[m == 0] for w, m in zip(weights, masks)])
    on = np.concatenate([np.abs(w)[m == 1] for w, m in zip(weights, masks)])
    assert off.max() <= on.min()
    sparse.set_sparsity(0.75)    # those off stay off (their magnitude W * M is 0)
    more = [m.as_array() for layer in sparse.get_parameters() for m in layer[3:]]
    assert all((b <= a).all() for a, b in zip(masks, more))
    for p, w in zip([p for layer in sparse.get_parameters() for p in layer[:2]], weights):
        np.testing.assert_array_equal(p.as_array(), w)     # the weights keep their values
    sparse.set_dropouts(0.2, 0.3)   # the dropout path reads the masked weights too
    dy.reset_random_seed(3)  # (dropout masks that keep a gradient for every weight; the
    for dropout in (False, True):  # generator's state otherwise depends on earlier tests)
        if not dropout:
            sparse.disable_dropout()
        dy.renew_cg()
        out = sparse.initial_state().transduce([dy.inputVector([1.0, -1.0, 0.5])] * 3)[-1]
        dy.sum_elems(out).backward()
        for layer in sparse.get_parameters():
            for W, M in ((layer[0], layer[3]), (layer[1], layer[4])):
                assert not W.grad_as_array()[M.as_array() == 0].any()
                assert W.grad_as_array()[M.as_array() == 1].any()
            assert not layer[3].grad_as_array().any()   # the masks are constants
        pc._model.zero_grad()
        sparse.set_dropouts(0.2, 0.3)
    for bad in (-0.1, 1.5, "half"):
        with pytest.raises(ValueError, match="fraction of weights to prune must be between 0"):
            sparse.set_sparsity(bad)


def test_sparse_lstm_expressions_states_across_graphs_saving_and_birnn(tmp_path):
    pc, sparse = _sparse(1)
    dy.renew_cg()
    with pytest.raises(ValueError, match="call initial_state before accessing "
                                         "SparseLSTMBuilder internal parameters"):
        sparse.get_parameter_expressions()
    start = sparse.initial_state()
    first = sparse.get_parameter_expressions()
    assert [len(layer) for layer in first] == [3]
    assert sparse.get_parameter_expressions()[0][0] is first[0][0]   # the same, per graph
    x = dy.inputVector([0.5, 0.1, -0.3])
    before = start.add_input(x).output().npvalue()
    dy.renew_cg()   # a state kept from the last graph reads this graph's weights
    np.testing.assert_allclose(start.add_input(dy.inputVector([0.5, 0.1, -0.3]))
                               .output().npvalue(), before, rtol=1e-6)
    sparse.set_sparsity(0.4)
    normed = dy.SparseLSTMBuilder(1, 3, 4, pc, ln_lstm=True)
    normed.set_sparsity(0.2)
    base = str(tmp_path / "sparse")
    dy.save(base, [sparse, normed])
    sparse2, normed2 = dy.load(base, dy.ParameterCollection())
    assert (sparse2.spec, normed2.spec) == (sparse.spec, normed.spec)
    assert normed2.whoami() == "SparseLSTMBuilder"
    dy.renew_cg()
    x = dy.inputVector([0.5, 0.1, -0.3])
    for a, b in ((sparse, sparse2), (normed, normed2)):
        np.testing.assert_allclose(b.initial_state().add_input(x).output().npvalue(),
                                   a.initial_state().add_input(x).output().npvalue(),
                                   rtol=1e-6)
    bi = dy.BiRNNBuilder(2, 3, 6, pc, dy.SparseLSTMBuilder)
    assert bi.transduce([x, x])[0].dim() == ((6,), 1)


def test_stacked_rnn_state_feeds_each_builder_the_output_of_the_one_below():
    pc = dy.ParameterCollection()
    lower, upper = dy.VanillaLSTMBuilder(1, 3, 4, pc), dy.GRUBuilder(1, 4, 2, pc)
    dy.renew_cg()
    xs = [dy.inputVector([0.1 * k, 0.2, -0.3]) for k in range(3)]
    start = dy.StackedRNNState([lower.initial_state(), upper.initial_state()])
    assert start.prev() is None and start.output() is None
    stacks = start.add_inputs(xs)
    expected = upper.initial_state().transduce(lower.initial_state().transduce(xs))
    for stack, e in zip(stacks, expected):
        np.testing.assert_allclose(stack.output().npvalue(), e.npvalue(), rtol=1e-6)
    assert stacks[1].prev() is stacks[0] and stacks[0].prev() is start
    assert [len(h) for h in stacks[-1].h()] == [1, 1]
    assert [len(s) for s in stacks[-1].s()] == [2, 1]   # an LSTM's cell and output; a GRU's h
    for bad, message in (([], "needs a list of states"), ("states", "needs a list of states"),
                         ([lower], "entry 0 of the states is a VanillaLSTMBuilder, not a "
                                   "builder's state")):
        with pytest.raises(TypeError, match=message):
            dy.StackedRNNState(bad)
    with pytest.raises(TypeError, match="prev must be a StackedRNNState"):
        dy.StackedRNNState([lower.initial_state()], prev=lower.initial_state())


def _eg_run(sparse_updates=True, cyclical=None, values=None):
    pc = dy.ParameterCollection()
    p = pc.add_parameters(3)
    p.set_value([0.2, 0.3, 0.5] if values is None else values)
    E = pc.add_lookup_parameters((4, 2))
    E.init_from_array(np.full((4, 2), 0.5))
    trainer = dy.EGTrainer(pc, learning_rate=0.5, mom=0.5, ne=0.1)
    trainer.set_sparse_updates(sparse_updates)
    if cyclical is not None:
        trainer.enable_cyclical_lr(**cyclical)
    rates = []
    for step in range(4):
        dy.renew_cg()
        loss = dy.dot_product(p, dy.inputVector([1.0, -1.0, 0.5 * step])) + \
            dy.dot_product(E[step % 2], dy.inputVector([0.3, -0.3]))
        loss.backward()
        trainer.update()
        rates.append(trainer.learning_rate)
    return p.as_array(), E.as_array(), rates


def test_eg_trainer_keeps_each_parameter_and_each_row_a_distribution():
    p, E, rates = _eg_run()
    np.testing.assert_allclose(p.sum(), 1.0, rtol=1e-6)
    np.testing.assert_allclose(E.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(E[2:], 0.5)       # rows never looked up are left alone
    assert rates == [0.5] * 4
    _, E_dense, _ = _eg_run(sparse_updates=False)   # every row is its own distribution;
    np.testing.assert_allclose(E_dense.sum(axis=1), 1.0, rtol=1e-6)   # a row's momentum
    assert not np.allclose(E_dense[:2], E[:2])          # moves it when it is not looked up
    np.testing.assert_array_equal(E_dense[2:], 0.5)
    zero, _, _ = _eg_run(values=[0.0, 0.4, 0.6])
    assert zero[0] == 0.0 and zero.sum() == pytest.approx(1.0)   # an entry of 0 stays 0


def test_eg_trainer_cyclical_rate_and_negative_parameters():
    schedule = {"learning_rate_min": 0.1, "learning_rate_max": 0.5, "step_size": 2,
                "gamma": 1.0}
    _, _, rates = _eg_run(cyclical=schedule)
    np.testing.assert_allclose(rates, [dy.trainers.triangle_rate(it, 0.1, 0.5, 2, 1.0)
                                       for it in range(4)])
    np.testing.assert_allclose(rates, [0.1, 0.3, 0.5, 0.3])
    _, _, flat = _eg_run(cyclical={})      # DyNet's defaults: gamma 0, the minimum throughout
    np.testing.assert_allclose(flat, [0.01] * 4)
    pc = dy.ParameterCollection()
    W = pc.add_parameters((2, 2), init=dy.NumpyInitializer(np.array([[0.5, -0.1], [0.3, 0.3]])))
    trainer = dy.EGTrainer(pc)
    dy.renew_cg()
    dy.sum_elems(W * dy.inputVector([1.0, 2.0])).backward()
    with pytest.raises(ValueError, match=r"EGTrainer: parameter /_0 has a negative or NaN "
                                         r"entry.*initialize it with positive values"):
        trainer.update()
    np.testing.assert_allclose(W.as_array(), [[0.5, -0.1], [0.3, 0.3]], rtol=1e-6)  # unchanged
    with pytest.raises(ValueError, match="step_size must be positive"):
        trainer.enable_cyclical_lr(step_size=0)


# --- checkpoints ----------------------------------------------------------------------------
def _tried_and_reverted(strategy: str, when: str, tried: bool) -> list:
    """A loss built after nodes were tried out and reverted (``tried``), or never tried:
    the loss, a kept value and every parameter's gradient. The tried nodes use parameters
    and an LSTM builder for the first time in the graph (their nodes are removed by the
    revert, and the builder's shortcuts learnt on them must be forgotten), a constant
    parameter, and a product built before the mark but first used after it."""
    pc = dy.ParameterCollection()
    W, b, V = pc.add_parameters((3, 2)), pc.add_parameters(3), pc.add_parameters((4, 3))
    E = pc.add_lookup_parameters((5, 2))
    lstm = dy.VanillaLSTMBuilder(1, 3, 3, pc)
    for k, p in enumerate(pc.parameters_list() + [E]):
        p.set_value(np.sin(np.arange(p.as_array().size) + k).reshape(p.as_array().shape))
    dy.renew_cg(autobatching=strategy)
    x = E[1]
    h = dy.tanh(W * x + b)
    Vh = V * h
    if when in ("before", "both"):
        h.value()
    if tried:
        dy.cg_checkpoint()
        outs = lstm.initial_state().transduce([h, h * 2.0, h])
        guess = dy.esum([dy.pickneglogsoftmax(Vh + V * o, 2) for o in outs])
        guess = guess + dy.sum_elems(dy.const_parameter(V) * h) + dy.sum_elems(E[3])
        if when in ("tried", "both"):
            guess.value()
        dy.cg_revert()
    outs = lstm.initial_state().transduce([h, dy.sum_elems(E[2]) * 0.5 + h, h * 0.5])
    loss = dy.esum([dy.pickneglogsoftmax(Vh + V * o, 1) for o in outs])
    loss = loss + dy.sum_elems(dy.const_parameter(V) * dy.logistic(h))
    value = loss.value()
    loss.backward()
    graph = dy.cg().graph    # the nodes and their signatures (numbered as they come)
    nodes = [[op.name for op in graph.ops], graph.shapes, graph.sigs, len(graph.sigtab)]
    return [value, h.npvalue()] + [p.grad_as_array() for p in pc.parameters_list() + [E]], nodes


@pytest.mark.parametrize("strategy", ["none", "agenda", "depth"])
@pytest.mark.parametrize("when", ["never", "before", "tried", "both"])
def test_a_reverted_graph_computes_as_one_that_never_had_the_tried_nodes(strategy, when):
    """Whatever had run when (nothing, nodes before the mark, the tried nodes with the
    kept ones they needed, both): the same loss, values and gradients as a program that
    never built the tried nodes, and the same nodes with the same signatures. (DyNet 2.1
    crashes on this program: its parameters enter the graph after the mark.)"""
    fresh, fresh_nodes = _tried_and_reverted(strategy, when, tried=False)
    reverted, nodes = _tried_and_reverted(strategy, when, tried=True)
    for k, (a, b) in enumerate(zip(reverted, fresh)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"result {k}")
    assert nodes == fresh_nodes


def test_the_expressions_of_reverted_nodes_say_they_were_reverted():
    pc = dy.ParameterCollection()
    W = pc.add_parameters((2, 2))
    dy.renew_cg()
    x = dy.inputVector([1.0, 2.0])
    h = dy.tanh(W * x)
    dy.cg_checkpoint()
    y = dy.logistic(h)
    s = dy.sum_elems(y)
    dy.cg_revert()
    for use in (y.value, lambda: h + y, lambda: y + h, lambda: dy.tanh(y), s.backward,
                lambda: dy.concatenate([h, y]), y.dim):
        with pytest.raises(RuntimeError, match=r"built after a checkpoint.*removed by "
                                               r"revert\(\) \(DyNet's cg_revert\(\)\)"):
            use()
    assert "removed by cg_revert" in repr(y)
    z = dy.logistic(h)        # built again: the place of y, and y's value
    assert z.x.node == y.x.node
    np.testing.assert_allclose(z.npvalue(), 1 / (1 + np.exp(-h.npvalue())), rtol=1e-6)


def test_checkpoints_stack_and_a_revert_without_one_does_nothing():
    dy.renew_cg()
    graph = dy.cg().graph
    x = dy.inputVector([1.0, -2.0])
    dy.cg_revert()                               # no mark: nothing happens, as in DyNet
    assert len(graph) == 1
    dy.cg_checkpoint()
    a = dy.square(x)
    dy.cg_checkpoint()
    b = dy.exp(a)
    assert len(graph) == 3
    dy.cg_revert()                               # back to the inner mark: b goes, a stays
    assert len(graph) == 2 and a.value() == [1.0, 4.0]
    with pytest.raises(RuntimeError, match="cg_revert"):
        b.value()
    c = dy.cube(a)
    dy.cg().revert()                             # back to the outer mark: a and c go
    assert len(graph) == 1 and x.value() == [1.0, -2.0]
    for gone in (a, c):
        with pytest.raises(RuntimeError, match="cg_revert"):
            gone.value()
    dy.cg().checkpoint()
    dy.renew_cg()                                # a new graph has no marks
    y = dy.inputVector([3.0])
    dy.cg_revert()
    assert y.value() == 3.0 and len(dy.cg().graph) == 1


def test_what_is_made_once_per_graph_is_made_again_after_a_revert_removed_it():
    """A constant parameter, an LSTM gate bias with DyNet's forget bias added and a
    builder's dropout masks are made once per graph; made after a mark and reverted, they
    are made again when next used (DyNet would read the removed nodes' places)."""
    pc = dy.ParameterCollection()
    Wx, Wh, b = pc.add_parameters((8, 3)), pc.add_parameters((8, 2)), pc.add_parameters(8)
    rnn = dy.SimpleRNNBuilder(1, 3, 2, pc)
    rnn.set_dropout(0.5)
    dy.renew_cg()
    x, h = dy.inputVector([0.5, -1.0, 2.0]), dy.inputVector([0.1, 0.2])

    def build():
        return [dy.vanilla_lstm_gates(x, h, Wx, Wh, b), dy.const_parameter(b) * 2.0,
                rnn.initial_state().add_input(x).output()]

    dy.cg_checkpoint()
    tried = [e.npvalue() for e in build()]
    dy.cg_revert()
    again = build()
    for a, t in zip(again[:2], tried):
        np.testing.assert_allclose(a.npvalue(), t, rtol=1e-6)
    assert np.all(np.isfinite(again[2].npvalue()))       # (new masks: other numbers)


def test_a_transform_activated_in_reverted_nodes_keeps_its_gradient():
    """``b + W * x`` made before the mark, and ``logistic`` of it (one node, see above);
    ``tanh`` of it and its own node tried and reverted: its gradient is through the
    ``logistic`` node only."""
    pc = dy.ParameterCollection()
    W, c = pc.add_parameters((2, 3)), pc.add_parameters(2)
    dy.renew_cg()
    pre = W * dy.inputVector([0.5, -1.0, 2.0]) + c
    act = dy.logistic(pre)
    dy.cg_checkpoint()
    dy.tanh(pre).value()
    dy.square(pre).value()
    dy.cg_revert()
    dy.sum_elems(act).backward(full=True)
    s = 1 / (1 + np.exp(-(W.as_array() @ [0.5, -1.0, 2.0] + c.as_array())))
    np.testing.assert_allclose(pre.gradient(), s * (1 - s), rtol=1e-5)


def test_a_revert_keeps_the_runs_of_nodes_before_the_mark_only():
    """Values computed by a run of nodes before the mark only are kept; a run that also
    computed removed nodes is forgotten, and its kept nodes run again."""
    dy.renew_cg(autobatching=1)
    graph = dy.cg().graph
    x = dy.inputVector([1.0, 2.0])
    h = dy.tanh(x)
    h.value()                                    # run 1: x, h
    dy.cg_checkpoint()
    k = dy.exp(h)                                # kept? no: made after the mark
    k.value()                                    # run 2: k
    dy.cg_revert()
    assert (len(graph.plans), graph.n_evaluated) == (1, 2)
    g = dy.logistic(h)
    dy.cg_checkpoint()
    tried = dy.square(g)
    tried.value()                                # run 2: g (kept) and tried (removed)
    dy.cg_revert()
    assert (len(graph.plans), graph.n_evaluated) == (1, 2)   # g is computed again
    np.testing.assert_allclose(g.npvalue(), 1 / (1 + np.exp(-np.tanh([1.0, 2.0]))),
                               rtol=1e-6)
    assert (len(graph.plans), graph.n_evaluated) == (2, 3)


# --- dump_cg --------------------------------------------------------------------------------
def _dumped_graph():
    pc = dy.ParameterCollection()
    W, b = pc.add_parameters((3, 2), name="W"), pc.add_parameters(3, name="b")
    W.set_value(np.arange(6.0).reshape(3, 2) / 4.0)
    dy.renew_cg(autobatching=1)
    x = dy.inputVector([1.0, -1.0])
    loss = dy.sum_elems(dy.tanh(W * x + b))
    return loss, dy.cg().graph


def _blocks(text: str) -> dict:
    """``{node: [its lines]}`` of a dump."""
    blocks, node = {}, None
    for line in text.splitlines():
        if line.startswith("Node "):
            node = int(line.split(":")[0].split()[1])
            blocks[node] = [line]
        elif node is not None:
            blocks[node].append(line)
    return blocks


def test_dump_cg_prints_every_node_with_its_value_and_gradient(capsys):
    loss, graph = _dumped_graph()
    loss.backward(full=True)
    dy.dump_cg()
    text = capsys.readouterr().out
    assert text.startswith(f"DyNet graph {dy.cg_version()} (batchviz graph #{graph.number}")
    assert "not DyNet's format" in text.splitlines()[1]
    blocks = _blocks(text)
    assert sorted(blocks) == list(range(len(graph)))
    for node, lines in blocks.items():
        value = lines.index("Value:")
        gradient = lines.index("Gradient:")
        assert "\n".join(lines[value + 1:gradient]) == np.array2string(graph.value_of(node))
        assert "\n".join(lines[gradient + 1:]) == np.array2string(graph.gradient_of(node))
        if node in graph.param_of_node:
            assert lines[0] == (f"Node {node}: parameter {graph.param_of_node[node].name}, "
                                f"{'3x2' if graph.shapes[node] == (3, 2) else '3x1'}")
        else:
            op = graph.ops[node].name
            assert lines[0].startswith(f"Node {node}: {op}")
            assert f"batch {graph.layout.batch_of[node]} (signature " in lines[0]
    assert blocks[len(graph) - 1][-2:] == ["Gradient:", "1."]   # the loss


def test_dump_cg_to_a_file_and_its_options(tmp_path, capsys):
    dy.renew_cg()
    dy.dump_cg()
    assert capsys.readouterr().out == "(Computation graph is empty)\n"
    loss, graph = _dumped_graph()
    dy.dump_cg(show_values=False)                # nothing computed by backward yet
    text = capsys.readouterr().out
    assert "Value" not in text
    assert text.count("Gradient: (not computed)") == len(graph) - 2   # all but W and b
    dy.dump_cg(str(tmp_path / "graph.txt"))
    assert capsys.readouterr().out == ""
    dy.cg().dump()
    assert (tmp_path / "graph.txt").read_text() == capsys.readouterr().out
    bad = dy.log(dy.scalarInput(-1.0))
    with warns_on_numpy(RuntimeWarning):
        dy.dump_cg(nan_check_only=True, show_gradients=False)
    blocks = _blocks(capsys.readouterr().out)
    assert blocks[bad.x.node][1:] == ["Value: invalid"]
    assert blocks[loss.x.node][1:] == ["Value: valid"]
    with pytest.raises(TypeError, match="dump_cg: filename must be a str"):
        dy.dump_cg(None)


# --- tensors, transposed inputs, devices ----------------------------------------------------
def test_tensor_value_is_a_copy_with_dynets_operations():
    dy.renew_cg()
    e = dy.inputTensor(np.array([[0.5, 2.0], [3.0, -1.0], [1.0, 0.0]]))
    t = e.tensor_value()
    assert isinstance(t, dy.Tensor) and str(t) == "<Dynet Tensor:float>"
    assert t.as_numpy().tolist() == [[0.5, 2.0], [3.0, -1.0], [1.0, 0.0]]
    assert t.as_numpy().dtype == np.float64 and t.as_numpy() is not t.as_numpy()
    assert t.argmax().as_numpy().tolist() == [[1, 0]]
    assert t.argmax(1).as_numpy().tolist() == [[1], [0], [0]]
    values, ids = t.topk(0, 2)
    assert values.as_numpy().tolist() == [[3.0, 2.0], [1.0, 0.0]]
    assert ids.as_numpy().tolist() == [[1, 0], [2, 2]] and str(ids) == "<Dynet Tensor:int>"
    dy.renew_cg()                                # a copy: it outlives its graph
    assert t.as_numpy()[1, 0] == 3.0


@pytest.mark.parametrize("call, message", [
    (lambda t: t.argmax(0, 2), "num must be 1"),
    (lambda t: t.categorical_sample_log_prob(0, 2), "num must be 1"),
    (lambda t: t.argmax(3), r"dim 3 is out of range: a tensor of dimensions \(3, 2\)"),
    (lambda t: t.topk(-1), "dim must be an int >= 0"),
    (lambda t: t.topk(0, 4), "num must be between 1 and 3"),
    (lambda t: t.topk(2, 2), "num must be between 1 and 1"),   # a dimension of size 1
    (lambda t: dy.Tensor().as_numpy(), "holds no value"),
    (lambda t: dy.Tensor(np.ones((2, 3)), batch_size=2), "minibatch of 2 is the last axis"),
])
def test_tensor_mistakes_say_what_is_wrong(call, message):
    dy.renew_cg()
    t = dy.inputTensor(np.arange(6.0).reshape(3, 2)).tensor_value()
    with pytest.raises(ValueError, match=message):
        call(t)


def test_categorical_samples_follow_the_log_probabilities():
    dy.renew_cg()
    logits = np.array([0.0, 1.0, 2.0])
    t = dy.log_softmax(dy.inputVector(logits)).tensor_value()
    dy.reset_random_seed(3)
    draws = [int(t.categorical_sample_log_prob().as_numpy()[0]) for _ in range(3000)]
    dy.reset_random_seed(3)
    assert [int(t.categorical_sample_log_prob().as_numpy()[0]) for _ in range(50)] == draws[:50]
    expected = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 3000, expected, atol=0.03)
    sure = dy.inputTensor(np.log([[0.9999, 1e-4], [1e-4, 0.9999]]), batched=True).tensor_value()
    assert sure.categorical_sample_log_prob().as_numpy().tolist() == [[0, 1]]


def test_input_tensor_transpose_reads_values_column_major():
    """DyNet's layout, the first index fastest and the minibatch last: an array flattened
    in Fortran order gives the array back."""
    dy.renew_cg()
    arr = np.arange(24.0).reshape(2, 3, 4)
    e = dy.inputTensorTranspose(arr.ravel(order="F"), (2, 3, 4))
    assert isinstance(e, dy.inputTensorTranspose) and isinstance(e, dy.Expression)
    assert e.dim() == ((2, 3, 4), 1) and np.array_equal(e.npvalue(), arr)
    batch = dy.inputTensorTranspose(arr.ravel(order="F"), (2, 3), batch_size=4)
    assert batch.dim() == ((2, 3), 4) and np.array_equal(batch.npvalue(), arr)
    for bad, message in [((np.ones((2, 2)), (2, 2)), "a flat list or a 1-d array"),
                         ((np.ones(5), (2, 3)), r"\(2, 3\) and batch size 1 hold 6 values, "
                                                "but 5 were given"),
                         ((np.ones(4), 4), "dim must be a tuple"),
                         ((np.ones(4), (4,), 0), "batch_size must be a positive int")]:
        with pytest.raises((TypeError, ValueError), match=message):
            dy.inputTensorTranspose(*bad)


def test_the_one_device_is_listed_and_described():
    expected = "GPU:0" if bv.get_backend() == "cupy" else "CPU"
    assert dy.available_devices() == [expected]
    for name in ("", expected):
        info = dy.get_device_info(name)
        assert isinstance(info, dy.DeviceInfo)
        assert (info.name, info.id, info.type) == (expected, 0, -1)
    with pytest.raises(RuntimeError, match=rf"Invalid device name: 'GPU:3'.*one device, "
                                           rf"'{expected}'"):
        dy.get_device_info("GPU:3")
    with pytest.raises(TypeError, match="device name must be a str"):
        dy.get_device_info(0)
