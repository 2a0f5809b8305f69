"""batchviz.dynet against the real DyNet (the ``dyNET38`` wheel, module ``dynet``): the same
programs with the same parameter values give the same values, dimensions and gradients at
float32 tolerance, for every op of tests/dynet_cases.py, under no autobatching and under
batchviz's agenda."""
import ctypes
import glob
import os

import numpy as np
import pytest

import batchviz as bv
import batchviz.dynet as bvdy

from dynet_cases import (BUILDER_CASES, CHECKPOINT_CASES, CLUSTERS, EG_CASES, OP_CASES,
                         SOFTMAX_CASES, STEP, TENSORS, TRAINER_CASES, VALUES_ONLY, WORD_IDS, XB,
                         batch, batched, distributions, make_parameters, run_builder, run_case,
                         run_checkpoints, run_eg_trainer, run_trainer, tensor_facts,
                         transposed_inputs, values_for, vec)

real = pytest.importorskip("dynet", reason="the real DyNet (pip install dyNET38, the "
                           "'dynet' test extra) is not importable: no conformance check")

RTOL, ATOL = 2e-4, 2e-5


def assert_same(mine: dict, theirs: dict, what: str) -> None:
    assert mine["dim"] == theirs["dim"], f"{what}: dimension"
    np.testing.assert_allclose(mine["value"], theirs["value"], rtol=RTOL, atol=ATOL,
                               err_msg=f"{what}: value")
    assert mine["loss"] == pytest.approx(theirs["loss"], rel=RTOL, abs=ATOL)
    if what in VALUES_ONLY:   # (see its reasons; the gradient is checked by finite differences)
        return
    for k, (g, h) in enumerate(zip(mine["grads"], theirs["grads"])):
        np.testing.assert_allclose(g, h, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{what}: gradient of parameter {k}")


@pytest.mark.parametrize("strategy", ["none", "agenda"])
@pytest.mark.parametrize("name", sorted(OP_CASES))
def test_op_matches_dynet(name, strategy):
    specs, build = OP_CASES[name]
    theirs = run_case(real, specs, build)
    mine = run_case(bvdy, specs, build, lambda: bvdy.renew_cg(autobatching=strategy))
    assert_same(mine, theirs, name)


@pytest.mark.parametrize("strategy", ["none", "agenda"])
@pytest.mark.parametrize("name", sorted(BUILDER_CASES))
def test_builder_matches_dynet(name, strategy):
    make, build = BUILDER_CASES[name]
    theirs = run_builder(real, make, build)
    mine = run_builder(bvdy, make, build, lambda: bvdy.renew_cg(autobatching=strategy))
    assert_same_run(mine, theirs, name)


def assert_same_run(mine: dict, theirs: dict, name: str) -> None:
    """The same dimensions, values, loss and gradients (of the table, then the builder's)."""
    assert mine["dims"] == theirs["dims"]
    for k, (a, b) in enumerate(zip(mine["values"], theirs["values"])):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"{name}: output {k}")
    assert mine["loss"] == pytest.approx(theirs["loss"], rel=RTOL, abs=ATOL)
    for k, (g, h) in enumerate(zip(mine["grads"], theirs["grads"])):
        np.testing.assert_allclose(g, h, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{name}: gradient of parameter {k} (0: the table)")


@pytest.mark.parametrize("strategy", ["none", "agenda"])
@pytest.mark.parametrize("name", sorted(SOFTMAX_CASES))
def test_softmax_builder_matches_dynet(name, strategy, tmp_path):
    clusters = tmp_path / "clusters.txt"
    clusters.write_text(CLUSTERS)
    make, build = SOFTMAX_CASES[name]
    made = lambda dy, pc: make(dy, pc, str(clusters))   # noqa: E731
    theirs = run_builder(real, made, build)
    mine = run_builder(bvdy, made, build, lambda: bvdy.renew_cg(autobatching=strategy))
    assert_same_run(mine, theirs, name)


#: the words of each cluster of dynet_cases.CLUSTERS, by cluster id (the order of the file)
CLUSTER_WORDS = {0: [0, 2, 6], 1: [1, 4], 2: [3]}


def _factored_parts(dy, clusters: str) -> dict:
    pc = dy.ParameterCollection()
    sm = dy.ClassFactoredSoftmaxBuilder(3, clusters, WORD_IDS, pc)
    for k, p in enumerate(pc.parameters_list()):
        p.set_value(values_for(p.shape(), 300 + k))
    dy.renew_cg()
    rep = dy.inputVector([0.4, -0.2, 0.9])
    return {"full_logits": sm.full_logits(rep).npvalue(),
            "full_log_distribution": sm.full_log_distribution(rep).npvalue(),
            "losses": [sm.neg_log_softmax(rep, w).value() for w in (0, 1, 2, 3, 4, 6)],
            "classes": sm.class_log_distribution(rep).npvalue(),
            "words": {c: sm.subclass_log_distribution(rep, c).npvalue()
                      for c, ws in CLUSTER_WORDS.items() if len(ws) > 1}}


def test_class_factored_full_distribution_is_dynets_two_softmaxes_combined(tmp_path):
    """``full_logits`` is ``log p(class) + log p(word | class)`` from DyNet's own two
    distributions (-10000 for the id 5, in no cluster, as DyNet), so ``full_log_distribution``
    is the distribution whose entries the losses are. DyNet 2.1 adds ``p(word | class)``
    itself, not its log (docs/dynet.md, "What differs")."""
    clusters = tmp_path / "clusters.txt"
    clusters.write_text(CLUSTERS)
    mine, theirs = _factored_parts(bvdy, str(clusters)), _factored_parts(real, str(clusters))
    expected = np.full(7, -10000.0)
    for c, words in CLUSTER_WORDS.items():
        for row, w in enumerate(words):
            expected[w] = theirs["classes"][c] + (theirs["words"][c][row] if len(words) > 1
                                                  else 0.0)
    for key in ("full_logits", "full_log_distribution"):
        np.testing.assert_allclose(mine[key], expected, rtol=RTOL, atol=ATOL, err_msg=key)
    np.testing.assert_allclose(mine["losses"], theirs["losses"], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(mine["losses"], -expected[[0, 1, 2, 3, 4, 6]], rtol=RTOL)
    assert not np.allclose(theirs["full_logits"], expected, rtol=RTOL, atol=ATOL)


def _mixed_update_flags(dy, update_false_between: bool) -> np.ndarray:
    pc = dy.ParameterCollection()
    sm = dy.StandardSoftmaxBuilder(3, 5, pc)
    for k, p in enumerate(pc.parameters_list()):
        p.set_value(values_for(p.shape(), 400 + k))
    dy.renew_cg()
    rep = dy.inputVector([0.4, -0.2, 0.9])
    first = sm.neg_log_softmax(rep, 1)
    if update_false_between:
        sm.neg_log_softmax(rep, 2, update=False).value()
    (first + sm.neg_log_softmax(rep, 3)).backward()
    return pc.parameters_list()[0].grad_as_array()


def test_each_calls_update_flag_counts_where_dynet_keeps_the_first_of_a_graph():
    """A call with ``update=False`` between two with ``update=True`` leaves the gradient of
    the two as it is without it; DyNet's second ``update=True`` loss reuses the constant
    weights of the graph and sends them no gradient (docs/dynet.md, "What differs")."""
    both = _mixed_update_flags(real, False)
    np.testing.assert_allclose(_mixed_update_flags(bvdy, True), both, rtol=RTOL, atol=ATOL)
    assert not np.allclose(_mixed_update_flags(real, True), both, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", sorted(TRAINER_CASES))
def test_trainer_matches_dynet(name):
    theirs = run_trainer(real, name)
    mine = run_trainer(bvdy, name, lambda: bvdy.renew_cg(autobatching="agenda"))
    for step, (a, b) in enumerate(zip(mine, theirs)):
        for which, x, y in zip(("E", "W", "b"), a, b):
            np.testing.assert_allclose(x, y, rtol=RTOL, atol=ATOL,
                                       err_msg=f"{name}: {which} after update {step + 1}")


class DynetEGTrainer:
    """DyNet's C++ ``EGTrainer`` on a collection of the real module, through ctypes: DyNet
    2.1 defines it (``training.h``) but its Python module has no class for it. The wheel's
    library exports the constructor and ``update``; the C++ collection sits in the Python
    object after its header and vtable pointer (24 bytes on 64-bit CPython: checked below
    by the collection's parameter count)."""

    def __init__(self, pc, learning_rate: float = 0.1, mom: float = 0.9, ne: float = 0.0):
        paths = glob.glob(os.path.join(os.path.dirname(real.__file__), "dyNET38.libs",
                                       "libdynet-*.so"))
        if not paths:
            pytest.skip("the dyNET38 wheel's libdynet is not found: no EGTrainer to compare")
        lib = ctypes.CDLL(paths[0])
        try:
            make = lib._ZN5dynet9EGTrainerC1ERNS_19ParameterCollectionEfff
            self._update = lib._ZN5dynet9EGTrainer6updateEv
            count = lib._ZNK5dynet19ParameterCollection15parameter_countEv
        except AttributeError:
            pytest.skip("this libdynet does not export EGTrainer's constructor and update")
        count.restype, count.argtypes = ctypes.c_size_t, [ctypes.c_void_p]
        collection = id(pc) + 24
        if count(collection) != sum(int(np.prod(p.shape())) for p in pc.parameters_list()) + sum(
                int(np.prod(p.shape())) for p in pc.lookup_parameters_list()):
            pytest.skip("the C++ collection is not where this test expects it")
        make.argtypes = [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_float] * 3
        self._update.argtypes = [ctypes.c_void_p]
        self._object = ctypes.create_string_buffer(1 << 16)   # (more than it takes; kept)
        self._pc = pc
        make(ctypes.addressof(self._object), collection, learning_rate, mom, ne)

    def update(self) -> None:
        self._update(ctypes.addressof(self._object))


@pytest.mark.parametrize("name", sorted(EG_CASES))
def test_eg_trainer_matches_dynets_cpp_rule(name):
    """A mixture weight vector and a table of distributions (sparse row updates) after each
    of three updates: DyNet's C++ EGTrainer and batchviz's."""
    theirs = run_eg_trainer(real, DynetEGTrainer, name)
    mine = run_eg_trainer(bvdy, bvdy.EGTrainer, name)
    for step, (a, b) in enumerate(zip(mine, theirs)):
        for which, x, y in zip(("E", "p"), a, b):
            np.testing.assert_allclose(x, y, rtol=RTOL, atol=ATOL,
                                       err_msg=f"{name}: {which} after update {step + 1}")
    assert not np.allclose(mine[-1][0], distributions((6, 4), 2))   # the rows moved
    np.testing.assert_allclose(mine[-1][0].sum(axis=1), 1.0, rtol=1e-5)


def _matrix_by_eg(dy, make_trainer) -> np.ndarray:
    pc = dy.ParameterCollection()
    W = pc.add_parameters((2, 3))
    W.set_value(np.full((2, 3), 1.0 / 6.0))
    trainer = make_trainer(pc)
    dy.renew_cg()
    dy.sum_elems(dy.cmult(W, dy.inputTensor(np.arange(6.0).reshape(2, 3) / 5.0))).backward()
    trainer.update()
    return W.as_array()


def test_eg_trainer_makes_a_matrix_one_distribution_where_dynet_normalises_its_first_column():
    """DyNet 2.1's EGTrainer normalises a matrix by the log-sum-exp of its first column
    only (docs/dynet.md, "What differs"); batchviz's makes the whole matrix one
    distribution. The first column agrees up to that one scale. (Three columns: DyNet also
    writes the other columns' sums into its one-number buffers, past their end but inside
    the 32 bytes its memory pool gives each.)"""
    theirs, mine = _matrix_by_eg(real, DynetEGTrainer), _matrix_by_eg(bvdy, bvdy.EGTrainer)
    np.testing.assert_allclose(theirs[:, 0].sum(), 1.0, rtol=1e-5)
    assert theirs.sum() > 1.5
    np.testing.assert_allclose(mine.sum(), 1.0, rtol=1e-5)
    np.testing.assert_allclose(mine / mine[:, 0].sum(), theirs, rtol=RTOL, atol=ATOL)


def _sparse_lstm_facts(dy) -> list:
    """Names, order, spec and the masks' count after set_sparsity of sparse LSTMs."""
    pc = dy.ParameterCollection()
    pc.add_parameters(2)
    sparse = dy.SparseLSTMBuilder(2, 3, 4, pc)
    normed = dy.SparseLSTMBuilder(1, 3, 4, pc, ln_lstm=True, forget_bias=0.5)
    dy.renew_cg()
    sparse.initial_state()
    sparse.set_sparsity(0.3)
    masks = [p.as_array() for layer in sparse.get_parameters() for p in layer[3:]]
    return [[p.name() for b in (sparse, normed) for layer in b.get_parameters() for p in layer],
            [p.name() for p in pc.parameters_list()], sparse.spec, normed.spec,
            sparse.whoami(), normed.whoami(), [len(layer) for layer in
                                               sparse.get_parameter_expressions()],
            sum(float(m.sum()) for m in masks), sum(m.size for m in masks)]


def test_sparse_lstm_parameters_are_named_and_listed_as_dynets():
    assert _sparse_lstm_facts(bvdy) == _sparse_lstm_facts(real)


def test_dynets_stacked_rnn_state_cannot_be_made():
    """DyNet 2.1's ``StackedRNNState`` fails in its constructor (docs/dynet.md, "What
    differs"): the conformance case runs what its code describes (dynet_cases.StackedByHand)."""
    pc = real.ParameterCollection()
    real.renew_cg()
    with pytest.raises(AttributeError, match="read-only"):
        real.StackedRNNState([real.GRUBuilder(1, 2, 2, pc).initial_state()])


def test_every_public_name_of_dynet_is_in_batchviz_dynet():
    """A program may use any name of DyNet's module: each exists here (the modules DyNet's
    module imports for itself, such as ``np`` and ``pickle``, aside)."""
    modules = {"np", "os", "pickle", "sys", "print_function"}
    names = {n for n in dir(real) if not n.startswith("_")} - modules
    assert len(names) > 150
    assert sorted(n for n in names if not hasattr(bvdy, n)) == []
    # and every public method of each of its classes (two attributes that batchviz's
    # classes set per instance, a trainer's learning_rate and a builder's spec, aside)
    missing = {}
    for name in names:
        theirs, mine = getattr(real, name), getattr(bvdy, name)
        if isinstance(theirs, type) and isinstance(mine, type):
            lacking = {m for m in dir(theirs) if not m.startswith("_")} - set(dir(mine))
            if lacking - {"learning_rate", "spec"}:
                missing[name] = sorted(lacking - {"learning_rate", "spec"})
    assert missing == {}


def _api_facts(dy) -> dict:
    """What a program sees of the API besides values: value() types, dims, names."""
    pc = dy.ParameterCollection()
    a, W1, W2 = pc.add_parameters(3), pc.add_parameters((2, 3), name="W"), pc.add_parameters(2, name="W")
    sub = pc.add_subcollection("sub")
    c, E = sub.add_parameters(2), pc.add_lookup_parameters((5, 2))
    lstm = dy.VanillaLSTMBuilder(1, 2, 3, pc)
    d = sub.add_parameters(1)                      # a sub-collection's, made after others
    normed = dy.VanillaLSTMBuilder(1, 2, 3, pc, True)   # its gains and biases are pc's own
    a.set_value(np.arange(3.0))
    T = pc.add_lookup_parameters((3, 2, 3))          # rows that are matrices
    T.init_row(1, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0])    # (column-major, as DyNet reads them)
    dy.renew_cg()
    x = dy.inputTensor(np.arange(6.0).reshape(2, 3))
    b = dy.inputTensor(np.arange(6.0).reshape(2, 3), batched=True)
    s = dy.scalarInput(2.5)
    images = [np.arange(6.0).reshape(2, 3) + 10 * i for i in range(4)]   # a list of arrays:
    listed, unflagged = dy.inputTensor(images, batched=True), dy.inputTensor(images)  # a batch
    return {
        "sparse": (dy.sparse_inputTensor(([0, 1], [2, 0]), [5.0, 7.0], (2, 3)).npvalue().tolist(),
                   dy.sparse_inputTensor(([1], [0], [1]), [2.0], (2, 2, 3), batched=True,
                                         defval=0.5).npvalue().tolist()),
        "list of arrays": (listed.dim(), listed.npvalue().tolist(), unflagged.dim(),
                           dy.inputTensor([np.ones(2), np.zeros(2)]).dim(),
                           dy.inputTensor([[1.0, 2.0], [3.0, 4.0]], batched=True).dim()),
        "names": [p.name() for p in (a, W1, W2, c, E)] + [sub.name(), pc.name()]
        + [p.name() for p in lstm.get_parameters()[0]],
        "counts": (len(pc.parameters_list()), len(pc.lookup_parameters_list())),
        "in the order made": [p.name() for p in pc.parameters_list()]
        + [p.name() for p in sub.parameters_list()] + [d.name()]
        + [p.name() for layer in normed.get_parameters() for p in layer] + [normed.spec],
        "scalar": (s.value(), s.dim(), s.npvalue().shape, s.scalar_value()),
        "vector": (dy.tanh(a).value(), dy.tanh(a).dim()),
        "matrix": (type(x.value()).__name__, x.dim(), x.npvalue().tolist()),
        "batch": (b.value(), b.dim(), b.npvalue().tolist(), b.vec_value()),
        "batch of scalars": (dy.sum_elems(b).value(), dy.sum_elems(b).npvalue().shape),
        "parameter": (a.dim(), a.npvalue().tolist(), a.shape(), E.shape(), len(E),
                      E.npvalue().shape, E.as_array().shape),
        "lookup dims": (E[1].dim(), E.batch([0, 1, 4]).dim(), dy.lookup_batch(E, [2]).dim()),
        "tensor rows": (T.shape(), T[1].dim(), T[1].npvalue().tolist(), T.as_array()[1].tolist(),
                        T.batch([1, 0]).dim(), T.batch([1, 0]).npvalue()[:, :, 0].tolist()),
    }


def test_the_api_around_values_matches_dynet():
    mine, theirs = _api_facts(bvdy), _api_facts(real)
    for key in theirs:
        assert _close(mine[key], theirs[key]), f"{key}: {mine[key]!r} != {theirs[key]!r}"


def _lookups_set_again(dy) -> dict:
    """A looked-up row, and a minibatch of rows, whose rows ``set`` changes after a first
    run: the values and the gradients of the rows looked up last."""
    pc = dy.ParameterCollection()
    E = pc.add_lookup_parameters((6, 2))
    E.init_from_array(np.arange(12.0).reshape(6, 2) / 10.0)
    dy.renew_cg()
    row, rows = E[5], dy.lookup_batch(E, [0, 1])
    first = (row.value(), rows.npvalue().tolist())
    row.set(2)
    rows.set([4, 3])
    loss = dy.sum_batches(dy.sum_elems(dy.cmult(rows, rows))) + dy.sum_elems(row * 3.0)
    loss.backward()
    return {"first": first, "then": (row.value(), rows.npvalue().tolist(), loss.value()),
            "gradient": E.grad_as_array().tolist()}


def test_a_lookup_set_to_another_row_matches_dynet():
    mine, theirs = _lookups_set_again(bvdy), _lookups_set_again(real)
    for key in theirs:
        assert _close(mine[key], theirs[key]), f"{key}: {mine[key]!r} != {theirs[key]!r}"


def _close(a, b) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-5 * max(1.0, abs(b))
    return a == b


def _xor(dy, iterations: int) -> list:
    """DyNet's reuse of one graph: inputs changed with set(), values and updates in a loop."""
    pc = dy.ParameterCollection()
    W, b, V, a = make_parameters(dy, pc, [(8, 2), (8,), (1, 8), (1,)])
    trainer = dy.SimpleSGDTrainer(pc)
    x, y = dy.vecInput(2), dy.scalarInput(0)
    loss = dy.squared_distance(V * dy.tanh(W * x + b) + a, y)
    losses = []
    for it in range(iterations):
        for mi in range(4):
            x1, x2 = mi % 2, (mi // 2) % 2
            x.set([1 if x1 else -1, 1 if x2 else -1])
            y.set(1 if x1 != x2 else -1)
            losses.append(loss.scalar_value())
            loss.backward()
            trainer.update()
    return losses


def test_a_graph_reused_with_set_matches_dynet():
    real.renew_cg()
    theirs = _xor(real, 5)
    bvdy.renew_cg(autobatching=1)
    mine = _xor(bvdy, 5)
    np.testing.assert_allclose(mine, theirs, rtol=RTOL, atol=ATOL)
    assert mine[-1] < mine[0]


def _gradients_of_expressions(dy) -> list:
    """``gradient()`` of an input, an intermediate node and a parameter after
    ``backward(full=True)``."""
    pc = dy.ParameterCollection()
    (W,) = make_parameters(dy, pc, [(3, 4)])
    dy.renew_cg()
    x = dy.inputVector([0.5, -1.0, 2.0, 0.1])
    h = dy.tanh(W * x)
    b = dy.inputTensor(np.arange(6.0).reshape(3, 2) / 5.0, batched=True)
    loss = dy.sum_batches(dy.sum_elems(dy.cmult(dy.logistic(h), dy.tanh(b))))
    loss.backward(full=True)
    return [x.gradient(), h.gradient(), b.gradient(), W.gradient(), W.grad_as_array()]


def test_gradients_of_expressions_match_dynet():
    for mine, theirs in zip(_gradients_of_expressions(bvdy), _gradients_of_expressions(real)):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=RTOL, atol=ATOL)


def _poisson_loss(dy, shape, count: int) -> list:
    """The value of ``poisson_loss`` and its parameter's gradient, the loss backward itself."""
    pc = dy.ParameterCollection()
    (log_lambda,) = make_parameters(dy, pc, [shape])
    dy.renew_cg()
    loss = dy.poisson_loss(log_lambda, count)
    value = loss.npvalue()
    loss.backward()
    return [value, log_lambda.grad_as_array()]


@pytest.mark.parametrize("shape, count", [((1,), 3), ((1, 1), 0)])
def test_poisson_loss_as_the_loss_matches_dynet(shape, count):
    """Not an op case: DyNet's gradient of ``poisson_loss`` leaves out the gradient reaching
    it (docs/dynet.md, "What differs"), so it is the loss's own only where that is 1."""
    for mine, theirs in zip(_poisson_loss(bvdy, shape, count), _poisson_loss(real, shape, count)):
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=RTOL, atol=ATOL)


def _initial_values(dy) -> list:
    """Parameters whose initializers leave nothing to chance."""
    pc = dy.ParameterCollection()
    arr = np.arange(6.0).reshape(2, 3)
    return [p.as_array() for p in (
        pc.add_parameters((2, 3), init=0.5), pc.add_parameters((3, 3), init="identity"),
        pc.add_parameters((2, 3), init=dy.ConstInitializer(-2.0)),
        pc.add_parameters((3, 3), init=dy.IdentityInitializer()),
        pc.add_parameters((2, 3), init=dy.NumpyInitializer(arr)),
        pc.add_parameters((2, 3), init=arr), pc.parameters_from_numpy(arr),
        pc.lookup_parameters_from_numpy(arr), pc.add_lookup_parameters((2, 3), init=0.25),
        pc.add_parameters(4, init=0.0))]


def test_deterministic_initializers_match_dynet():
    for mine, theirs in zip(_initial_values(bvdy), _initial_values(real)):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("make, shape", [
    (lambda dy, pc: pc.add_parameters((200, 300)), (200, 300)),                   # Glorot
    (lambda dy, pc: pc.add_parameters(5000), (5000,)),
    (lambda dy, pc: pc.add_lookup_parameters((2000, 50)), (2000, 50)),   # a d x rows tensor
    (lambda dy, pc: pc.add_lookup_parameters((2000, 50), init=dy.GlorotInitializer(True)),
     (2000, 50)),
    (lambda dy, pc: pc.add_lookup_parameters((2000, 50), init="he"), (2000, 50)),
    (lambda dy, pc: pc.add_parameters((200, 300), init="uniform", scale=0.3), (200, 300)),
    (lambda dy, pc: pc.add_parameters((200, 300), init="normal", mean=1.0, std=0.5), (200, 300)),
    (lambda dy, pc: pc.add_parameters((200, 300), init=dy.NormalInitializer(0.0, 4.0)),
     (200, 300)),
    (lambda dy, pc: pc.add_parameters((200, 300), init="he"), (200, 300)),
    (lambda dy, pc: pc.add_parameters((200, 300), init=dy.GlorotInitializer(gain=2.0)),
     (200, 300)),
], ids=["glorot", "glorot vector", "glorot table", "glorot is_lookup", "he table", "uniform",
        "normal", "NormalInitializer", "he", "glorot gain"])
def test_random_initializers_draw_dynets_distributions(make, shape):
    """The same distribution: the same range, mean and spread, on draws large enough (tens
    of thousands of values) that the estimates are within a few percent."""
    real.reset_random_seed(5)
    bvdy.reset_random_seed(5)
    mine = make(bvdy, bvdy.ParameterCollection()).as_array()
    theirs = make(real, real.ParameterCollection()).as_array()
    assert mine.shape == theirs.shape == shape
    error = theirs.std() / np.sqrt(theirs.size)   # the standard error of a mean
    assert abs(mine.mean() - theirs.mean()) < 6 * error
    assert mine.std() == pytest.approx(theirs.std(), rel=0.05)
    assert np.abs(mine).max() <= np.abs(theirs).max() * 1.25


def test_saxe_is_orthonormal_as_dynet():
    q = bvdy.ParameterCollection().add_parameters((6, 6), init=bvdy.SaxeInitializer()).as_array()
    np.testing.assert_allclose(q @ q.T, np.eye(6), atol=1e-5)


def test_trainer_status_prints_what_dynet_prints(capfd):
    outputs = []
    for dy in (real, bvdy):
        pc = dy.ParameterCollection()
        (W,) = make_parameters(dy, pc, [(3, 4)])
        trainer = dy.SimpleSGDTrainer(pc, 0.25)
        trainer.set_clip_threshold(0.1)
        for _ in range(3):
            dy.renew_cg()
            dy.sum_elems(dy.square(W * dy.inputVector([1.0, 2.0, 3.0, 4.0]))).backward()
            trainer.update()
        trainer.status()
        outputs.append(capfd.readouterr().err)
    assert outputs[0] == outputs[1] == "[lr=0.25 clips=3 updates=3] "


CONTRACT_CASES = {
    "one of each": lambda dy, P: dy.contract3d_1d(P[0], P[1]),
    "a minibatch of y": lambda dy, P: dy.contract3d_1d(P[0], batched(dy, P[1], 4)),
    "a minibatch of x": lambda dy, P: dy.contract3d_1d(dy.cmult(P[0], batch(dy, TENSORS)), P[1]),
}


@pytest.mark.parametrize("case", sorted(CONTRACT_CASES))
def test_contract3d_1d_without_a_bias_has_dynets_gradients_and_the_true_value(case):
    """DyNet 2.1 adds ``contract3d_1d``'s products (without a bias) to memory it has not
    cleared: its value is whatever was there plus the contraction (docs/dynet.md, "What
    differs"). Its gradients do not depend on the value: they are compared here, and the
    value with NumPy's contraction over the last axis."""
    specs, build = [(2, 3, 4), (4,)], CONTRACT_CASES[case]
    theirs = run_case(real, specs, build)
    mine = run_case(bvdy, specs, build, lambda: bvdy.renew_cg(autobatching="agenda"))
    x, y = (values_for(s, 100 + k) for k, s in enumerate(specs))
    expected = {"one of each": np.einsum("ijk,k->ij", x, y),
                "a minibatch of y": np.einsum("ijk,kb->ijb", x, y[:, None] * (XB + 0.3)),
                "a minibatch of x": np.einsum("ijkb,k->ijb", x[..., None] * TENSORS, y)}[case]
    assert mine["dim"] == theirs["dim"]
    np.testing.assert_allclose(mine["value"], expected, rtol=RTOL, atol=ATOL)
    for k, (g, h) in enumerate(zip(mine["grads"], theirs["grads"])):
        np.testing.assert_allclose(g, h, rtol=RTOL, atol=ATOL, err_msg=f"gradient {k}")


def _masked_step(masks_in_op: bool):
    """A minibatch of inputs, an unbatched state, dropout masks: the gates of the masked
    inputs, by the dropout op or by ``cmult`` first."""
    def build(dy, P):
        x, mask_x, mask_h = batch(dy, XB), batch(dy, (XB > 0) * 2.0), vec(dy, [0.5, 1.5])
        if masks_in_op:
            return dy.vanilla_lstm_gates_dropout(x, P[3], P[0], P[1], P[2], mask_x, mask_h)
        return dy.vanilla_lstm_gates(dy.cmult(x, mask_x), dy.cmult(P[3], mask_h), P[0], P[1],
                                     P[2])
    return build


def test_dropout_gates_of_an_unbatched_state_are_the_gates_of_the_masked_inputs():
    """DyNet 2.1's ``vanilla_lstm_gates_dropout`` gives an unbatched ``h_tm1`` read by a
    minibatch the gradient of the first instance only (docs/dynet.md, "What differs");
    batchviz's is that of the gates of ``x * mask_x`` and ``h * mask_h``, DyNet's own."""
    specs = STEP + [(2,)]
    mine = run_case(bvdy, specs, _masked_step(True))
    assert_same(mine, run_case(real, specs, _masked_step(False)), "dropout gates")
    assert not np.allclose(run_case(real, specs, _masked_step(True))["grads"][3],
                           mine["grads"][3], rtol=RTOL, atol=ATOL)


def _state_minibatch(dy, P):
    """An unbatched input and a minibatch of states; DyNet's program makes the input a
    minibatch first (``+ zeros`` of the batch)."""
    x = P[3] if dy is bvdy else P[3] + dy.zeros(4, batch_size=3)
    return dy.vanilla_lstm_gates(x, batched(dy, P[4], 2), P[0], P[1], P[2])


def test_gates_of_one_input_and_a_minibatch_of_states_are_a_minibatch():
    """DyNet 2.1 takes the minibatch size of ``vanilla_lstm_gates`` from ``x_t``: one input
    and a minibatch of states give one vector, of the first state (docs/dynet.md, "What
    differs"). batchviz uses the input for every state, as DyNet's other ops do."""
    specs = STEP + [(4,), (2,)]
    mine = run_case(bvdy, specs, _state_minibatch)
    assert_same(mine, run_case(real, specs, _state_minibatch), "one input, states")
    assert mine["dim"] == ((8,), 3)
    dy = real
    dy.renew_cg()
    pc = dy.ParameterCollection()
    P = make_parameters(dy, pc, specs)
    assert dy.vanilla_lstm_gates(P[3], batched(dy, P[4], 2), P[0], P[1], P[2]).dim() == ((8,), 1)


@pytest.mark.parametrize("strategy", ["none", "agenda"])
@pytest.mark.parametrize("case", CHECKPOINT_CASES)
def test_nodes_reverted_to_a_checkpoint_leave_dynets_values_and_gradients(case, strategy):
    """Nodes tried out between ``cg_checkpoint`` and ``cg_revert``, computed or not,
    change nothing of the loss built after the revert, as in DyNet."""
    theirs = run_checkpoints(real, case)
    mine = run_checkpoints(bvdy, case, lambda: bvdy.renew_cg(autobatching=strategy))
    for what, a, b in zip(["loss", "layer", "W", "b", "V"], mine, theirs):
        np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"{case}: {what}")


