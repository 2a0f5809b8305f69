"""Builds batchviz's compiled twins (``batchviz/_compiled_twins.pyx``, see
``batchviz/twins.py``); everything else about the package is in ``pyproject.toml``.

The extension is optional: where it cannot be compiled (no C compiler, or a build without
build isolation and without Cython), the build goes on without it and batchviz runs the
readable Python versions."""
from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:
    ext_modules = []
else:
    twins = Extension("batchviz._compiled_twins", ["batchviz/_compiled_twins.pyx"],
                      optional=True)
    ext_modules = cythonize([twins], language_level=3, quiet=True)

setup(ext_modules=ext_modules)
