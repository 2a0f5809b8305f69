"""batchviz.dynet's model files on their own: DyNet's text format written and read to the
last bit, the older ``.npz`` files still read, and every bad file (neither format, cut
short, a record of other dimensions, a parameter missing or too many, a file or key that
is not there, a ``.meta`` that would run code) refused with DyNet's error type, naming
the file, the record and what was expected, with the model left as it was."""
import json
import os

import numpy as np
import pytest

import batchviz.dynet as dy
from batchviz.dynet import metafile, textformat


def make_model():
    pc = dy.ParameterCollection()
    W = pc.add_parameters((3, 2))
    E = pc.add_lookup_parameters((4, 2))
    sub = pc.add_subcollection("enc")
    sub.add_parameters(5, name="b")
    lstm = dy.VanillaLSTMBuilder(1, 2, 3, pc)
    return pc, W, E, lstm


def snapshot(pc) -> list:
    return [(p.name(), p.as_array().copy())
            for p in pc.parameters_list() + pc.lookup_parameters_list()]


def assert_unchanged(pc, before) -> None:
    after = snapshot(pc)
    assert [n for n, _ in after] == [n for n, _ in before]
    for (name, a), (_, b) in zip(after, before):
        np.testing.assert_array_equal(a, b, err_msg=name)


@pytest.fixture
def saved(tmp_path):
    """A model saved to model.txt, and a second one made the same way to populate."""
    source, *_ = make_model()
    path = str(tmp_path / "model.txt")
    source.save(path)
    target, *_ = make_model()
    return path, source, target


# --- the format ----------------------------------------------------------------------------------
def test_the_text_format_is_dynets(tmp_path):
    pc = dy.ParameterCollection()
    W = pc.add_parameters((2, 3), init=np.array([[1, 2, 3], [4, 5, 6]]))
    E = pc.lookup_parameters_from_numpy(np.array([[0.5, -0.25], [1e-3, 7.0]]))
    path = tmp_path / "m.txt"
    pc.save(str(path))
    assert path.read_text() == (
        "#Parameter# /_0 {2,3} 97 ZERO_GRAD\n"          # 6 values of 16 bytes, and a newline
        "+1.00000000e+00 +4.00000000e+00 +2.00000000e+00 +5.00000000e+00 +3.00000000e+00 "
        "+6.00000000e+00 \n"                           # column-major, as DyNet's memory
        "#LookupParameter# /_1 {2,2} 65 ZERO_GRAD\n"    # a row's dimension, then the rows
        "+5.00000000e-01 -2.50000000e-01 +1.00000005e-03 +7.00000000e+00 \n")
    W.save(str(path), "/W-alone", append=True)
    assert path.read_text().count("#Parameter# /W-alone {2,3} 97 ZERO_GRAD\n") == 1
    np.testing.assert_array_equal(pc.load_param(str(path), "/W-alone").as_array(),
                                  W.as_array())


def test_float32_goes_through_to_the_last_bit(tmp_path):
    extremes = np.array([np.finfo(np.float32).max, np.finfo(np.float32).tiny, 1.4e-45,
                         -0.0, -1.0 / 3, np.float32(np.pi), 123456.789, -7e-30],
                        dtype=np.float32)
    values = np.concatenate([extremes, np.random.default_rng(0).standard_normal(400)
                             * 10.0 ** np.arange(-20, 20, 0.1)]).astype(np.float32)
    pc = dy.ParameterCollection()
    p = pc.parameters_from_numpy(values.reshape(12, 34))
    table = pc.lookup_parameters_from_numpy(values.reshape(17, 2, 12))
    pc.save(str(tmp_path / "m.txt"))
    back = dy.ParameterCollection()
    q = back.load_param(str(tmp_path / "m.txt"), "/_0")
    t = back.load_lookup_param(str(tmp_path / "m.txt"), "/_1")
    assert q.as_array().astype(np.float32).tobytes() == p.as_array().astype(np.float32).tobytes()
    assert t.as_array().shape == (17, 2, 12)
    assert t.as_array().astype(np.float32).tobytes() == values.tobytes()
    assert q.name() == "/_0" and t.name() == "/_1"   # named by their keys, as DyNet does


def test_save_under_a_key_and_populate_by_it(tmp_path, saved):
    path, source, target = saved
    source.save(str(tmp_path / "keyed.txt"), "/model")
    names = [line.split()[1] for line in open(tmp_path / "keyed.txt") if line[0] == "#"]
    assert names[0] == "/model/_0" and "/model/enc/b" in names
    target.populate(str(tmp_path / "keyed.txt"), "/model")
    assert_unchanged(target, snapshot(source))
    with pytest.raises(ValueError, match="Key should start with '/'"):
        source.save(path, "model")
    with pytest.raises(ValueError, match="Key could not include ' ' or '#'"):
        source.parameters_list()[0].save(path, "/a b")


