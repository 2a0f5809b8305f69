"""The package's shape, enforced: layers that import downward only, no import cycles, no
module that writes another module's globals, and size budgets (as tinygrad enforces its
line count). Read with ``ast``: nothing is imported or run.

The layers, from the bottom. A module may import its own layer and the layers below it;
inside a layer, imports must not form a cycle."""
from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "batchviz"

LAYERS = [
    ("foundations", ["compiled", "errors", "words", "backend", "sourcelines"]),
    ("signatures and the op protocol", ["signature", "signature_names", "ops", "ops.base",
                                        "ops.gradients", "ops.parameter"]),
    ("the graph", ["graph"]),
    ("parameters", ["parameters"]),
    ("ops and their constructors", ["ops.*"]),
    ("expressions and models", ["expression", "model"]),
    ("schedules", ["schedule", "schedule.*"]),
    ("plans", ["plan", "plan.*"]),
    ("the executor", ["execute", "execute.*", "numerics"]),
    ("the runtime", ["runtime"]),
    ("networks and data", ["nn", "nn.*", "data", "data.*"]),
    ("traces", ["trace", "trace.*"]),
    ("explanations and pictures", ["explain", "explain.*", "viz", "viz.*"]),
    ("widgets", ["widgets", "widgets.*"]),
    ("programs", ["examples", "grade", "cli", "cli_options", "__main__", "__init__", "dynet", "dynet.*"]),
]

#: the core path, whose functions are read by students first (``ops.base`` is the op
#: protocol)
CORE = ["graph", "expression", "signature", "ops.base", "schedule.*", "plan.*", "execute.*",
        "runtime"]
MODULE_LINES = 400
FUNCTION_LINES = 60


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    for index, (_, patterns) in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(module, pattern) for pattern in patterns):
            return index
    raise AssertionError(f"batchviz/{MODULES[module].relative_to(PACKAGE)} ({module}) is in no "
                         "layer: add it to LAYERS in tests/test_layers.py")


def package_of(module: str) -> str:
    """The package that ``module``'s relative imports start from ("" for batchviz's own)."""
    if module == "__init__":
        return ""
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def imports(module: str) -> list:
    """``(imported module, line, inside a function)`` for every import of a batchviz module
    in ``module``, at any depth of its code; ``from . import x`` counts as importing ``x``
    when ``x`` is a module."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []

    def visit(node, in_function: bool):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("batchviz."):
                        found.append((alias.name[len("batchviz."):], child.lineno, inner))
            elif isinstance(child, ast.ImportFrom):
                for target in _targets(child, package_of(module)):
                    found.append((target, child.lineno, inner))
            visit(child, inner)

    visit(tree, False)
    return found + cimports(module)


#: ``from batchviz.x cimport ...`` in a ``.pxd`` file (C declarations are not Python)
CIMPORT = re.compile(r"^\s*from\s+batchviz\.([\w.]+)\s+cimport\b")


def cimports(module: str) -> list:
    """``(imported module, "N (.pxd)", False)`` for every module that the ``.pxd``
    beside ``module`` cimports: a compiled module imports what it cimports, when it is
    loaded, so the compiled path's imports are layered like the source's."""
    pxd = MODULES[module].with_suffix(".pxd")
    if not pxd.exists():
        return []
    lines = pxd.read_text(encoding="utf-8").splitlines()
    return [(match.group(1), f"{number} (.pxd)", False) for number, line in enumerate(lines, 1)
            if (match := CIMPORT.match(line))]


def _targets(node: ast.ImportFrom, package: str) -> list:
    if node.level:
        base = package.split(".") if package else []
        base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
        root = ".".join(base + ([node.module] if node.module else []))
    elif node.module and (node.module == "batchviz" or node.module.startswith("batchviz.")):
        root = node.module[len("batchviz."):] if node.module != "batchviz" else ""
    else:
        return []
    out = []
    for alias in node.names:
        sub = f"{root}.{alias.name}" if root else alias.name
        out.append(sub if sub in MODULES else root or "__init__")
    return out


def edges() -> list:
    """``(importer, imported, line, inside a function)`` between batchviz modules. Importing
    ``a.b.c`` runs the ``__init__`` of ``a`` and of ``a.b`` first, unless the importer is
    inside that package (whose ``__init__`` has run already), so those count too: a cycle
    through a package's ``__init__`` is a cycle."""
    out = []
    for module in MODULES:
        for target, line, inner in imports(module):
            parts = target.split(".")
            packages = [".".join(parts[:k]) for k in range(1, len(parts))]
            for imported in packages + [target]:
                if (imported in MODULES and imported != module
                        and not module.startswith(imported + ".")
                        and (imported == target or MODULES[imported].name == "__init__.py")):
                    out.append((module, imported, line, inner))
    return out


def where(module: str, line: int | None = None) -> str:
    file = MODULES[module]
    path = f"batchviz/{file.relative_to(PACKAGE)}" if file.is_relative_to(PACKAGE) else str(file)
    return f"{path}:{line}" if line else path


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_no_module_imports_a_layer_above_it():
    upward = []
    for module, target, line, _ in edges():
        if layer_of(target) > layer_of(module):
            upward.append(f"{where(module, line)} ({LAYERS[layer_of(module)][0]}) imports "
                          f"{where(target)} ({LAYERS[layer_of(target)][0]})")
    assert not upward, "imports of a layer above:\n" + "\n".join(upward)


