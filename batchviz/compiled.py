"""Which of batchviz's modules are compiled, and when their compiled form runs.

Building, scheduling, planning and running a graph is Python work per node and per batch
(the paper's App. B counts it as overhead). The modules on that path, named in
:data:`MODULES`, are compiled from their own ``.py`` source by Cython, which reads them as
plain Python (its "pure Python mode"): ``pip install`` writes a compiled module beside each
``.py`` where a C compiler is present. A ``.pxd`` file beside a module, where there is one,
tells Cython the C types of its classes' fields and of some functions' variables; the
``.py`` itself stays ordinary Python and is the only place where its steps are written.

The compiled form runs only when it was built from the source that is there now (the build
records a hash of every source file, :data:`SOURCES_FILE`): if any of these modules (or its
``.pxd``) changed after it was compiled, every one of them runs from its ``.py`` (all or
none, since compiled modules share C types), and a one-line notice says how to compile
them again. ``BATCHVIZ_PURE_PYTHON=1`` runs them all from source, as
does a machine without a compiler. :func:`compiled` tells which is the case, and
:data:`why_source` why.
"""
from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys

#: the modules compiled from their own source, in the order they run a graph: the arrays,
#: building, scheduling, planning, executing, training (``setup.py`` reads this list)
MODULES = (
    "batchviz.backend",
    "batchviz.signature",
    "batchviz.graph",
    "batchviz.expression",
    "batchviz.parameters",
    "batchviz.ops._build",
    "batchviz.ops.gradients",
    "batchviz.ops.elementwise",
    "batchviz.ops.linalg",
    "batchviz.ops.structure",
    "batchviz.ops.layout",
    "batchviz.ops.lstm",
    "batchviz.ops.lstm_steps",
    "batchviz.ops.lstm_sequences",
    "batchviz.ops.leaves",
    "batchviz.ops.losses",
    "batchviz.nn.lstm",
    "batchviz.dynet.dims",
    "batchviz.dynet.graph",
    "batchviz.dynet.expression",
    "batchviz.dynet.arith",
    "batchviz.dynet.shaping",
    "batchviz.dynet.parameters",
    "batchviz.dynet.rnn",
    "batchviz.dynet.losses",
    "batchviz.dynet.lstm",
    "batchviz.dynet.values",
    "batchviz.schedule.view",
    "batchviz.schedule.arrays",
    "batchviz.schedule.base",
    "batchviz.schedule.decisions",
    "batchviz.schedule.agenda",
    "batchviz.schedule.lookahead",
    "batchviz.schedule.simple",
    "batchviz.schedule.walk",
    "batchviz.plan.batch",
    "batchviz.plan.layout",
    "batchviz.plan.reads",
    "batchviz.plan.planner",
    "batchviz.execute.memory",
    "batchviz.execute.numerics",
    "batchviz.execute.forward",
    "batchviz.execute.backward",
    "batchviz.execute.stats",
    "batchviz.runtime",
    "batchviz.nn.trainers",
    "batchviz.dynet.trainers",
)

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source_path(module: str) -> str:
    """The ``.py`` file of ``module`` (one of :data:`MODULES`)."""
    return os.path.join(_PACKAGE_ROOT, *module.split(".")) + ".py"


def compiled_path(module: str) -> "str | None":
    """The compiled module beside ``module``'s ``.py``, or None when there is none."""
    stem = source_path(module)[:-3]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if os.path.exists(stem + suffix):
            return stem + suffix
    return None


#: written when the package is compiled (``setup.py``): a hash of each source file as compiled
SOURCES_FILE = "compiled_sources.json"


def _hash(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def changed_since_build(paths: list) -> list:
    """Of ``paths`` (files of the package, relative to it: ``"graph.py"``), those that are
    not as they were when the package was compiled: edited since, or new. (By content: the
    times of files say nothing once a wheel is installed.) All of them when the record of
    the compiled sources is missing."""
    package = os.path.join(_PACKAGE_ROOT, "batchviz")
    try:
        with open(os.path.join(package, SOURCES_FILE), encoding="utf-8") as f:
            recorded = json.load(f)
    except (OSError, ValueError):
        return list(paths)
    changed = []
    for path in paths:
        full = os.path.join(package, path)
        if os.path.exists(full) and recorded.get(path.replace(os.sep, "/")) != _hash(full):
            changed.append(path)
    return changed


def _why_source() -> "str | None":
    """Why the modules run from their ``.py`` files (None: they run compiled)."""
    if os.environ.get("BATCHVIZ_PURE_PYTHON", "") not in ("", "0"):
        return "BATCHVIZ_PURE_PYTHON is set"
    built = {module: compiled_path(module) for module in MODULES}
    if not any(built.values()):
        return "batchviz is not compiled (no C compiler when it was installed?)"
    files = [os.path.relpath(source_path(m), os.path.join(_PACKAGE_ROOT, "batchviz"))
             for m in MODULES]
    changed = changed_since_build(files + [f[:-3] + ".pxd" for f in files])
    if changed:
        return (f"{', '.join('batchviz/' + f for f in changed)} changed since batchviz was "
                "compiled: running batchviz's Python source; `pip install -e .` compiles it "
                "again")
    missing = [f"batchviz/{f}" for f, binary in zip(files, built.values()) if not binary]
    if missing:
        return (f"{', '.join(missing)} did not compile when batchviz was installed: running "
                "batchviz's Python source; `pip install -e .` compiles it again")
    return None


#: why the modules of :data:`MODULES` run from source (None: they run compiled)
why_source = _why_source()


def compiled() -> bool:
    """Whether the modules of :data:`MODULES` run compiled in this process."""
    return why_source is None


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Finds the ``.py`` of a batchviz module that should run from source before Python's
    own finder would find a compiled module beside it (which it prefers): every module of
    :data:`MODULES` when they run from source, and always a module that is not in
    :data:`MODULES` (a compiled file left from an older build must not run)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("batchviz.") or (fullname in MODULES and why_source is None):
            return None
        source = source_path(fullname)
        if not os.path.exists(source) or compiled_path(fullname) is None:
            return None  # (a package, or nothing compiled: Python's finder does as usual)
        return importlib.util.spec_from_file_location(fullname, source)


def install() -> None:
    """Make the imports of batchviz's modules take their ``.py`` where they should run from
    source; say so once when that is because the source changed. Called by
    ``batchviz/__init__.py`` before any other batchviz module is imported."""
    if any(isinstance(f, _SourceFinder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _SourceFinder())
    if why_source is not None and "`pip install -e .`" in why_source:  # (a build to redo)
        print(f"batchviz: {why_source}", file=sys.stderr)