def test_tensor_values_match_dynet():
    mine, theirs = tensor_facts(bvdy), tensor_facts(real)
    for name in theirs:
        for k, (a, b) in enumerate(zip(mine[name], theirs[name])):
            if isinstance(b, np.ndarray):
                assert a.shape == b.shape and a.dtype == b.dtype, f"{name}, fact {k}"
                np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=f"{name}, fact {k}")
            else:
                assert a == b, f"{name}, fact {k}: {a!r} != {b!r}"


def test_transposed_inputs_match_dynet():
    for k, (a, b) in enumerate(zip(transposed_inputs(bvdy), transposed_inputs(real))):
        assert a[0] == b[0], f"input {k}: dimensions"
        for x, y in zip(a[1:], b[1:]):
            assert x.shape == y.shape, f"input {k}"
            np.testing.assert_allclose(x, y, rtol=RTOL, atol=ATOL, err_msg=f"input {k}")


@pytest.mark.parametrize("make", [
    lambda dy: dy.inputTensorTranspose(np.arange(6.0).reshape(2, 3), (2, 3)),   # not flat
    lambda dy: dy.inputTensorTranspose(np.arange(5.0), (2, 3)),                 # 5 != 6
    lambda dy: dy.inputTensorTranspose(np.arange(6.0), (2, 3), batch_size=2),   # 6 != 12
    lambda dy: dy.inputTensorTranspose(np.arange(6.0), 6),                      # not a tuple
], ids=["a 2-d array", "too few values", "too few for the minibatch", "an int for dim"])
def test_transposed_inputs_refuse_what_dynet_refuses(make):
    real.renew_cg()
    with pytest.raises(Exception) as theirs:
        make(real)
    bvdy.renew_cg()
    with pytest.raises(type(theirs.value)):
        make(bvdy)


def test_the_devices_are_dynets():
    """DyNet on the CPU lists the device ``CPU`` (as ``bytes``, against its own
    documentation: batchviz gives ``str``), number 0, type -1; the name of a device it
    does not have is a RuntimeError."""
    if bv.get_backend() != "numpy":
        pytest.skip("the DyNet installed runs on the CPU; batchviz here runs on a GPU")
    theirs = [n.decode() if isinstance(n, bytes) else n for n in real.available_devices()]
    assert bvdy.available_devices() == theirs == ["CPU"]
    info, their_info = bvdy.get_device_info("CPU"), real.get_device_info("CPU")
    assert (info.id, info.type) == (their_info.id, their_info.type)
    assert info.name == their_info.name.decode()
    for dy in (real, bvdy):
        with pytest.raises(RuntimeError, match="Invalid device name"):
            dy.get_device_info("GPU:7")