def test_no_import_cycles():
    """Imports inside functions count too: one must not hide a cycle."""
    graph = {}
    for module, target, line, _ in edges():
        if target == "__init__" or module == "__init__":
            continue  # the package's own __init__ gathers everything for users
        graph.setdefault(module, {})[target] = line
    cycles = []
    state = {}

    def visit(module, path):
        state[module] = "open"
        for target in sorted(graph.get(module, {})):
            if state.get(target) == "open":
                cycle = path[path.index(target):] + [target]
                cycles.append(" -> ".join(f"{where(a, graph[a][b])}" for a, b in
                                          zip(cycle, cycle[1:])) + f" -> {where(target)}")
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_no_module_writes_another_modules_globals():
    """``other_module.name = ...`` (a global patched from outside) or a write to another
    module's private name: a module's state is its own."""
    writes = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = package_of(module)
        aliases = set()  # names bound to batchviz's modules
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                aliases |= {a.asname or a.name.split(".")[0] for a in node.names
                            if a.name.startswith("batchviz")}
            elif isinstance(node, ast.ImportFrom):
                targets = _targets(node, package)
                aliases |= {a.asname or a.name for a, t in zip(node.names, targets)
                            if t in MODULES and t.endswith(a.name)}
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id in aliases):
                    writes.append(f"{where(module, node.lineno)}: {target.value.id}.{target.attr}")
    assert not writes, "writes to another module's globals:\n" + "\n".join(writes)


#: imports inside functions that are allowed: ``bv.Stepper`` and ``bv.compare`` load the
#: widgets (and ipywidgets) only when first used, to keep ``import batchviz`` fast; DyNet's
#: ``print_graphviz`` loads the pictures' modules (and graphviz) only when a program asks
LAZY = {("__init__", "widgets"), ("dynet.graph", "trace"), ("dynet.graph", "viz")}


def test_imports_sit_at_the_top_of_their_module():
    """An import inside a function can hide a cycle from a reader (and from Python until
    the function runs); batchviz's modules import each other at the top, but for ``LAZY``."""
    inside = [f"{where(module, line)} imports {where(target)} inside a function"
              for module, target, line, inner in edges()
              if inner and (module, target) not in LAZY]
    assert not inside, "imports inside functions:\n" + "\n".join(inside)


def test_no_module_is_over_the_line_budget():
    long = [f"{where(m)}: {n} lines" for m, p in MODULES.items()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MODULE_LINES]
    assert not long, f"modules over {MODULE_LINES} lines:\n" + "\n".join(long)


def core_modules() -> list:
    return [m for m in MODULES if any(fnmatch.fnmatchcase(m, p) for p in CORE)]


def test_no_core_function_is_over_the_line_budget():
    long = []
    for module in core_modules():
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long.append(f"{where(module, node.lineno)} {node.name}: {lines} lines")
    assert not long, f"core functions over {FUNCTION_LINES} lines:\n" + "\n".join(long)


@pytest.mark.parametrize("source, message", [
    ("from .runtime import Graph\n", "imports of a layer above"),
])
def test_the_checks_can_fail(tmp_path, monkeypatch, source, message):
    """An upward import planted in a copy of graph.py is caught, naming both files."""
    fake = tmp_path / "graph.py"
    fake.write_text(MODULES["graph"].read_text(encoding="utf-8") + source, encoding="utf-8")
    monkeypatch.setitem(MODULES, "graph", fake)
    with pytest.raises(AssertionError, match=message) as failure:
        test_no_module_imports_a_layer_above_it()
    assert "graph.py" in str(failure.value) and "runtime.py" in str(failure.value)


def test_a_cycle_through_a_package_init_is_caught(tmp_path, monkeypatch):
    """``numerics`` importing ``execute.memory`` runs ``execute/__init__.py`` first, which
    imports ``execute.forward``; if that imports ``numerics``, it is a cycle."""
    numerics = tmp_path / "numerics.py"
    numerics.write_text("from .execute.memory import batch_outputs\n", encoding="utf-8")
    forward = tmp_path / "forward.py"
    forward.write_text(MODULES["execute.forward"].read_text(encoding="utf-8")
                       + "from .. import numerics\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, "numerics", numerics)
    monkeypatch.setitem(MODULES, "execute.forward", forward)
    with pytest.raises(AssertionError, match="import cycles") as failure:
        test_no_import_cycles()
    assert "numerics.py" in str(failure.value) and "__init__.py" in str(failure.value)


def test_a_pxd_cimport_is_an_import(tmp_path, monkeypatch):
    """A ``.pxd`` beside graph.py that cimports the runtime is an upward import, though
    graph.py itself does not import it."""
    fake = tmp_path / "graph.py"
    fake.write_text(MODULES["graph"].read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "graph.pxd").write_text("from batchviz.runtime cimport Graph\n",
                                        encoding="utf-8")
    monkeypatch.setitem(MODULES, "graph", fake)
    assert ("runtime", "1 (.pxd)", False) in imports("graph")
    with pytest.raises(AssertionError, match="imports of a layer above") as failure:
        test_no_module_imports_a_layer_above_it()
    assert "graph.py" in str(failure.value) and "runtime.py" in str(failure.value)
