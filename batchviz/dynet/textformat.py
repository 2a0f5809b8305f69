"""DyNet 2.1's text model format: what DyNet's ``ParameterCollection.save`` and ``dy.save``
write, read and written here so that a model moves between DyNet and batchviz.dynet.

A file is a sequence of records, one per parameter or lookup table::

    #Parameter# /W {3,2} 97 ZERO_GRAD
    +6.57460511e-01 +5.32431960e-01 -1.94983661e-01 +5.82042873e-01 -3.91863436e-01 ...
    #LookupParameter# /E {2,4} 129 ZERO_GRAD
    +6.57763600e-01 +9.66554880e-02 +7.11393952e-01 ...

The header gives the kind, the full name, DyNet's dimensions (a table's rows *last*), the
length in bytes of what follows it (DyNet skips records by it) and whether a gradient line
follows (``FULL_GRAD``) or not (``ZERO_GRAD``). The values line holds every value in DyNet's
memory order, column-major, each as ``%+.8e`` and a space. Nine significant digits are
enough to give back every float32 exactly, so a float32 value goes through the file to the
last bit, both ways.

This module knows records only; which records a collection, a parameter or ``dy.load``
reads is :mod:`.files`' business.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PARAMETER = "#Parameter#"
LOOKUP = "#LookupParameter#"
KINDS = (PARAMETER, LOOKUP)
#: what a record's kind is called in messages
KIND_WORDS = {PARAMETER: "parameter", LOOKUP: "lookup parameter"}

#: the width of one written value, "+6.57460511e-01 ", as DyNet counts it for the byte count
VALUE_WIDTH = 16


@dataclass(frozen=True)
class Record:
    """One parameter or table of a file: values flat, float32, in DyNet's order."""

    kind: str
    name: str
    dims: tuple
    values: np.ndarray
    line: int = 0          # the header's line in the file it was read from (1-based)
    batch: int = 1         # DyNet's batch size of the dimension (1 for every parameter)

    def where(self, fname) -> str:
        """Where the record is, for messages: ``model.txt, line 3 (#Parameter# /W {3,2})``."""
        header = f"{self.kind} {self.name} {dims_text(self.dims, self.batch)}"
        return f"{fname}, line {self.line} ({header})"


# --- between batchviz's view of a parameter and DyNet's records -----------------------------
def dims_of(kind: str, shape: tuple) -> tuple:
    """DyNet's dimensions of a parameter of ``shape`` (as ``as_array`` gives it): the same
    for a parameter; for a table, a row's dimensions and then the number of rows."""
    shape = tuple(int(d) for d in shape)
    return shape[1:] + shape[:1] if kind == LOOKUP else shape


def record_of(kind: str, name: str, array) -> Record:
    """The record of a parameter whose values (as ``as_array`` gives them) are ``array``."""
    array = np.asarray(array, dtype=np.float32)
    in_dynet_order = np.moveaxis(array, 0, -1) if kind == LOOKUP else array
    return Record(kind, name, dims_of(kind, array.shape), in_dynet_order.ravel(order="F"))


def array_of(record: Record) -> np.ndarray:
    """The record's values shaped as ``as_array`` gives them (float32), in C order as
    every array of the runtime is (a Fortran-ordered matrix would take another BLAS path
    and round differently)."""
    values = record.values.reshape(record.dims, order="F")
    return np.ascontiguousarray(np.moveaxis(values, -1, 0) if record.kind == LOOKUP else values)


def dims_text(dims: tuple, batch: int = 1) -> str:
    """DyNet's way of writing a dimension: ``{3,2}``, ``{12}``; ``{3,2X4}`` with a batch."""
    return "{" + ",".join(str(d) for d in dims) + (f"X{batch}" if batch != 1 else "") + "}"


def parse_dims(text: str) -> tuple:
    """``(dims, batch)`` of ``{3,2}`` or ``{3,2X4}``; a ValueError if it is not one."""
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"{text!r} is not a dimension like {{3,2}}")
    inner, _, batch = text[1:-1].partition("X")
    dims = tuple(int(d) for d in inner.split(",")) if inner else ()
    if not dims or any(d <= 0 for d in dims) or (batch and int(batch) <= 0):
        raise ValueError(f"{text!r} is not a dimension like {{3,2}}")
    return dims, int(batch) if batch else 1


