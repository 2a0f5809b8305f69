"""The files of ``save``/``populate``/``load_param`` and of ``dy.save``'s ``.data``: which
records a collection or a parameter writes and reads, and with which names, as DyNet's
``TextFileSaver``/``TextFileLoader`` choose them.

batchviz.dynet writes DyNet's text format (:mod:`.textformat`), so that DyNet loads what it
saves. It reads that format and the ``.npz`` archives that batchviz.dynet wrote before
(arrays keyed by DyNet's names, never pickle). Every check is made before a value is given
back, so a file that does not fit leaves the model as it was; its error is DyNet's
``RuntimeError``, naming the file, the record and what was expected.
"""
from __future__ import annotations

import zipfile

import numpy as np

from . import textformat
from .textformat import LOOKUP, PARAMETER, KIND_WORDS, dims_of, dims_text

ZIP_MAGIC = b"PK\x03\x04"


def kind_of(p) -> str:
    """The record kind of a parameter or a table (DyNet's ``#Parameter#`` or
    ``#LookupParameter#``), by its class's name so as not to import :mod:`.parameters`."""
    return LOOKUP if any(c.__name__ == "LookupParameters" for c in type(p).__mro__) \
        else PARAMETER


# --- keys, as DyNet checks them -----------------------------------------------------------------
def check_key(key: str) -> str:
    """A parameter's key: any name without a space or a '#' (the format's separators)."""
    if " " in key or "#" in key or key == "/":
        raise ValueError(f"Key could not include ' ' or '#': {key}")
    return key


def check_collection_key(key: str) -> str:
    """A collection's key: empty, or starting with '/' (DyNet's names do)."""
    if key and (not key.startswith("/") or " " in key or "#" in key or key == "/"):
        raise ValueError(f"Key should start with '/' and could not include ' ' or '#': {key}")
    return key


def _as_prefix(key: str) -> str:
    return key if not key or key.endswith("/") else key + "/"


# --- writing ------------------------------------------------------------------------------------
def collection_records(params, lookups, own_name: str, key: str = "") -> list:
    """The records of a collection, as DyNet saves one: its parameters, then its tables,
    each in the order they were made; named by their full names, or with ``key`` in place
    of the collection's own name."""
    check_collection_key(key)
    prefix = _as_prefix(key)
    return [textformat.record_of(kind_of(p), prefix + p.name()[len(own_name):] if key
                                 else p.name(), p._file_values())
            for p in list(params) + list(lookups)]


def save_collection(fname, params, lookups, own_name: str, key: str = "",
                    append: bool = False) -> None:
    textformat.write(fname, collection_records(params, lookups, own_name, key), append)


def save_one(fname, p, key: str = "", append: bool = False) -> None:
    """One parameter or table, under ``key`` (by default its own name)."""
    record = textformat.record_of(kind_of(p), check_key(key) or p.name(), p._file_values())
    textformat.write(fname, [record], append)


# --- reading ------------------------------------------------------------------------------------
class ModelFile:
    """A model file read whole, DyNet's text format or batchviz's older ``.npz``, and the
    questions DyNet's loader asks of it. Reading it once lets ``dy.load`` answer every
    object's question from one reading."""

    def __init__(self, fname):
        self.fname = str(fname)
        try:
            with open(fname, "rb") as f:
                head = f.read(64)
        except OSError:
            raise RuntimeError(f"Could not read model from {fname}") from None
        if head.startswith(ZIP_MAGIC):
            self.records, self.arrays = None, _read_npz(fname)
        elif textformat.is_text_model(head):
            self.records, self.arrays = textformat.read(fname), None
        else:
            first = head.split(b"\n")[0][:40]
            raise RuntimeError(f"{fname} is not a DyNet model file: it begins {first!r}; "
                               "expected DyNet's text format ('#Parameter# NAME {DIMS} ...' "
                               "records) or a .npz archive that batchviz.dynet wrote")

    def named(self, kind: str, key: str, shape=None) -> np.ndarray:
        """The values of the first ``kind`` record called ``key`` (DyNet's ``load_param``,
        ``p.populate``), of ``shape`` when given."""
        if self.arrays is not None:
            found = self.arrays.get(key)
        else:
            found = next((textformat.array_of(r) for r in self.records
                          if r.kind == kind and r.name == key and r.batch == 1), None)
        if found is None:
            raise RuntimeError(f"Could not find key {key} in the model file {self.fname}: "
                               f"it has no {KIND_WORDS[kind]} of that name "
                               f"(it holds {self._some_names()})")
        if shape is not None and found.shape != tuple(shape):
            raise RuntimeError(f"{self.fname}: {KIND_WORDS[kind]} {key} has dimensions "
                               f"{dims_text(dims_of(kind, found.shape))} in the file, but "
                               f"{dims_text(dims_of(kind, shape))} here (shape "
                               f"{tuple(shape)})")
        return found

    def for_collection(self, params, lookups, own_name: str, key: str = "") -> list:
        """The values of a collection's parameters and then its tables (DyNet's
        ``populate``): the file's records (those under ``key``, when given), matched in
        order, kind by kind, with what the collection holds, each of its dimensions."""
        params, lookups = list(params), list(lookups)
        if self.arrays is not None:
            return self._npz_collection(params + lookups, own_name, key)
        prefix = _as_prefix(key)
        chosen = [r for r in self.records if r.name.startswith(prefix)]
        where = f" under the key {key}" if key else ""
        values = []
        for kind, stored in ((PARAMETER, params), (LOOKUP, lookups)):
            records = [r for r in chosen if r.kind == kind]
            for p, r in zip(stored, records):
                expected = dims_of(kind, p.shape())
                if r.dims != expected or r.batch != 1:
                    raise RuntimeError(
                        f"{r.where(self.fname)}: the dimensions of {KIND_WORDS[kind]} "
                        f"{r.name} in the file do not match {p.name()} of the collection "
                        f"{own_name}, {dims_text(expected)} (shape {p.shape()})")
                values.append(textformat.array_of(r))
            if len(records) < len(stored):
                p = stored[len(records)]
                raise RuntimeError(
                    f"{self.fname} is missing a {KIND_WORDS[kind]}: it holds "
                    f"{len(records)}{where}, the collection {own_name} has {len(stored)}; "
                    f"expected one for {p.name()} {dims_text(dims_of(kind, p.shape()))} "
                    f"after {records[-1].name if records else 'none'}")
            if len(records) > len(stored):
                extra = records[len(stored)]
                raise RuntimeError(
                    f"{extra.where(self.fname)}: too many {KIND_WORDS[kind]}s{where} for "
                    f"the collection {own_name}, which has {len(stored)}")
        return values

    def _npz_collection(self, stored: list, own_name: str, key: str) -> list:
        """An ``.npz`` archive's arrays keyed by the parameters' names (with ``key`` in
        place of the collection's name)."""
        prefix = key or own_name
        values = []
        for p in stored:
            name = prefix + p.name()[len(own_name):]
            values.append(self.named(kind_of(p), name, p.shape()))
        return values

    def _some_names(self) -> str:
        names = sorted(self.arrays) if self.arrays is not None \
            else [r.name for r in self.records]
        if not names:
            return "nothing"
        return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")


def _read_npz(fname) -> dict:
    """Every array of a ``.npz`` archive batchviz.dynet wrote, by name (object arrays, which
    would need pickle, are refused)."""
    try:
        with np.load(fname, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise RuntimeError(f"{fname} is a damaged .npz archive ({exc})") from None


__all__ = ["ModelFile", "collection_records", "save_collection", "save_one", "check_key",
           "check_collection_key", "kind_of"]
