"""DyNet's ``save(basename, objects)`` and ``load(basename, pc)``, in DyNet's files.

``save`` writes two files, as DyNet: ``basename.data``, the values in DyNet's text format
(:mod:`.files`), and ``basename.meta``, what the objects were: one entry per object,
``("Parameters", name)``, ``("LookupParameters", name)`` or ``(class, spec, name of its
collection)``, in the pickle format DyNet reads, written and read by :mod:`.metafile`
without the pickle module (nothing is ever unpickled). The objects may be parameters,
lookup tables, and any object that DyNet can save: one with a ``spec``, a
``param_collection()`` and a static ``from_spec(spec, pc)`` that makes it again, this
package's builders as well as a user's own class (DyNet's saving tutorial writes one).
``load`` makes them again in the given collection, in the same order, with the saved
values, from files written by DyNet or by batchviz.dynet.

A ``spec`` may hold numbers, strings, lists, tuples, dicts, and classes and functions by
name. This package's own (``dy.VanillaLSTMBuilder``, ``dy.rectify``) are written with
DyNet's names (``_dynet.VanillaLSTMBuilder``), and DyNet's names are read as this
package's, so that a file goes both ways. A user's class is named by its module and name,
and ``load`` finds it only in modules the program has already imported: a ``.meta`` file
can name the program's own class, never make Python import or run anything else.

The files batchviz.dynet wrote before (a JSON ``.meta`` and a ``.npz`` ``.data``) are
still read.
"""
from __future__ import annotations

import json
import numbers
import sys

from . import files, metafile, textformat
from . import graph as _graph
from .metafile import Global
from .parameters import LookupParameters, Parameters

#: DyNet's module, as its classes and functions are named in a .meta file
DYNET_MODULE = "_dynet"
#: what a class of this package is called in DyNet, where the names differ
DYNET_NAMES = {"LayerNormLSTMBuilder": "VanillaLSTMBuilder"}
#: what a saved object's entry in the old JSON ``.meta`` file is, besides parameters
OBJECT_KEYS = ("kind", "class", "spec", "names")


def save(basename: str, objects) -> None:
    """Save parameters, lookup tables and objects with a ``spec`` (builders, your own
    classes) to ``basename.data`` and ``basename.meta``, as DyNet does."""
    entries, records = [], []
    for obj in objects:
        if isinstance(obj, (Parameters, LookupParameters)):
            entries.append((type(obj).__name__, obj.name()))
            records.append(textformat.record_of(files.kind_of(obj), obj.name(),
                                                obj._file_values()))
            continue
        if not (hasattr(obj, "spec") and hasattr(obj, "param_collection")
                and hasattr(type(obj), "from_spec")):
            raise NotImplementedError(
                f"dy.save of a {type(obj).__name__}: batchviz.dynet saves parameters, lookup "
                "parameters and objects with a spec, a param_collection() and a from_spec "
                "(it never pickles); give your class those three, as DyNet's saving tutorial "
                "does, or save its param_collection() with pc.save(fname)")
        pc = obj.param_collection()
        entries.append((_global_of(type(obj)), _encoded(obj.spec, type(obj).__name__),
                        pc.name()))
        records += files.collection_records(pc.parameters_list(),
                                            pc.lookup_parameters_list(), pc.name())
    textformat.write(basename + ".data", records)
    metafile.write(basename + ".meta", entries)


def load(basename: str, params) -> list:
    """The objects saved under ``basename``, made again in the collection ``params``.
    Everything is first made in a collection of its own and checked, so that a file that
    does not fit raises before ``params`` is changed (and the random generator is left
    where it was, so the initial values drawn later do not depend on the check)."""
    generator = _graph.rng()
    state = generator.bit_generator.state
    list(load_generator(basename, type(params)()))
    generator.bit_generator.state = state
    return list(load_generator(basename, params))


def load_generator(basename: str, params):
    """The objects saved under ``basename``, one by one, as DyNet's ``load_generator``:
    those before a bad entry are made."""
    with open(basename + ".meta", "rb") as f:
        old_format = f.read(1) == b"["
    if old_format:
        yield from _load_json_meta(basename, params)
        return
    entries = metafile.read(basename + ".meta")
    source = files.ModelFile(basename + ".data")
    for number, entry in enumerate(entries, 1):
        entry = entry if isinstance(entry, tuple) else (entry,)
        if len(entry) == 2 and entry[0] in ("Parameters", "LookupParameters"):
            kind = files.LOOKUP if entry[0] == "LookupParameters" else files.PARAMETER
            yield params._load_from(source, kind, entry[1])
        elif len(entry) == 3 and isinstance(entry[0], Global) and isinstance(entry[2], str):
            cls, spec = _named(entry[0], basename), _decoded(entry[1], basename)
            obj = cls.from_spec(spec, params)
            obj.param_collection()._populate_from(source, entry[2])
            yield obj
        else:
            raise RuntimeError(f"{basename}.meta: entry {number} is {entry!r}, not one that "
                               "dy.save writes: ('Parameters', name), ('LookupParameters', "
                               "name) or (class, spec, name of its collection)")


