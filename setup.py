"""Builds batchviz's compiled twins (``batchviz/_compiled_twins.pyx``, see
``batchviz/twins.py``); everything else about the package is in ``pyproject.toml``.

The extension is optional: where it cannot be compiled (no C compiler), the build goes on
without it and batchviz runs the readable Python versions."""
from Cython.Build import cythonize
from setuptools import Extension, setup

twins = Extension("batchviz._compiled_twins", ["batchviz/_compiled_twins.pyx"], optional=True)
setup(ext_modules=cythonize([twins], language_level=3, quiet=True))
