"""The ``.meta`` file of DyNet's ``dy.save``, read and written without unpickling anything.

DyNet writes one pickle per saved object: ``("Parameters", name)``,
``("LookupParameters", name)``, or ``(class, spec, collection name)`` for a builder or a
class of one's own. Unpickling runs whatever the file names, so batchviz never does:
:func:`read` walks the pickle's opcodes with :mod:`pickletools` (a disassembler, which only
reads) and builds plain data from them, numbers, strings, tuples, lists, dicts, with a
class or function kept as a :class:`Global` (its module and name, never imported or
called). Any other opcode (one that would make an object or call something) is refused.
:func:`write` writes such plain data as pickle opcodes itself (protocol 2), so that
DyNet's ``dy.load`` reads the file.
"""
from __future__ import annotations

import io
import pickletools
import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class Global:
    """A class or function named in a ``.meta`` file: ``_dynet.VanillaLSTMBuilder``."""

    module: str
    name: str

    def __str__(self) -> str:
        return f"{self.module}.{self.name}"


class _Mark:
    """Where a MARK opcode put its mark on the stack."""


_MARK = _Mark()

#: opcodes that push a value given in the opcode itself (strings, numbers)
_PUSH_ARG = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING",
             "BINSTRING", "SHORT_BINSTRING", "BININT", "BININT1", "BININT2", "INT", "LONG",
             "LONG1", "LONG4", "BINFLOAT", "FLOAT", "SHORT_BINBYTES", "BINBYTES", "BINBYTES8"}
_CONSTANTS = {"NONE": None, "NEWTRUE": True, "NEWFALSE": False, "EMPTY_TUPLE": ()}
_SMALL_TUPLES = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}
_MEMO_PUT = {"PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE"}
_MEMO_GET = {"GET", "BINGET", "LONG_BINGET"}
_IGNORED = {"PROTO", "FRAME"}


def read(fname) -> list:
    """The entries of a ``.meta`` file, as plain data (see the module's docstring)."""
    with open(fname, "rb") as f:
        data = f.read()
    stream, entries = io.BytesIO(data), []
    while stream.tell() < len(data):
        try:
            entries.append(_one(stream))
        except RuntimeError as exc:
            raise RuntimeError(f"{fname}: entry {len(entries) + 1}: {exc}") from None
        except Exception as exc:      # (pickletools' own complaints about damaged bytes)
            raise RuntimeError(f"{fname}: entry {len(entries) + 1} is not a pickle of plain "
                               f"data as DyNet's dy.save writes ({exc})") from None
    return entries


def _one(stream) -> object:
    """The value of the pickle that starts at ``stream``'s position (up to its STOP)."""
    stack, memo = [], {}
    for opcode, arg, _ in pickletools.genops(stream):
        name = opcode.name
        if name in _IGNORED:
            continue
        if name == "STOP":
            (value,) = stack
            return value
        if name in _PUSH_ARG:
            stack.append(arg)
        elif name in _CONSTANTS:
            stack.append(_CONSTANTS[name])
        elif name == "MARK":
            stack.append(_MARK)
        elif name == "TUPLE":
            stack.append(tuple(_pop_to_mark(stack)))
        elif name in _SMALL_TUPLES:
            n = _SMALL_TUPLES[name]
            items = stack[len(stack) - n:]
            del stack[len(stack) - n:]
            stack.append(tuple(items))
        elif name == "EMPTY_LIST":
            stack.append([])
        elif name == "LIST":
            stack.append(_pop_to_mark(stack))
        elif name == "APPEND":
            item = stack.pop()
            stack[-1].append(item)
        elif name == "APPENDS":
            items = _pop_to_mark(stack)
            stack[-1].extend(items)
        elif name == "EMPTY_DICT":
            stack.append({})
        elif name == "DICT":
            items = _pop_to_mark(stack)
            stack.append(dict(zip(items[::2], items[1::2])))
        elif name == "SETITEM":
            value, key = stack.pop(), stack.pop()
            stack[-1][key] = value
        elif name == "SETITEMS":
            items = _pop_to_mark(stack)
            stack[-1].update(zip(items[::2], items[1::2]))
        elif name == "GLOBAL":
            module, _, qualname = arg.partition(" ")
            stack.append(Global(module, qualname))
        elif name == "STACK_GLOBAL":
            qualname, module = stack.pop(), stack.pop()
            stack.append(Global(module, qualname))
        elif name in _MEMO_PUT:
            memo[len(memo) if arg is None else arg] = stack[-1]
        elif name in _MEMO_GET:
            stack.append(memo[arg])
        else:
            raise RuntimeError(f"it holds {name}, an opcode that makes an object or calls "
                               "something; batchviz reads only plain data (numbers, strings, "
                               "tuples, lists, dicts, names of classes and functions) and "
                               "never unpickles")
    raise RuntimeError("it ends before its STOP opcode (the file is truncated)")


def _pop_to_mark(stack: list) -> list:
    k = max(i for i, item in enumerate(stack) if item is _MARK)
    items = stack[k + 1:]
    del stack[k:]
    return items


# --- writing ----------------------------------------------------------------------------------
def write(fname, entries) -> None:
    """Write ``entries`` (plain data and :class:`Global` names), one pickle each."""
    out = bytearray()
    for entry in entries:
        out += b"\x80\x02"          # PROTO 2
        _emit(out, entry)
        out += b"."                 # STOP
    with open(fname, "wb") as f:
        f.write(bytes(out))


def _emit(out: bytearray, value) -> None:
    """The opcodes that push ``value``."""
    if value is None:
        out += b"N"
    elif value is True or value is False:
        out += b"\x88" if value else b"\x89"
    elif isinstance(value, int):
        if -2**31 <= value < 2**31:
            out += b"J" + struct.pack("<i", value)
        else:
            body = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
            out += b"\x8a" + bytes([len(body)]) + body
    elif isinstance(value, float):
        out += b"G" + struct.pack(">d", value)
    elif isinstance(value, str):
        body = value.encode("utf-8")
        out += b"X" + struct.pack("<I", len(body)) + body
    elif isinstance(value, Global):
        out += b"c" + f"{value.module}\n{value.name}\n".encode("utf-8")
    elif isinstance(value, tuple):
        out += b"("
        for item in value:
            _emit(out, item)
        out += b"t"
    elif isinstance(value, list):
        out += b"]("
        for item in value:
            _emit(out, item)
        out += b"e"
    elif isinstance(value, dict):
        out += b"}("
        for key, item in value.items():
            _emit(out, key)
            _emit(out, item)
        out += b"u"
    else:
        raise TypeError(f"a .meta file holds plain data, not a {type(value).__name__}")


__all__ = ["Global", "read", "write"]
