"""DyNet's ``save(basename, objects)`` and ``load(basename, pc)``.

``save`` writes two files, as DyNet: ``basename.data``, the values (a ``.npz`` archive keyed
by parameter names, :mod:`.files`), and ``basename.meta``, what the objects were: JSON (DyNet
pickles it; batchviz never unpickles). The objects may be parameters, lookup tables and
the builders of this package (whose ``spec`` makes them again); ``load`` makes them again in
the given collection, in the same order, with the saved values.
"""
from __future__ import annotations

import json

from . import files
from .lstm import BiRNNBuilder, LayerNormLSTMBuilder, VanillaLSTMBuilder
from .parameters import LookupParameters, Parameters
from .rnn import CoupledLSTMBuilder, GRUBuilder, SimpleRNNBuilder

#: the builders ``save`` can describe, by the name in the ``.meta`` file
BUILDERS = {cls.__name__: cls for cls in (VanillaLSTMBuilder, LayerNormLSTMBuilder,
                                          CoupledLSTMBuilder, GRUBuilder, SimpleRNNBuilder,
                                          BiRNNBuilder)}


def _builder_spec(obj) -> list:
    spec = list(obj.spec)
    if isinstance(obj, BiRNNBuilder):
        factory = spec[3]
        if spec[4] is not None or getattr(factory, "__name__", None) not in BUILDERS:
            raise NotImplementedError("dy.save of a BiRNNBuilder made from builder_layers or "
                                      "from a factory other than this package's builders")
        spec[3], spec[4] = factory.__name__, None
    return spec


def save(basename: str, objects) -> None:
    """Save parameters, lookup tables and builders to ``basename.data`` and
    ``basename.meta``."""
    meta, arrays = [], {}
    for obj in objects:
        if isinstance(obj, (Parameters, LookupParameters)):
            meta.append({"kind": type(obj).__name__, "name": obj.name()})
            arrays[obj.name()] = obj.as_array()
        elif type(obj).__name__ in BUILDERS and isinstance(obj, tuple(BUILDERS.values())):
            collection = obj.param_collection()
            meta.append({"kind": type(obj).__name__, "spec": _builder_spec(obj),
                         "names": [p.name() for p in collection._all()]})
            arrays.update({p.name(): p.as_array() for p in collection._all()})
        else:
            raise NotImplementedError(
                f"dy.save of a {type(obj).__name__}: batchviz.dynet saves parameters, lookup "
                "parameters and its own builders (it never pickles); save your object's "
                "param_collection() with pc.save(fname) and make it again in your code")
    files.write(basename + ".data", arrays)
    with open(basename + ".meta", "w") as f:
        json.dump(meta, f)


def load(basename: str, params) -> list:
    """The objects saved under ``basename``, made again in the collection ``params``."""
    return list(load_generator(basename, params))


def load_generator(basename: str, params):
    with open(basename + ".meta") as f:
        meta = json.load(f)
    arrays = files.read(basename + ".data")
    for item in meta:
        kind = item["kind"]
        if kind == "Parameters":
            yield params.parameters_from_numpy(arrays[item["name"]])
        elif kind == "LookupParameters":
            yield params.lookup_parameters_from_numpy(arrays[item["name"]])
        elif kind in BUILDERS:
            spec = list(item["spec"])
            if kind == "BiRNNBuilder":
                spec[3] = BUILDERS[spec[3]]
            builder = BUILDERS[kind].from_spec(tuple(spec), params)
            made = builder.param_collection()._all()
            if len(made) != len(item["names"]):
                raise ValueError(f"{basename}: a {kind} of {len(item['names'])} parameters was "
                                 f"saved, the spec makes {len(made)}")
            for p, name in zip(made, item["names"]):
                p.set_value(arrays[name])
            yield builder
        else:
            raise ValueError(f"{basename}.meta: unknown kind of object {kind!r}")


__all__ = ["save", "load", "load_generator"]
