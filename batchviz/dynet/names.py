"""What a DyNet program's parameters are called in batchviz's pictures, reports and errors.

DyNet names a parameter ``/W`` when the program says ``name="W"``, and ``/_0``, ``/_1``,
... otherwise: names for saved files, not for reading. The batchviz parameter behind each
DyNet parameter (what signatures, pictures and error messages name) gets the name the
user knows instead:

* the name the program gave, without DyNet's leading ``/`` (``W``; ``enc/W`` in a
  sub-collection ``enc``);
* for a parameter made without a name, the variable the program's line assigns it to
  (``V = pc.add_parameters((3, 3))`` makes ``V``; ``self.E = ...`` makes ``E``);
* else DyNet's own name without its leading ``/`` (``_0``).

DyNet's full name stays what ``p.name()`` returns and what files hold. A readable name
already taken in the model (two ``W`` variables) falls back to DyNet's full name, which is
unique.
"""
from __future__ import annotations

import ast
import linecache
import sys

from ..sourcelines import inside_batchviz

#: the modules whose frames stand between the user's line and :func:`readable_name`
_OWN_FILES = ("/dynet/collection.py", "/dynet/names.py")


def readable_name(full: str, given, taken) -> str:
    """The batchviz name of DyNet parameter ``full`` (``/W``, ``/_0``); ``given``: the name
    the program passed (None: none), ``taken``: the names the model has already."""
    candidates = [full.lstrip("/")]
    if not given:
        variable = assigned_variable()
        if variable:
            candidates.insert(0, variable)
    for name in candidates:
        if name and name not in taken:
            return name
    return full


def assigned_variable():
    """The variable that the program's line calling ``add_parameters`` (or its kin)
    assigns the result to, or None: when a batchviz builder made the call (an LSTM's
    parameters are not the variable the builder goes to), or the line is not one simple
    assignment."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.replace("\\", "/").endswith(_OWN_FILES):
        frame = frame.f_back
    if frame is None or inside_batchviz(frame.f_code.co_filename):
        return None
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    try:
        statement = ast.parse(line.strip()).body[0]
    except (SyntaxError, IndexError):  # (a statement over several lines: no name)
        return None
    if not isinstance(statement, (ast.Assign, ast.AnnAssign)):
        return None
    target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
    if isinstance(target, ast.Tuple) and isinstance(statement.value, ast.Tuple):
        target = _target_of_call(target, statement.value, frame, len(line) - len(line.lstrip()))
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute):  # self.W = ...
        return target.attr
    return None


def _target_of_call(targets: ast.Tuple, values: ast.Tuple, frame, indent: int):
    """In ``W, b = pc.add_parameters(...), pc.add_parameters(...)``, the target of the
    call running now (Python 3.11+ tells its column), or None."""
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is None or len(targets.elts) != len(values.elts):
        return None
    here = list(positions())[frame.f_lasti // 2]
    column = here[2]
    if column is None or here[0] != frame.f_lineno:
        return None
    column -= indent
    for target, value in zip(targets.elts, values.elts):
        if value.col_offset <= column < (value.end_col_offset or 0):
            return target
    return None
