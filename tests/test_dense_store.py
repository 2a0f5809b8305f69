"""The dense parameters of a model live in one DenseStore (values, gradients), and DyNet's
trainers run their rule over runs of parameters stored next to each other: the values are
those of the rule run parameter by parameter, a parameter the backward pass missed keeps
its values and moments, and what replaces values (set_value, loading) writes into the
store."""
import numpy as np
import pytest

import batchviz as bv
import batchviz.dynet as dy
from batchviz.parameters import DenseStore

TRAINERS = [
    lambda m: dy.SimpleSGDTrainer(m, 0.1),
    lambda m: dy.MomentumSGDTrainer(m, 0.05),
    lambda m: dy.AdagradTrainer(m, 0.1),
    lambda m: dy.AdadeltaTrainer(m),
    lambda m: dy.RMSPropTrainer(m, 0.01),
    lambda m: dy.AdamTrainer(m, 0.01),
    lambda m: dy.AmsgradTrainer(m, 0.01),
]


def make_model(seed=0):
    rng = np.random.default_rng(seed)
    m = dy.ParameterCollection()
    W = m.parameters_from_numpy(rng.normal(size=(4, 3)))
    b = m.parameters_from_numpy(rng.normal(size=4))
    E = m.lookup_parameters_from_numpy(rng.normal(size=(6, 3)))
    V = m.parameters_from_numpy(rng.normal(size=(2, 4)))
    U = m.parameters_from_numpy(rng.normal(size=(2, 4)))
    return m, W, b, E, V, U


def step(trainer, W, b, E, V, U, row=1, use_U=True):
    """One training step on ``|V h + U h|^2``, ``h = tanh(W E[row] + b)`` (without ``U``
    when not ``use_U``); the gradients the update saw, by name."""
    dy.renew_cg()
    h = dy.tanh(W * E[row] + b)
    loss = dy.squared_norm(V * h + U * h if use_U else V * h)
    loss.value()
    loss.backward()
    grads = {p.name(): p.grad_as_array() for p in trainer.collection._all()}
    trainer.update()
    return grads


def per_parameter(make_trainer, model, steps):
    """The rule run parameter by parameter, with a moment array per parameter, from the
    gradients the fused trainer saw (clipping off): the reference for the dense ones."""
    rule = make_trainer(dy.ParameterCollection())
    values = {p.name(): p.as_array().astype(np.float32) for p in model.parameters_list()}
    slots = {name: [np.zeros_like(v) for _ in range(rule.slot_count)]
             for name, v in values.items()}
    for t, grads in enumerate(steps):
        rule.updates = t
        for name, v in values.items():
            if not grads[name].any():
                continue   # (not reached: left alone)
            rule.rule(v, grads[name].astype(np.float32), slots[name])
    return values


@pytest.mark.parametrize("make_trainer", TRAINERS)
def test_a_fused_update_equals_the_rule_run_parameter_by_parameter(make_trainer):
    m, W, b, E, V, U = make_model()
    trainer = make_trainer(m)
    trainer.set_clip_threshold(0)
    steps = [step(trainer, W, b, E, V, U, row=r, use_U=r != 2) for r in (1, 2, 3)]
    fresh, *_ = make_model()   # (the same initial values)
    expected = per_parameter(make_trainer, fresh, steps)
    for p in m.parameters_list():
        np.testing.assert_array_equal(p.as_array().astype(np.float32), expected[p.name()],
                                      err_msg=p.name())


def test_the_dense_parameters_are_views_of_one_store():
    m, W, b, E, V, U = make_model()
    trainer = dy.AdamTrainer(m)
    step(trainer, W, b, E, V, U)
    store = m._model.dense_store()
    assert [e[0] for e in store.entries] == [W._p, b._p, V._p, U._p]   # (not the table)
    for q, start, stop, grad in store.entries:
        assert np.shares_memory(q.array, store.values)
        np.testing.assert_array_equal(q.array.reshape(-1), store.values[start:stop])
    assert not np.shares_memory(E._p.array, store.values)


def test_a_parameter_the_backward_pass_missed_keeps_its_values_and_moments():
    m, W, b, E, V, U = make_model()
    trainer = dy.AdamTrainer(m, 0.01)
    before = U.as_array()
    step(trainer, W, b, E, V, U, use_U=False)
    step(trainer, W, b, E, V, U, use_U=False)
    np.testing.assert_array_equal(U.as_array(), before)
    # its moments are still zero: its first update is Adam's from zero moments, at step 3
    grads = step(trainer, W, b, E, V, U)
    value, slots = before.astype(np.float32), [np.zeros((2, 4), np.float32) for _ in range(2)]
    reference = dy.AdamTrainer(dy.ParameterCollection(), 0.01)
    reference.updates = 2
    g = grads[U.name()].astype(np.float32)
    scale = min(1.0, 5.0 / float(trainer.last_gradient_norm))
    reference.rule(value, g * np.float32(scale) if scale < 1 else g, slots)
    np.testing.assert_allclose(U.as_array(), value, rtol=1e-6)