def _load_json_meta(basename: str, params):
    """The objects of the files batchviz.dynet wrote before: a JSON ``.meta`` and a
    ``.npz`` ``.data`` keyed by the parameters' names."""
    with open(basename + ".meta") as f:
        meta = json.load(f)
    source = files.ModelFile(basename + ".data")
    for item in meta:
        kind = item.get("kind")
        if kind in ("Parameters", "LookupParameters"):
            record_kind = files.LOOKUP if kind == "LookupParameters" else files.PARAMETER
            yield params._load_from(source, record_kind, item["name"])
        elif set(item) == set(OBJECT_KEYS):
            cls = _named(_json_global(item["class"]), basename)
            obj = cls.from_spec(_decoded(_from_json(item["spec"]), basename), params)
            made = obj.param_collection()._all()
            if len(made) != len(item["names"]):
                raise RuntimeError(f"{basename}: a {kind} of {len(item['names'])} parameters "
                                   f"was saved, its spec makes {len(made)}")
            values = [source.named(files.kind_of(p), name, p.shape())
                      for p, name in zip(made, item["names"])]
            for p, v in zip(made, values):
                p.set_value(v)
            yield obj
        else:
            raise RuntimeError(f"{basename}.meta: unknown kind of object {kind!r}")


def _json_global(name: str) -> Global:
    module, _, qualname = name.partition(":")
    return Global(module, qualname)


def _from_json(value):
    """A spec as the old JSON ``.meta`` tagged it, as plain data with :class:`Global`s."""
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, inner), = value.items()
    if tag == "tuple":
        return tuple(_from_json(v) for v in inner)
    if tag == "dict":
        return {k: _from_json(v) for k, v in inner.items()}
    return _json_global(inner)


def _global_of(thing) -> Global:
    """The name a ``.meta`` file gives a class or function: DyNet's for this package's own
    (so that DyNet finds it), ``module.qualname`` for a user's, which must be findable by
    that name."""
    module, qualname = thing.__module__, thing.__qualname__
    if module.split(".")[:2] == ["batchviz", "dynet"]:
        name = DYNET_NAMES.get(qualname, qualname)
        if getattr(_this_package(), name, None) is not None:
            return Global(DYNET_MODULE, name)
    if "<locals>" in qualname or _lookup(Global(module, qualname)) is not thing:
        raise NotImplementedError(f"dy.save: {thing!r} cannot be found again by its name "
                                  f"{module}.{qualname} (define it at the top level of a "
                                  "module)")
    return Global(module, qualname)


def _encoded(value, owner: str):
    """``value`` (part of a ``spec``) as the plain data a ``.meta`` file holds."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, list):
        return [_encoded(v, owner) for v in value]
    if isinstance(value, tuple):
        return tuple(_encoded(v, owner) for v in value)
    if isinstance(value, dict):
        return {_encoded(k, owner): _encoded(v, owner) for k, v in value.items()}
    if isinstance(value, type) or callable(value) and hasattr(value, "__qualname__"):
        return _global_of(value)
    raise NotImplementedError(f"dy.save of a {owner}: its spec holds a value of type "
                              f"{type(value).__name__}, which batchviz.dynet cannot write (it "
                              "never pickles); a spec may hold numbers, strings, lists, "
                              "tuples, dicts, classes and functions")


def _decoded(value, basename: str):
    """A spec read from a ``.meta`` file, with the classes and functions it names."""
    if isinstance(value, list):
        return [_decoded(v, basename) for v in value]
    if isinstance(value, tuple):
        return tuple(_decoded(v, basename) for v in value)
    if isinstance(value, dict):
        return {_decoded(k, basename): _decoded(v, basename) for k, v in value.items()}
    if isinstance(value, Global):
        return _named(value, basename)
    return value


def _named(name: Global, basename: str):
    """The class or function a ``.meta`` file names: DyNet's (``_dynet.X``, ``dynet.X``)
    is this package's ``X``; any other only from a module the program has imported."""
    found = _lookup(name)
    if found is None:
        raise RuntimeError(f"{basename}.meta names {name}, which is not in any module this "
                           f"program has imported: import {name.module} (or define the "
                           "class) before dy.load")
    return found


def _lookup(name: Global):
    if name.module in (DYNET_MODULE, "dynet"):
        return getattr(_this_package(), name.name, None)
    found = sys.modules.get(name.module)
    for part in name.name.split("."):
        found = getattr(found, part, None)
    return found


def _this_package():
    """``batchviz.dynet`` (imported here, not at the top: it imports this module)."""
    return sys.modules[__package__]


__all__ = ["save", "load", "load_generator"]
