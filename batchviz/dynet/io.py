"""DyNet's ``save(basename, objects)`` and ``load(basename, pc)``.

``save`` writes two files, as DyNet: ``basename.data``, the values (a ``.npz`` archive keyed
by parameter names, :mod:`.files`), and ``basename.meta``, what the objects were: JSON (DyNet
pickles it; batchviz never unpickles). The objects may be parameters, lookup tables, and
any object that DyNet can save: one with a ``spec``, a ``param_collection()`` and a static
``from_spec(spec, pc)`` that makes it again, this package's builders as well as a user's
own class (DyNet's saving tutorial writes one). ``load`` makes them again in the given
collection, in the same order, with the saved values.

A ``spec`` is written as JSON: numbers, strings, lists, tuples, dicts, and classes and
functions by name (``module:qualname``, e.g. the activation ``dy.rectify`` an MLP was made
with). ``load`` finds those names only in modules the program has already imported, so a
``.meta`` file can name the program's own class, never make Python import or run anything
else.
"""
from __future__ import annotations

import json
import sys

from . import files
from .parameters import LookupParameters, Parameters

#: what a saved object's entry in the ``.meta`` file is, besides parameters and tables
OBJECT_KEYS = ("kind", "class", "spec", "names")


def save(basename: str, objects) -> None:
    """Save parameters, lookup tables and objects with a ``spec`` (builders, your own
    classes) to ``basename.data`` and ``basename.meta``."""
    meta, arrays = [], {}
    for obj in objects:
        if isinstance(obj, (Parameters, LookupParameters)):
            meta.append({"kind": type(obj).__name__, "name": obj.name()})
            arrays[obj.name()] = obj._file_values()
            continue
        if not (hasattr(obj, "spec") and hasattr(obj, "param_collection")
                and hasattr(type(obj), "from_spec")):
            raise NotImplementedError(
                f"dy.save of a {type(obj).__name__}: batchviz.dynet saves parameters, lookup "
                "parameters and objects with a spec, a param_collection() and a from_spec "
                "(it never pickles); give your class those three, as DyNet's saving tutorial "
                "does, or save its param_collection() with pc.save(fname)")
        stored = obj.param_collection()._all()
        meta.append({"kind": type(obj).__name__, "class": _name_of(type(obj)),
                     "spec": _encoded(obj.spec, type(obj).__name__),
                     "names": [p.name() for p in stored]})
        arrays.update({p.name(): p._file_values() for p in stored})
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
        kind = item.get("kind")
        if kind == "Parameters":
            yield params.parameters_from_numpy(arrays[item["name"]])
        elif kind == "LookupParameters":
            yield params.lookup_parameters_from_numpy(arrays[item["name"]])
        elif set(item) == set(OBJECT_KEYS):
            cls = _named(item["class"], basename)
            obj = cls.from_spec(_decoded(item["spec"], basename), params)
            made = obj.param_collection()._all()
            if len(made) != len(item["names"]):
                raise ValueError(f"{basename}: a {kind} of {len(item['names'])} parameters was "
                                 f"saved, its spec makes {len(made)}")
            for p, name in zip(made, item["names"]):
                p.set_value(arrays[name])
            yield obj
        else:
            raise ValueError(f"{basename}.meta: unknown kind of object {kind!r}")


def _name_of(thing) -> str:
    """``module:qualname`` of a class or function that can be found again by that name."""
    name = f"{thing.__module__}:{thing.__qualname__}"
    if "<locals>" in thing.__qualname__ or _lookup(name) is not thing:
        raise NotImplementedError(f"dy.save: {thing!r} cannot be found again by its name "
                                  f"{name} (define it at the top level of a module)")
    return name


def _encoded(value, owner: str):
    """``value`` (part of a ``spec``) as JSON: a JSON object is always a tag, so that
    tuples, dicts and names come back as they were."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_encoded(v, owner) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [_encoded(v, owner) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: _encoded(v, owner) for k, v in value.items()}}
    if isinstance(value, type) or callable(value) and hasattr(value, "__qualname__"):
        return {"name": _name_of(value)}
    raise NotImplementedError(f"dy.save of a {owner}: its spec holds a value of type "
                              f"{type(value).__name__}, which batchviz.dynet cannot write (it "
                              "never pickles); a spec may hold numbers, strings, lists, "
                              "tuples, dicts, classes and functions")


def _decoded(value, basename: str):
    if isinstance(value, list):
        return [_decoded(v, basename) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, inner), = value.items()
    if tag == "tuple":
        return tuple(_decoded(v, basename) for v in inner)
    if tag == "dict":
        return {k: _decoded(v, basename) for k, v in inner.items()}
    return _named(inner, basename)


def _named(name: str, basename: str):
    """The class or function called ``name`` (``module:qualname``) in a module the program
    has imported."""
    found = _lookup(name)
    if found is None:
        raise ValueError(f"{basename}.meta names {name}, which is not in any module this "
                         f"program has imported: import {name.split(':')[0]} (or define "
                         "the class) before dy.load")
    return found


def _lookup(name: str):
    module_name, _, qualname = name.partition(":")
    found = sys.modules.get(module_name)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found


__all__ = ["save", "load", "load_generator"]
