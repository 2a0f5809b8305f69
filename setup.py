"""Compiles the modules named in ``batchviz/compiled.py`` from their own ``.py`` source with
Cython (see that module); everything else about the package is in ``pyproject.toml``.

The compiled modules are optional: where one cannot be compiled (no C compiler, or a build
without build isolation and without Cython), the build goes on without it and batchviz runs
its Python source, which gives the same results more slowly."""
import ast
import hashlib
import json
import os
from pathlib import Path

from setuptools import Extension, setup


def compiled_modules() -> tuple:
    """``MODULES`` of ``batchviz/compiled.py``, read without importing batchviz (whose
    dependencies a build environment does not have)."""
    tree = ast.parse(Path("batchviz/compiled.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            node = ast.Assign(targets=[node.target], value=node.value)
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "MODULES":
            return ast.literal_eval(node.value)
    raise RuntimeError("batchviz/compiled.py defines no MODULES")


def record_sources() -> None:
    """Write ``batchviz/compiled_sources.json``: a hash of every ``.py``, ``.pxd`` and ``.pyx``
    file of the package as it is compiled now. At import, a file whose hash differs has
    changed since (an edit), and its own code runs instead of the compiled one
    (``batchviz/compiled.py``). Hashes, not times: an installed wheel's files all get the
    time of their installation, in any order."""
    hashes = {str(path.relative_to("batchviz")): hashlib.sha256(path.read_bytes()).hexdigest()
              for path in sorted(Path("batchviz").rglob("*"))
              if path.suffix in (".py", ".pxd", ".pyx") and "__pycache__" not in path.parts}
    Path("batchviz", SOURCES_FILE).write_text(json.dumps(hashes, indent=0, sort_keys=True))


#: the hashes of the sources as compiled (``record_sources``)
SOURCES_FILE = "compiled_sources.json"

#: the Python semantics of the source, kept: annotations are documentation (not C types),
#: indexing and division behave as in Python
DIRECTIVES = {"language_level": 3, "binding": True, "annotation_typing": False}

try:
    from Cython.Build import cythonize
except ImportError:
    ext_modules = []
else:
    sources = [Extension(module, [module.replace(".", "/") + ".py"], optional=True)
               for module in compiled_modules()]
    record_sources()  # first: a file edited while it compiles then differs from the record
    ext_modules = cythonize(sources, compiler_directives=DIRECTIVES, quiet=True,
                            nthreads=os.cpu_count() or 1)

setup(ext_modules=ext_modules, package_data={"batchviz": [SOURCES_FILE]},
      options={"build_ext": {"parallel": os.cpu_count() or 1}})