def test_a_subcollection_saves_and_loads_its_own(tmp_path):
    pc, *_ = make_model()
    sub = pc.add_subcollection("dec")
    sub.add_parameters((2, 2))
    sub.save(str(tmp_path / "sub.txt"))
    assert open(tmp_path / "sub.txt").readline().startswith("#Parameter# /dec/_0 {2,2}")
    other = dy.ParameterCollection().add_subcollection("dec")
    other.add_parameters((2, 2))
    other.populate(str(tmp_path / "sub.txt"))
    np.testing.assert_array_equal(other.parameters_list()[0].as_array(),
                                  sub.parameters_list()[0].as_array())


def test_subcollections_are_counted_apart_from_parameters():
    """DyNet names an unnamed sub-collection ``/_0/`` even after a parameter ``/_0``."""
    pc = dy.ParameterCollection()
    pc.add_parameters(2)
    assert pc.add_subcollection().name() == "/_0/"
    assert pc.add_lookup_parameters((2, 2)).name() == "/_1"


def test_the_older_npz_files_are_still_read(tmp_path):
    pc, W, E, lstm = make_model()
    arrays = {p.name(): p.as_array() * 0 + k for k, p in
              enumerate(pc.parameters_list() + pc.lookup_parameters_list())}
    with open(tmp_path / "old", "wb") as f:
        np.savez(f, **arrays)
    pc.populate(str(tmp_path / "old"))
    np.testing.assert_array_equal(E.as_array(), arrays[E.name()])
    W.set_value(np.zeros((3, 2)))
    W.populate(str(tmp_path / "old"))                  # by its own name
    np.testing.assert_array_equal(W.as_array(), arrays["/_0"])
    q = dy.ParameterCollection().load_param(str(tmp_path / "old"), "/_0")
    np.testing.assert_array_equal(q.as_array(), arrays["/_0"])
    # an old dy.save: a JSON .meta and an .npz .data
    with open(tmp_path / "objects.data", "wb") as f:
        np.savez(f, **arrays)
    with open(tmp_path / "objects.meta", "w") as f:
        json.dump([{"kind": "LookupParameters", "name": E.name()},
                   {"kind": "VanillaLSTMBuilder", "class": "batchviz.dynet.lstm:VanillaLSTMBuilder",
                    "spec": {"tuple": [1, 2, 3, False, 1.0]},
                    "names": [p.name() for p in lstm.param_collection().parameters_list()]}], f)
    E2, lstm2 = dy.load(str(tmp_path / "objects"), dy.ParameterCollection())
    np.testing.assert_array_equal(E2.as_array(), arrays[E.name()])
    np.testing.assert_array_equal(lstm2.get_parameters()[0][1].as_array(),
                                  arrays["/vanilla-lstm-builder/_1"])


# --- bad files: DyNet's RuntimeError, naming what was wrong, the model unchanged ---------------
@pytest.mark.parametrize("content", [b"hello world\n", b"\x00\x01binary", b"W = [[1, 2]]\n",
                                     b"PK\x03\x04 not really a zip"],
                         ids=["text", "binary", "python", "damaged-zip"])
def test_a_file_of_neither_format(content, tmp_path, saved):
    _, _, target = saved
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    before = snapshot(target)
    with pytest.raises(RuntimeError, match=f"{path}"):
        target.populate(str(path))
    assert_unchanged(target, before)


@pytest.mark.parametrize("cut", ["mid-values", "after-header", "mid-header", "last-newline"])
def test_a_truncated_file(cut, saved):
    path, _, target = saved
    text = open(path).read()
    lines = text.splitlines(keepends=True)
    last_header = max(k for k, line in enumerate(lines) if line.startswith("#"))
    cut_at = {"mid-values": len(text) - 40,
              "after-header": len("".join(lines[:last_header + 1])),
              "mid-header": len("".join(lines[:last_header])) + 12,
              "last-newline": len(text) - 1}[cut]
    open(path, "w").write(text[:cut_at])
    before = snapshot(target)
    with pytest.raises(RuntimeError, match=rf"{path}, line {last_header + 1}.*the file is "
                                            "truncated"):
        target.populate(path)
    assert_unchanged(target, before)


def test_a_record_of_other_dimensions(tmp_path, saved):
    path, _, target = saved
    text = open(path).read().replace("#Parameter# /_0 {3,2} 97", "#Parameter# /_0 {2,3} 97")
    open(path, "w").write(text)
    before = snapshot(target)
    with pytest.raises(RuntimeError, match=r"line 1 \(#Parameter# /_0 \{2,3\}\): the dimensions "
                                           r"of parameter /_0 in the file do not match /_0 of "
                                           r"the collection /, \{3,2\} \(shape \(3, 2\)\)"):
        target.populate(path)
    assert_unchanged(target, before)
    # and a values line that does not hold what its dimensions say
    lines = open(path).read().replace("{2,3} 97", "{3,2} 97").splitlines(keepends=True)
    lines[1] = lines[1][16:]
    open(path, "w").write("".join(lines))
    with pytest.raises(RuntimeError, match=r"expected 6 values on line 2 for dimensions "
                                           r"\{3,2\}, found 5"):
        target.populate(path)
    assert_unchanged(target, before)


