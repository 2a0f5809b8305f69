"""Builds batchviz's compiled twins (``batchviz/_compiled_*.pyx``, see
``batchviz/twins.py``); everything else about the package is in ``pyproject.toml``.

The extensions are optional: where one cannot be compiled (no C compiler, or a build without
build isolation and without Cython), the build goes on without it and batchviz runs the
readable Python versions."""
import os

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:
    ext_modules = []
else:
    #: the update rules' twins must round as NumPy does: no fused multiply-adds
    exact = [] if os.name == "nt" else ["-ffp-contract=off", "-fno-math-errno"]
    twins = [Extension(f"batchviz.{name}", [f"batchviz/{name}.pyx"], optional=True,
                       extra_compile_args=flags)
             for name, flags in (("_compiled_twins", []), ("_compiled_plan", []),
                                 ("_compiled_rules", exact))]
    ext_modules = cythonize(twins, language_level=3, quiet=True)

setup(ext_modules=ext_modules)
