"""DyNet's device queries: ``available_devices()`` and ``get_device_info(name)``.

DyNet lists every device it set up (each GPU it was given, and the CPU). batchviz.dynet
runs every parameter and expression on one device: the CPU, or the GPU CuPy uses, which
DyNet would name ``GPU:0``. So that is the one device listed, and the one whose
information is given; other devices named in ``device=`` arguments are warned about and
not used (:func:`.config.check_device`).
"""
from __future__ import annotations

import importlib.util

from . import config
from .graph import current

#: whether a GPU can be used: DyNet's says whether it was built with CUDA; batchviz.dynet
#: runs on a GPU through CuPy, so it says whether CuPy is installed
HAVE_CUDA = importlib.util.find_spec("cupy") is not None

#: what DyNet prints when a GPU is asked for and cannot be had
ERRMSG = ("batchviz.dynet runs on a GPU through CuPy, which is not installed: install the "
          "CuPy wheel for your CUDA version (pip install cupy-cuda12x, for example) to use "
          "--dynet-gpus")


class DeviceInfo:
    """What DyNet tells of a device: its ``name`` (``"CPU"``, ``"GPU:0"``), ``id`` (its
    number among the devices) and ``type`` (always -1: DyNet 2.1's Python API leaves the
    type out)."""

    def __init__(self, name: str, id: int, dtype: int = -1):  # noqa: A002 (DyNet's names)
        self.name, self.id, self.type = name, id, dtype

    def __repr__(self) -> str:
        return f"DeviceInfo(name={self.name!r}, id={self.id}, type={self.type})"


def available_devices() -> list:
    """The names of the devices programs can use: ``["CPU"]``, or ``["GPU:0"]`` when
    batchviz runs on CuPy (``--dynet-gpus 1``). The names are ``str``, as DyNet documents
    them (DyNet 2.1 itself returns ``bytes`` under Python 3)."""
    current()  # (the settings are read, and the device chosen, with the first graph)
    return [config.device_in_use()]


def get_device_info(name: str = "") -> DeviceInfo:
    """The :class:`DeviceInfo` of the device called ``name`` (``""``: the default one);
    a ``RuntimeError``, as in DyNet, for a name that is not in :func:`available_devices`."""
    if not isinstance(name, str):
        raise TypeError(f"get_device_info: the device name must be a str such as 'CPU' or "
                        f"'GPU:0', got {type(name).__name__}")
    devices = available_devices()
    if name not in devices and name != "":
        raise RuntimeError(f"Invalid device name: {name!r}; batchviz.dynet runs on one "
                           f"device, {devices[0]!r} (see available_devices())")
    return DeviceInfo(devices[0], 0)
