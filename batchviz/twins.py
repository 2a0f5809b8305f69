"""Compiled twins of the code that builds graphs, and the switch between the two versions.

This is what is left of an older way to make batchviz fast: a hand-written second copy of
a readable definition. The schedules, the plan, the executor and the Adam rule have none
any more: they are compiled from their own source (:mod:`batchviz.compiled`), and so will
these be.

Building a graph runs Python for every node of every minibatch (the paper's App. B counts
it as overhead). The functions and classes on that path that cost the most (the graph's
``push``, the op constructors, the DyNet layer's expressions) are marked
``@compiled_twin``. The readable version is the one at the mark, in the module that uses it. The extension
named in :data:`EXTENSIONS` (Cython, ``batchviz/_compiled_twins.pyx``) holds compiled
copies with the same steps, in C types.

When the extension is built (``pip install`` builds it where a C compiler is present) each
marked definition is replaced by its twin, unless the environment sets
``BATCHVIZ_PURE_PYTHON=1``, the ``.pyx`` changed since it was built, or a module holding a
marked definition did: an edit of a readable version always runs (with a one-line notice
saying how to build again). :data:`READABLE` keeps the replaced readable versions.
``tests/test_compiled_twins.py`` runs the DyNet example programs both ways and checks that
they build the same graphs, node by node, make the same plans, print the same losses and
train the same parameters, bit for bit.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys

from . import compiled as compiled_modules

#: the extension that holds the twins
EXTENSIONS = ("batchviz._compiled_twins",)



def _check_built(name: str) -> None:
    """Raise ImportError when the extension ``name`` is not built, or its Cython source
    beside it changed since it was (a checkout whose ``.pyx`` changed since ``pip install
    -e .``): its twins could differ from the readable versions, which then run instead."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ImportError(f"{name} is not built")
    source = name.rsplit(".", 1)[1] + ".pyx"
    if compiled_modules.changed_since_build([source]):
        raise ImportError(f"{name} is older than {source}: run "
                          "`pip install -e .` to build the compiled twins again")


def _edited_since_built(twins: dict) -> list:
    """The modules holding readable versions of ``twins`` that changed since the twins were
    built: an edit there must run, so the readable versions do."""
    files = set()
    for qualified in twins:
        parts = qualified.split(".")[1:]  # (without "batchviz")
        for end in range(len(parts) - 1, 0, -1):  # the longest prefix that is a .py file
            path = os.path.join(*parts[:end]) + ".py"
            if os.path.exists(os.path.join(os.path.dirname(__file__), path)):
                files.add(path)
                break
    return ["batchviz/" + f for f in compiled_modules.changed_since_build(sorted(files))]


try:
    if os.environ.get("BATCHVIZ_PURE_PYTHON", "") not in ("", "0"):
        raise ImportError("BATCHVIZ_PURE_PYTHON is set")
    _twins = {}   # all or none: one switch says which code runs
    for _extension in EXTENSIONS:
        _check_built(_extension)
        _twins.update(importlib.import_module(_extension).TWINS)
        _edited = _edited_since_built(importlib.import_module(_extension).TWINS)
        if _edited:
            if "changed since" not in (compiled_modules.why_source or ""):  # (said once)
                print(f"batchviz: {', '.join(_edited)} changed since the compiled twins were "
                      "built: running the readable versions; `pip install -e .` builds them "
                      "again", file=sys.stderr)
            raise ImportError(f"{', '.join(_edited)} changed since the compiled twins were built")
except ImportError as error:
    _twins = None
    #: why the readable versions run (None: the compiled twins do)
    why_pure = str(error)
else:
    why_pure = None

#: the readable version of each definition replaced by its twin, by qualified name
READABLE: dict = {}


def compiled() -> bool:
    """Whether the compiled twins replace the marked definitions in this process."""
    return _twins is not None


def compiled_twin(definition):
    """Mark a function, method or class that has a compiled twin: return the twin (an
    extension's ``TWINS`` names it by the definition's module and qualified name) when the
    extensions are loaded, else the definition itself."""
    if _twins is None:
        return definition
    name = f"{definition.__module__}.{definition.__qualname__}"
    if name not in _twins:
        raise ImportError(f"{name} is marked @compiled_twin, but the compiled extensions have no "
                          "twin of it: build them again (`pip install -e .`), or run the "
                          "readable versions (BATCHVIZ_PURE_PYTHON=1)")
    twin, READABLE[name] = _twins[name], definition
    if not isinstance(twin, type):  # (the readable version's docstring and module)
        twin.__doc__, twin.__module__ = definition.__doc__, definition.__module__
    return twin