# --- files ----------------------------------------------------------------------------------
def is_text_model(head: bytes) -> bool:
    """Whether a file beginning with ``head`` is in this format (an empty file is: DyNet's
    ``dy.save`` starts one, and a collection with no parameters saves nothing)."""
    return head == b"" or any(head.startswith(kind.encode() + b" ") for kind in KINDS)


def write(fname, records, append: bool = False) -> None:
    """Write ``records`` to ``fname`` as DyNet does (after what it holds, with ``append``).
    Gradients are not kept: every record is ``ZERO_GRAD``, which DyNet reads as a zero
    gradient."""
    try:
        f = open(fname, "a" if append else "w", encoding="ascii", newline="\n")
    except OSError as exc:
        raise RuntimeError(f"Could not write model to {fname} ({exc.strerror})") from exc
    with f:
        for r in records:
            f.write(f"{r.kind} {r.name} {dims_text(r.dims)} "
                    f"{len(r.values) * VALUE_WIDTH + 1} ZERO_GRAD\n")
            f.write("".join(f"{v:+.8e} " for v in r.values.tolist()) + "\n")


def read(fname) -> list:
    """Every record of ``fname``, checked whole: a RuntimeError naming the file, the line
    and what was expected for a header that is not DyNet's, a record cut short, or a
    values line that does not hold as many numbers as the dimensions say."""
    with open(fname, "rb") as f:
        text = f.read().decode("ascii", errors="replace")
    # DyNet ends every line with a newline: what follows the last one was cut short
    *lines, rest = text.split("\n")
    cut_at = len(lines) if rest else None
    records, k = [], 0
    while k < len(lines) or k == cut_at:
        record, k = _read_record(fname, lines, k, cut_at)
        records.append(record)
    return records


def _read_record(fname, lines: list, k: int, cut_at):
    """The record whose header is line ``k``, and the index of the line after it (``lines``
    holds the complete lines only; ``cut_at``: the index of a last line cut short)."""
    if k == cut_at:
        raise RuntimeError(f"{fname}, line {k + 1}: the file is truncated: it ends in the "
                           f"middle of a record's header")
    header = lines[k]
    fields = header.split()
    if len(fields) not in (4, 5) or fields[0] not in KINDS:
        raise RuntimeError(f"{fname}, line {k + 1}: not a DyNet model record: {header[:80]!r} "
                           f"(expected '#Parameter# NAME {{DIMS}} BYTES ZERO_GRAD' or "
                           "'#LookupParameter# ...', DyNet's text format)")
    kind, name, dims_field = fields[:3]
    try:
        dims, batch = parse_dims(dims_field)
        int(fields[3])
    except ValueError as exc:
        raise RuntimeError(f"{fname}, line {k + 1}: bad header of {name}: {exc}") from None
    grad = fields[4] if len(fields) == 5 else "FULL_GRAD"  # (DyNet's files before the flag)
    if grad not in ("ZERO_GRAD", "FULL_GRAD"):
        raise RuntimeError(f"{fname}, line {k + 1}: bad header of {name}: {grad!r} where "
                           "ZERO_GRAD or FULL_GRAD was expected")
    shell = Record(kind, name, dims, np.empty(0, np.float32), k + 1, batch)
    count = int(np.prod(dims)) * batch
    value_lines = 1 if grad == "ZERO_GRAD" else 2   # (the gradient's line is read, not kept)
    read = [_numbers(fname, shell, lines[j], j + 1, count) if j < len(lines) else
            _truncated(fname, shell, j, count) for j in range(k + 1, k + 1 + value_lines)]
    return Record(kind, name, dims, read[0], k + 1, batch), k + 1 + value_lines


def _truncated(fname, shell: Record, j: int, count: int):
    raise RuntimeError(f"{shell.where(fname)}: the file is truncated: expected {count} "
                       f"values on line {j + 1}, and the file ends before that line does")


def _numbers(fname, shell: Record, line: str, number: int, count: int) -> np.ndarray:
    tokens = line.split()
    if len(tokens) != count:
        raise RuntimeError(f"{shell.where(fname)}: expected {count} values on line {number} "
                           f"for dimensions {dims_text(shell.dims, shell.batch)}, found "
                           f"{len(tokens)}")
    try:
        return np.array(tokens, dtype=np.float64).astype(np.float32)
    except ValueError as exc:
        raise RuntimeError(f"{shell.where(fname)}: line {number}: {exc}") from None


__all__ = ["Record", "PARAMETER", "LOOKUP", "record_of", "array_of", "dims_of", "dims_text",
           "parse_dims", "is_text_model", "read", "write"]
