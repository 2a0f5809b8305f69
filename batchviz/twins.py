"""Compiled twins of the code that builds and schedules graphs, and the switch between the
two versions.

Building a graph runs Python for every node of every minibatch (the paper's App. B counts
it as overhead). The functions and classes on that path that cost the most (the graph's
``push``, the op constructors, the DyNet layer's expressions, the agenda's loop) are marked
``@compiled_twin``: the readable version is the one at the mark, in the module that uses it;
``batchviz._compiled_twins`` (Cython, ``batchviz/_compiled_twins.pyx``) holds a
compiled copy with the same steps, in C types: a node's lists are C fields of the graph, an
expression is a C struct, and the calls between them are C calls.

When the extension is built (``pip install`` builds it where a C compiler is present) each
marked definition is replaced by its twin, unless the environment sets
``BATCHVIZ_PURE_PYTHON=1``. Without the extension everything runs as written here.
``tests/test_compiled_twins.py`` runs the DyNet example programs both ways and checks that
they build the same graphs, node by node, print the same losses and train the same
parameters, bit for bit.
"""
from __future__ import annotations

import importlib
import os

try:
    if os.environ.get("BATCHVIZ_PURE_PYTHON", "") not in ("", "0"):
        raise ImportError("BATCHVIZ_PURE_PYTHON is set")
    _twins = importlib.import_module("batchviz._compiled_twins")
except ImportError as error:
    _twins = None
    #: why the readable versions run (None: the compiled twins do)
    why_pure = str(error)
else:
    why_pure = None


def compiled() -> bool:
    """Whether the compiled twins replace the marked definitions in this process."""
    return _twins is not None


def compiled_twin(definition):
    """Mark a function, method or class that has a compiled twin: return the twin (the
    extension's ``TWINS`` names it by the definition's module and qualified name) when the
    extension is loaded, else the definition itself."""
    if _twins is None:
        return definition
    twin = _twins.TWINS[f"{definition.__module__}.{definition.__qualname__}"]
    if not isinstance(twin, type):  # (the readable version's docstring and module)
        twin.__doc__, twin.__module__ = definition.__doc__, definition.__module__
    return twin