def test_a_parameter_not_updated_keeps_its_gradient():
    m, W, b, E, V, U = make_model()
    trainer = dy.SimpleSGDTrainer(m, 0.1)
    V.set_updated(False)
    before = V.as_array()
    grads = step(trainer, W, b, E, V, U)
    np.testing.assert_array_equal(V.as_array(), before)
    np.testing.assert_array_equal(V.grad_as_array(), grads[V.name()])


def test_set_value_after_training_writes_into_the_store():
    m, W, b, E, V, U = make_model()
    trainer = dy.SimpleSGDTrainer(m, 0.1)
    trainer.set_clip_threshold(0)
    step(trainer, W, b, E, V, U)
    array = W._p.array
    W.set_value(np.ones((4, 3)))
    assert W._p.array is array and np.shares_memory(array, m._model.dense_store().values)
    grads = step(trainer, W, b, E, V, U)
    np.testing.assert_allclose(W.as_array(), 1 - 0.1 * grads[W.name()], rtol=1e-6)


def test_a_parameter_added_after_training_started_is_stored_and_trained():
    """Packed again with the new parameter, the moments kept: the same values as a model
    that had it from the start (where the backward pass missed it until then)."""
    m1, W1, b1, E1, V1, U1 = make_model()
    t1 = dy.AdamTrainer(m1, 0.01)
    step(t1, W1, b1, E1, V1, U1, use_U=False)
    X1 = m1.parameters_from_numpy(np.full((3, 3), 0.5))
    m2, W2, b2, E2, V2, U2 = make_model()
    X2 = m2.parameters_from_numpy(np.full((3, 3), 0.5))
    t2 = dy.AdamTrainer(m2, 0.01)
    step(t2, W2, b2, E2, V2, U2, use_U=False)

    def with_x(trainer, W, b, E, V, X):
        dy.renew_cg()
        h = dy.tanh(W * (X * E[2]) + b)
        loss = dy.squared_norm(V * h)
        loss.value()
        loss.backward()
        trainer.update()

    for _ in range(2):
        with_x(t1, W1, b1, E1, V1, X1)
        with_x(t2, W2, b2, E2, V2, X2)
    for name in ("/_0", "/_1", "/_3", "/_4"):
        np.testing.assert_array_equal(*(next(p for p in m._all() if p.name() == name).as_array()
                                        for m in (m1, m2)), err_msg=name)
    np.testing.assert_array_equal(X1.as_array(), X2.as_array())
    assert X1._p.array.base is m1._model.dense_store().values


def test_a_saved_model_loads_into_a_trained_one(tmp_path):
    m, W, b, E, V, U = make_model()
    trainer = dy.AdamTrainer(m, 0.01)
    step(trainer, W, b, E, V, U)
    m.save(str(tmp_path / "model"))
    saved = {p.name(): p.as_array() for p in m._all()}
    step(trainer, W, b, E, V, U)
    m.populate(str(tmp_path / "model"))
    for p in m._all():
        np.testing.assert_array_equal(p.as_array(), saved[p.name()])
    assert np.shares_memory(W._p.array, m._model.dense_store().values)
    step(trainer, W, b, E, V, U)   # (training goes on from the loaded values)
    assert not np.array_equal(W.as_array(), saved[W.name()])
    # and a new model made the same way reads the file
    m2, *_ = make_model(seed=1)
    m2.populate(str(tmp_path / "model"))
    for p in m2._all():
        np.testing.assert_array_equal(p.as_array(), saved[p.name()])


def test_a_batchviz_model_loads_into_its_store(tmp_path):
    model = bv.Model(seed=0)
    W = model.add_parameters((3, 2))
    E = model.add_lookup_parameters((5, 2))
    store = model.dense_store()
    model.save(tmp_path / "m.npz")
    saved = W.value()
    W.set_value(np.zeros((3, 2)))
    model.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(W.value(), saved)
    assert model.dense_store() is store and np.shares_memory(W.array, store.values)


def test_a_new_dtype_packs_the_store_again(float64):
    m, W, b, E, V, U = make_model()
    trainer = dy.AdamTrainer(m, 0.01)
    step(trainer, W, b, E, V, U)
    assert m._model.dense_store().values.dtype == np.float64
    bv.set_dtype(np.float32)
    assert W._p.array.dtype == np.float32
    step(trainer, W, b, E, V, U)
    store = m._model.dense_store()
    assert store.values.dtype == np.float32 and np.shares_memory(W._p.array, store.values)


def test_a_store_of_no_parameters():
    assert DenseStore([]).entries == []
