"""Shared input handling for the loaders: where lines come from, and how errors point at them.

Every reader in :mod:`batchviz.data` accepts either a path or an iterable of lines.
Tests and notebooks find it handy to pass a short list of strings instead of writing a
file, while real experiments read files from disk. Both routes go through
:func:`read_source`, so error messages always look the same: ``file:line: what is wrong``
(``<lines>`` stands in for the file name when the caller passed lines), which is the
format editors and terminals already know how to jump to.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Union

Source = Union[str, "os.PathLike[str]", Iterable[str]]


class DataFormatError(ValueError):
    """A malformed input file. Subclasses ``ValueError`` so callers can catch either.

    ``source`` is the file name (or ``"<lines>"``), ``line`` the 1-based line number and
    ``column`` the 1-based column when the reader knows it (bracketed trees), else None.
    """

    def __init__(self, source: str, line: int, message: str, column: int | None = None):
        self.source, self.line, self.column = source, line, column
        where = f"{source}:{line}" if column is None else f"{source}:{line}:{column}"
        super().__init__(f"{where}: {message}")


def read_source(source: Source) -> tuple[str, list[str]]:
    """Return ``(name, lines)`` with line endings removed.

    A ``str`` or ``os.PathLike`` is a file path (read as UTF-8); anything else is taken as
    an iterable of lines. A ``str`` with a newline in it is almost certainly file *contents*
    passed by mistake, so we refuse it rather than fail with a confusing "file not found".
    """
    if isinstance(source, str) and "\n" in source:
        raise TypeError(
            "got a multi-line string where a path was expected; "
            "pass text.splitlines() to parse text directly"
        )
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        with open(name, encoding="utf-8") as handle:
            return name, [line.rstrip("\r\n") for line in handle]
    return "<lines>", [line.rstrip("\r\n") for line in source]
