"""The user's own lines: which line of their code built a node, and how to print it.

A graph that records sources (``bv.Graph(record_source=True)``) keeps, for every node, the
``file:line`` of the first stack frame outside the batchviz package: the line of the
user's code that asked for the node, even when a builder of ``batchviz.nn`` made it. Reports
then say "tagger.py:41" where they would otherwise say "node #2417".

Recording walks the stack once per node, so it is off unless asked for. It can be asked for
before the graph exists, for graphs that code one cannot change creates (a script, a
training loop): every graph created inside ``with bv.recording_sources():`` records, as do
graphs created inside ``with bv.check_numerics():`` (whose errors name the line) and the
graphs of a script run by ``batchviz explain script.py``.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager

_PACKAGE = "/" + __name__.rsplit(".", 1)[0] + "/"
_open_blocks = 0  # how many ``recording_sources()`` blocks are open


@contextmanager
def recording_sources():
    """Every graph created inside the block records the user's line of each of its nodes
    (as ``bv.Graph(record_source=True)`` does), so that ``bv.explain``, ``bv.trace`` and the
    widgets can name the lines that split batches. A graph given ``record_source=False``
    explicitly does not record."""
    global _open_blocks
    _open_blocks += 1
    try:
        yield
    finally:
        _open_blocks -= 1


def recording() -> bool:
    """Whether a graph created now records sources unless told otherwise."""
    return _open_blocks > 0


def user_frame():
    """``(filename, line)`` of the first stack frame outside the batchviz package, or None.
    (Compiled modules of batchviz make no frames, so the walk goes by file names, never by
    counting frames.)"""
    frame = sys._getframe(1)
    while frame is not None and inside_batchviz(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    return frame.f_code.co_filename, frame.f_lineno


def inside_batchviz(filename: str) -> bool:
    return _PACKAGE in filename.replace("\\", "/")


def where_text(source: str) -> str:
    """A recorded ``/path/to/tagger.py:41`` as a reader wants it: ``tagger.py:41``, or
    ``In[5], line 3`` for a cell of the running IPython or Jupyter session."""
    filename, _, line = source.rpartition(":")
    if not filename:
        return source
    cell = _cell_name(filename)
    if cell is not None:
        return f"{cell}, line {line}"
    return f"{os.path.basename(filename)}:{line}"


def _cell_name(filename: str):
    """``In[5]`` when ``filename`` is a cell of the running IPython session, else None."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    name_of = getattr(getattr(shell, "compile", None), "format_code_name", None)
    if name_of is None:
        return None
    named = name_of(filename)
    return named[1] if named else None
