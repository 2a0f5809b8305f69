"""Model files move both ways between the real DyNet (the ``dyNET38`` wheel) and
batchviz.dynet: what one saves (``pc.save``, ``pc.save`` under a key, ``p.save``,
``dy.save`` of a table, an LSTM builder, a parameter and a class of one's own) the other
loads (``populate``, ``populate`` by key, ``load_param``, ``load_lookup_param``,
``p.populate``, ``dy.load``) with the same values, float32 to the last bit. Each side runs
tests/dynet_files_driver.py in a process of its own (DyNet fixes its settings at import)."""
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from batchviz.dynet import metafile

pytestmark = pytest.mark.skipif(importlib.util.find_spec("dynet") is None,
                                reason="the real DyNet (pip install dyNET38, the 'dynet' "
                                       "test extra) is not importable: no conformance check")

DRIVER = Path(__file__).with_name("dynet_files_driver.py")
SIDES = {"DyNet": "dynet", "batchviz": "batchviz.dynet"}
#: the LSTM builder's biases: batchviz keeps them with DyNet's forget bias (1.0) added to
#: their second quarter, so there a value comes back rounded as float32(v + 1) - 1
BIASES = ("/vanilla-lstm-builder/_2", "/vanilla-lstm-builder/_5")


def run(side: str, action: str, folder: Path) -> dict:
    """Run the driver under ``side`` and give back the values it wrote."""
    done = subprocess.run([sys.executable, str(DRIVER), SIDES[side], action, str(folder)],
                          capture_output=True, text=True, timeout=120, cwd=folder)
    assert done.returncode == 0, f"{side} {action}:\n{done.stderr[-3000:]}"
    with np.load(folder / "values.npz") as values:
        return {name: values[name] for name in values.files}


def assert_bits_equal(found, saved, what: str) -> None:
    """The same float32 values, bit for bit."""
    found, saved = np.asarray(found, np.float32), np.asarray(saved, np.float32)
    assert found.shape == saved.shape, what
    assert found.tobytes() == saved.tobytes(), \
        f"{what}: {np.sum(found != saved)} values differ, e.g. {found[found != saved][:3]}"


def assert_loaded(found: dict, saved: dict, loader: str) -> None:
    """Everything the loader read equals what the saver held."""
    for name, values in saved.items():
        for key in (name, "keyed" + name):
            if loader == "batchviz" and name in BIASES:
                H = values.shape[0] // 4
                forget = slice(H, 2 * H)
                np.testing.assert_allclose(found[key][forget], values[forget], rtol=0,
                                           atol=2.0 ** -22, err_msg=key)
                assert_bits_equal(np.delete(found[key], forget), np.delete(values, forget),
                                  key + " (the other quarters)")
            else:
                assert_bits_equal(found[key], values, key)
    assert_bits_equal(found["load_param"], saved["/_0"], "load_param")
    assert_bits_equal(found["load_lookup_param"], saved["/_1"], "load_lookup_param")
    assert_bits_equal(found["populate_one"], saved["/_0"], "Parameters.populate")
    assert_bits_equal(found["dy.load E"], saved["/_1"], "dy.load of a table")
    assert_bits_equal(found["dy.load W"], saved["/_0"], "dy.load of a parameter")
    assert_bits_equal(found["dy.load affine W"], saved["/_1/_0"], "dy.load of one's class")
    for k in (0, 1, 3, 4):   # (the biases are checked above)
        assert_bits_equal(found[f"dy.load lstm {k}"], saved[f"/vanilla-lstm-builder/_{k}"],
                          f"dy.load of an LSTM builder, parameter {k}")


def assert_resaved_as_read(folder: Path) -> None:
    """What the loader read and wrote again (``/the-w`` and the table ``/_1``) is, byte for
    byte, what the saver wrote."""
    one = (folder / "one.txt").read_text()
    model = (folder / "model.txt").read_text().splitlines(keepends=True)
    start = next(k for k, line in enumerate(model) if line.startswith("#LookupParameter# /_1 "))
    assert (folder / "resaved.txt").read_text() == one + "".join(model[start:start + 2])


@pytest.mark.parametrize("saver, loader", [("DyNet", "batchviz"), ("batchviz", "DyNet")])
def test_a_model_saved_by_one_loads_in_the_other(saver, loader, tmp_path):
    saved = run(saver, "save", tmp_path)
    assert "/enc/_0" in saved and "/_0/_0" in saved and "/_1/_0" in saved  # both sub-collections
    found = run(loader, "load", tmp_path)
    assert_loaded(found, saved, loader)
    assert_resaved_as_read(tmp_path)
    # the saver itself reads its files back to the same values, and its LSTM the same outputs
    again = run(saver, "load", tmp_path)
    assert_loaded(again, saved, saver)
    np.testing.assert_allclose(found["dy.load lstm output"], again["dy.load lstm output"],
                               rtol=1e-5, atol=1e-6)


def test_both_write_the_same_files(tmp_path):
    """From the same values, DyNet and batchviz.dynet write the same bytes (the LSTM bias
    aside: batchviz's went through float32(v + 1) - 1), and ``.meta`` files that say the
    same (DyNet's pickle memoizes, batchviz's writes plain opcodes)."""
    theirs, mine = tmp_path / "dynet", tmp_path / "batchviz"
    theirs.mkdir(), mine.mkdir()
    run("DyNet", "save", theirs)
    run("batchviz", "save", mine)
    for name in ("one.txt", "keyed.txt", "model.txt", "objects.data"):
        a, b = (theirs / name).read_text().splitlines(), (mine / name).read_text().splitlines()
        assert len(a) == len(b), name
        differ = [k for k, (x, y) in enumerate(zip(a, b)) if x != y]
        biases = [k for k in differ if a[k - 1].split()[1].endswith(BIASES)]
        assert differ == biases, f"{name}: lines {differ} differ: {a[differ[0]][:120]!r}"
    assert metafile.read(theirs / "objects.meta") == metafile.read(mine / "objects.meta")
    assert metafile.read(mine / "objects.meta")[1][0] == metafile.Global("_dynet",
                                                                         "VanillaLSTMBuilder")
