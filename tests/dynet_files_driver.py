"""Run by tests/test_dynet_files_conformance.py in a fresh process, under the real DyNet or
under batchviz.dynet (DyNet fixes its settings at import, so each side gets a process of
its own): it makes one model, then saves it or loads what the other side saved, and
writes every value it then holds to ``values.npz`` for the test to compare.

    python dynet_files_driver.py dynet|batchviz.dynet save|load FOLDER
"""
import importlib
import sys

import numpy as np

dy = importlib.import_module(sys.argv[1])


class Affine:
    """A class of one's own that ``dy.save`` can save (DyNet's saving tutorial's
    interface), with a function in its spec."""

    def __init__(self, model, n_in, n_out, act):
        self.pc = model.add_subcollection()
        self.W = self.pc.add_parameters((n_out, n_in))
        self.b = self.pc.add_parameters(n_out)
        self.spec = (n_in, n_out, act)

    def param_collection(self):
        return self.pc

    @staticmethod
    def from_spec(spec, model):
        return Affine(model, *spec)


def build():
    """A collection with parameters (named and not, of one to three dimensions), tables
    (of vectors and of matrices), a named and an unnamed sub-collection, an LSTM builder
    and a class of one's own."""
    pc = dy.ParameterCollection()
    parts = {"W": pc.add_parameters((3, 2)), "b": pc.add_parameters(3, name="b"),
             "E": pc.add_lookup_parameters((5, 2))}
    enc = pc.add_subcollection("enc")
    parts["V"] = enc.add_parameters((2, 3, 2))
    parts["F"] = enc.add_lookup_parameters((3, 1, 2))
    parts["U"] = pc.add_subcollection().add_parameters((4,))
    parts["lstm"] = dy.VanillaLSTMBuilder(2, 2, 3, pc)
    parts["affine"] = Affine(pc, 3, 2, dy.rectify)
    return pc, parts


def every_value(pc) -> dict:
    """Each parameter's and table's values, by its name (as ``as_array`` gives them)."""
    return {p.name(): p.as_array() for p in pc.parameters_list() + pc.lookup_parameters_list()}


def save(folder: str) -> None:
    pc, parts = build()
    draw = np.random.default_rng(7)      # every value drawn, the LSTM biases' too
    for p in pc.parameters_list():
        p.set_value(draw.standard_normal(p.shape()).astype(np.float32))
    for p in pc.lookup_parameters_list():   # (row by row: DyNet's init_from_array takes
        rows = draw.standard_normal(p.shape()).astype(np.float32)   # vectors only)
        for i, row in enumerate(rows):
            p.init_row(i, [float(v) for v in row.ravel(order="F")])
    pc.save(f"{folder}/model.txt")
    pc.save(f"{folder}/keyed.txt", "/model")
    parts["W"].save(f"{folder}/one.txt", "/the-w")
    dy.save(f"{folder}/objects", [parts["E"], parts["lstm"], parts["W"], parts["affine"]])
    np.savez(f"{folder}/values.npz", **every_value(pc))


def load(folder: str) -> None:
    pc, parts = build()
    pc.populate(f"{folder}/model.txt")
    found = every_value(pc)
    keyed, _ = build()
    keyed.populate(f"{folder}/keyed.txt", "/model")
    found.update({"keyed" + name: v for name, v in every_value(keyed).items()})
    alone = dy.ParameterCollection()
    found["load_param"] = alone.load_param(f"{folder}/one.txt", "/the-w").as_array()
    found["load_lookup_param"] = alone.load_lookup_param(f"{folder}/model.txt",
                                                         "/_1").as_array()
    alone.save(f"{folder}/resaved.txt")   # what was read, written again
    parts["W"].populate(f"{folder}/one.txt", "/the-w")
    found["populate_one"] = parts["W"].as_array()
    E, lstm, W, affine = dy.load(f"{folder}/objects", dy.ParameterCollection())
    found["dy.load E"], found["dy.load W"] = E.as_array(), W.as_array()
    for k, p in enumerate(lstm.param_collection().parameters_list()):
        found[f"dy.load lstm {k}"] = p.as_array()
    found["dy.load affine W"] = affine.W.as_array()
    assert affine.spec[2] is dy.rectify and isinstance(affine, Affine)
    # the loaded objects work: the LSTM runs on the table's rows
    dy.renew_cg()
    found["dy.load lstm output"] = lstm.initial_state().transduce([E[1], E[2]])[-1].npvalue()
    np.savez(f"{folder}/values.npz", **found)


if __name__ == "__main__":
    {"save": save, "load": load}[sys.argv[2]](sys.argv[3])
