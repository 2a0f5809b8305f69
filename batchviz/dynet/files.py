"""The files of ``save``/``populate``/``dy.save``/``dy.load``: NumPy ``.npz`` archives of
arrays keyed by DyNet's parameter names (``/W``, ``/vanilla-lstm-builder/_0``). Not DyNet's
text format, and never pickle: a file holds only arrays (``dy.save``'s description of the
objects is a JSON file beside it)."""
from __future__ import annotations

import os

import numpy as np


def write(fname, arrays: dict, append: bool = False) -> None:
    """Write ``arrays`` (name -> array) to ``fname``; ``append`` keeps what it held."""
    if append and os.path.exists(fname):
        arrays = {**read(fname), **arrays}
    with open(fname, "wb") as f:  # a file object: np.savez would append ".npz" to a name
        np.savez(f, **{name: np.asarray(a, dtype=np.float32) for name, a in arrays.items()})


def read(fname) -> dict:
    """Every array of ``fname``, by name."""
    try:
        with np.load(fname, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise ValueError(f"{fname} is not a batchviz.dynet parameter file (.npz): {exc}") from exc


def read_one(fname, key: str, shape=None) -> np.ndarray:
    """The array saved under ``key`` (of ``shape``, when given)."""
    return read_all(fname, [key], None if shape is None else [shape])[0]


def read_all(fname, keys: list, shapes=None) -> list:
    """The arrays saved under ``keys``; a ValueError naming every missing key or wrong shape."""
    arrays = read(fname)
    missing = [k for k in keys if k not in arrays]
    if missing:
        raise ValueError(f"{fname} has no parameter {missing[0]!r} ({len(missing)} of "
                         f"{len(keys)} missing; the file holds {sorted(arrays)[:5]}...)")
    found = [arrays[k] for k in keys]
    for k, a, shape in zip(keys, found, shapes or [None] * len(keys)):
        if shape is not None and a.shape != tuple(shape):
            raise ValueError(f"{fname}: {k!r} has shape {a.shape} in the file but {tuple(shape)} "
                             "here")
    return found