def test_a_missing_parameter_and_one_too_many(tmp_path):
    small = dy.ParameterCollection()
    small.add_parameters((3, 2))
    small.save(str(tmp_path / "small.txt"))
    big = dy.ParameterCollection()
    big.add_parameters((3, 2)), big.add_parameters((3, 2), name="W")
    before = snapshot(big)
    with pytest.raises(RuntimeError, match=r"small.txt is missing a parameter: it holds 1, the "
                                           r"collection / has 2; expected one for /W \{3,2\} "
                                           r"after /_0"):
        big.populate(str(tmp_path / "small.txt"))
    assert_unchanged(big, before)
    big.save(str(tmp_path / "big.txt"))
    before = snapshot(small)
    with pytest.raises(RuntimeError, match=r"line 3 \(#Parameter# /W \{3,2\}\): too many "
                                           r"parameters for the collection /, which has 1"):
        small.populate(str(tmp_path / "big.txt"))
    assert_unchanged(small, before)


def test_a_missing_file_or_key(tmp_path, saved):
    path, _, target = saved
    before = snapshot(target)
    absent = str(tmp_path / "absent.txt")
    for call in (lambda: target.populate(absent), lambda: target.load_param(absent, "/_0"),
                 lambda: target.parameters_list()[0].populate(absent, "/_0")):
        with pytest.raises(RuntimeError, match=f"Could not read model from {absent}"):
            call()
    with pytest.raises(RuntimeError, match=f"Could not find key /nope in the model file {path}: "
                                           "it has no parameter of that name"):
        target.load_param(path, "/nope")
    with pytest.raises(RuntimeError, match="it has no lookup parameter of that name"):
        target.load_lookup_param(path, "/_0")      # /_0 is a parameter, not a table
    with pytest.raises(ValueError, match="requires non-empty key"):
        target.load_param(path, "")
    W = target.parameters_list()[0]
    with pytest.raises(RuntimeError, match=r"parameter /enc/b has dimensions \{5\} in the file, "
                                           r"but \{3,2\} here"):
        W.populate(path, "/enc/b")
    assert_unchanged(target, before)     # nothing set, nothing added
    with pytest.raises(RuntimeError, match="Could not write model to"):
        target.save(str(tmp_path / "no-such-folder" / "m.txt"))


def test_dy_load_of_bad_files_changes_nothing(tmp_path):
    pc, W, E, lstm = make_model()
    base = str(tmp_path / "objects")
    dy.save(base, [E, lstm, W])
    target = dy.ParameterCollection()
    target.add_parameters(2)
    before = snapshot(target)
    with pytest.raises(FileNotFoundError):                 # as DyNet (Python's open)
        dy.load(str(tmp_path / "absent"), target)
    text = open(base + ".data").read()
    cases = {  # what is wrong -> what the error says
        "truncated": (text[:-30], "the file is truncated"),
        "other dims": (text.replace("{12,2}", "{2,12}", 1), r"do not match"),
        "no LSTM": (text[:text.index("#Parameter# /vanilla")]
                    + text[text.index("#Parameter# /_0"):],
                    r"missing a parameter: it holds 0 under the key /vanilla-lstm-builder/"),
        "no .data": (None, f"Could not read model from {base}.data"),
    }
    for what, (content, message) in cases.items():
        if content is None:
            os.remove(base + ".data")
        else:
            open(base + ".data", "w").write(content)
        with pytest.raises(RuntimeError, match=message):
            dy.load(base, target)
        assert_unchanged(target, before)   # the objects before the bad one were not made
        assert len(target.parameters_list()) == 1, what


def test_a_meta_file_that_would_run_code_is_refused(tmp_path):
    pc, W, E, lstm = make_model()
    base = str(tmp_path / "objects")
    dy.save(base, [W])
    marker = tmp_path / "ran"
    # protocol-0 pickle of os.system("touch ran"): GLOBAL, then REDUCE
    open(base + ".meta", "wb").write(f"cos\nsystem\n(V touch {marker}\ntR.".encode())
    target = dy.ParameterCollection()
    with pytest.raises(RuntimeError, match="REDUCE, an opcode that makes an object or calls "
                                           "something.*never unpickles"):
        dy.load(base, target)
    assert not marker.exists() and target.parameters_list() == []
    open(base + ".meta", "wb").write(b"\x80\x02X\x03\x00\x00\x00abc")   # cut before STOP
    with pytest.raises(RuntimeError, match="objects.meta: entry 1"):
        dy.load(base, target)


def test_metafile_writes_plain_data_back_as_it_was(tmp_path):
    entries = [("Parameters", "/_0"),
               (metafile.Global("_dynet", "GRUBuilder"),
                (1, -2, 2 ** 40, 3.25, True, None, [1, "a"], {"k": (1,), 2: []}), "/gru/")]
    metafile.write(tmp_path / "m.meta", entries)
    assert metafile.read(tmp_path / "m.meta") == entries
    assert textformat.parse_dims("{3,2X4}") == ((3, 2), 4)
