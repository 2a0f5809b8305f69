"""Model.save / Model.load: .npz files keyed by parameter name, never pickle; a file that does
not fit the model is refused with a clear error and changes nothing."""
import pickle
import zipfile

import numpy as np
import pytest

import batchviz as bv
from batchviz.nn import LSTMBuilder


def make_model(seed, hidden=4):
    model = bv.Model(seed=seed)
    LSTMBuilder(1, 3, hidden, model, name="lstm")
    model.add_lookup_parameters((5, 3), name="E")
    return model


def write_zip(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


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


@pytest.mark.parametrize("name, write, why", [
    ("notes.txt", lambda path: path.write_text("W = [[1, 2], [3, 4]]\n"), "is not an .npz archive"),
    ("text.npz", lambda path: path.write_text("hello"), "is not an .npz archive"),
    ("pickled.npz", lambda path: path.write_bytes(pickle.dumps({"E": np.zeros(3)})),
     "is not an .npz archive"),
    ("objects.npz",  # object arrays would need pickle to load: refused
     lambda path: np.savez(path, E=np.array([None], dtype=object)),
     "holds Python objects, not arrays of numbers"),
    ("other.zip", lambda path: write_zip(path, {"readme.txt": b"hello"}),
     "holds files that are not NumPy arrays: ['readme.txt']"),
    ("broken.npz", lambda path: write_zip(path, {"E.npy": b"\x93NUMPY garbage"}), ""),
], ids=["text", "text-named-npz", "pickle", "object-array", "other-zip", "damaged-npy"])
def test_a_file_that_is_not_a_model_says_so(tmp_path, name, write, why):
    """Any other file is refused with batchviz's error, not NumPy's advice about pickles."""
    model = make_model(seed=1)
    before = snapshot(model)
    path = tmp_path / name
    write(path)
    with pytest.raises(bv.ModelFileError) as excinfo:
        model.load(path)
    message = str(excinfo.value)
    assert message.startswith(f"{path} is not a batchviz .npz model file (one that Model.save "
                              "writes)"), message
    assert why in message and "pickle" not in message[len(str(path)):], message
    for param, values in snapshot(model).items():
        np.testing.assert_array_equal(values, before[param])


def test_a_missing_file_is_python_s_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        make_model(seed=1).load(tmp_path / "absent.npz")


def test_non_finite_values_are_refused(tmp_path):
    model = make_model(seed=1)
    arrays = {p.name: p.value() for p in model.parameters()}
    arrays["E"][0, 0] = np.nan
    np.savez(tmp_path / "nan.npz", **arrays)
    with pytest.raises(ValueError, match="'E' holds float32 values that are not finite"):
        model.load(tmp_path / "nan.npz")
