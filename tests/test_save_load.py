"""Model.save / Model.load: .npz files keyed by parameter name, never pickle; a file that does
not fit the model is refused with a clear error and changes nothing."""
import pickle

import numpy as np
import pytest

import batchviz as bv
from batchviz.nn import LSTMBuilder


def make_model(seed, hidden=4):
    model = bv.Model(seed=seed)
    LSTMBuilder(1, 3, hidden, model, name="lstm")
    model.add_lookup_parameters((5, 3), name="E")
    return model


def snapshot(model):
    return {p.name: p.value() for p in model.parameters()}


def test_round_trip_restores_every_parameter(tmp_path):
    source, target = make_model(seed=1), make_model(seed=2)
    path = tmp_path / "model.npz"
    source.save(path)
    assert path.exists() and not (tmp_path / "model.npz.npz").exists()
    target.load(path)
    for name, values in snapshot(source).items():
        np.testing.assert_array_equal(snapshot(target)[name], values)
    # a plain .npz of arrays: NumPy reads it without pickle
    with np.load(path, allow_pickle=False) as data:
        assert sorted(data.files) == sorted(p.name for p in source.parameters())


def test_loaded_model_computes_the_same(tmp_path):
    source, target = make_model(seed=1), make_model(seed=2)
    source.save(tmp_path / "m.npz")
    target.load(tmp_path / "m.npz")

    def output(model):
        lstm_params = {p.name: p for p in model.parameters()}
        with bv.Graph():
            E = lstm_params["E"]
            W, Wh, b = lstm_params["lstm.l0.Wx0"], lstm_params["lstm.l0.Wh"], lstm_params["lstm.l0.b"]
            h = bv.lstm_unit(b, [W, Wh], [E[1], bv.zeros(4)], [bv.zeros(4)], 4)
            return h.value()

    np.testing.assert_array_equal(output(source), output(target))


def test_wrong_shape_is_refused_and_nothing_changes(tmp_path):
    make_model(seed=1, hidden=5).save(tmp_path / "m.npz")
    target = make_model(seed=2, hidden=4)
    before = snapshot(target)
    with pytest.raises(ValueError, match=r"'lstm.l0.Wx0' has shape \(20, 3\) in the file but \(16, 3\)"):
        target.load(tmp_path / "m.npz")
    for name, values in snapshot(target).items():
        np.testing.assert_array_equal(values, before[name])


def test_missing_and_unexpected_parameters_are_named(tmp_path):
    source = make_model(seed=1)
    source.add_parameters((2,), name="extra")
    source.save(tmp_path / "m.npz")
    target = make_model(seed=2)
    before = snapshot(target)
    with pytest.raises(ValueError, match=r"missing parameters none, unexpected parameters \['extra'\]"):
        target.load(tmp_path / "m.npz")
    other = make_model(seed=3)
    other.add_parameters((2,), name="bias2")
    with pytest.raises(ValueError, match=r"missing parameters \['bias2'\]"):
        other.load(tmp_path / "m.npz")
    for name, values in snapshot(target).items():
        np.testing.assert_array_equal(values, before[name])


def test_not_a_model_file(tmp_path):
    model = make_model(seed=1)
    text = tmp_path / "notes.npz"
    text.write_text("hello")
    with pytest.raises(ValueError, match="is not a batchviz model file"):
        model.load(text)
    pickled = tmp_path / "pickled.npz"
    pickled.write_bytes(pickle.dumps({"lstm.l0.b": np.zeros(16)}))
    with pytest.raises(ValueError, match="is not a batchviz model file"):
        model.load(pickled)
    objects = tmp_path / "objects.npz"
    np.savez(objects, **{p.name: np.array([None], dtype=object) for p in model.parameters()})
    with pytest.raises(ValueError, match="is not a batchviz model file"):
        model.load(objects)  # object arrays would need pickle: refused
    with pytest.raises(FileNotFoundError):
        model.load(tmp_path / "absent.npz")


def test_non_finite_values_are_refused(tmp_path):
    model = make_model(seed=1)
    arrays = {p.name: p.value() for p in model.parameters()}
    arrays["E"][0, 0] = np.nan
    np.savez(tmp_path / "nan.npz", **arrays)
    with pytest.raises(ValueError, match="'E' holds float32 values that are not finite"):
        model.load(tmp_path / "nan.npz")
