"""Compiled twins of the code that builds, schedules and plans graphs and of the Adam
update, and the switch between the two versions.

Building a graph runs Python for every node of every minibatch (the paper's App. B counts
it as overhead), and planning a run looks at every argument of every node. The functions
and classes on those paths that cost the most (the graph's ``push``, the op constructors,
the DyNet layer's expressions, the agenda's loop, the plan's steps per batch) are marked
``@compiled_twin``, and so is the Adam rule, a dozen passes over every parameter. The
readable version is the one at the mark, in the module that uses it. The extensions named
in :data:`EXTENSIONS` (Cython, ``batchviz/_compiled_*.pyx``) hold compiled copies with the
same steps, in C types: a node's lists are C fields of the graph, an expression is a C
struct, the calls between them are C calls, the loops over a batch's nodes or a
parameter's elements are C loops.

When the extensions are built (``pip install`` builds them where a C compiler is present)
each marked definition is replaced by its twin, unless the environment sets
``BATCHVIZ_PURE_PYTHON=1``; :data:`READABLE` keeps the readable versions. Without the
extensions everything runs as written at the marks. ``tests/test_compiled_twins.py`` runs
the DyNet example programs both ways and checks that they build the same graphs, node by
node, make the same plans, print the same losses and train the same parameters, bit for
bit; it also compares the plan's twins with the readable versions on random graphs, and
the Adam rule's on random arrays.
"""
from __future__ import annotations

import importlib
import importlib.util
import os

#: the extensions that hold the twins: graph building, the DyNet layer and the agenda; the
#: plan's steps per batch; the trainers' update rules
EXTENSIONS = ("batchviz._compiled_twins",)



def _check_built(name: str) -> None:
    """Raise ImportError when the extension ``name`` is older than its Cython source beside
    it (a checkout whose ``.pyx`` changed since ``pip install -e .``): its twins could differ
    from the readable versions, which then run instead."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ImportError(f"{name} is not built")
    source = os.path.join(os.path.dirname(spec.origin), name.rsplit(".", 1)[1] + ".pyx")
    if os.path.exists(source) and os.path.getmtime(source) > os.path.getmtime(spec.origin):
        raise ImportError(f"{name} is older than {os.path.basename(source)}: run "
                          "`pip install -e .` to build the compiled twins again")


try:
    if os.environ.get("BATCHVIZ_PURE_PYTHON", "") not in ("", "0"):
        raise ImportError("BATCHVIZ_PURE_PYTHON is set")
    _twins = {}   # all or none: one switch says which code runs
    for _extension in EXTENSIONS:
        _check_built(_extension)
        _twins.update(importlib.import_module(_extension).TWINS)
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
