"""Settings of a DyNet program: autobatching, the random seed, the device.

DyNet reads them once, when ``import dynet`` runs, from ``dynet_config.set(...)`` called
before it or from command-line flags. batchviz reads them when a graph is made
(``renew_cg``), so ``dynet_config.set`` may also be called after the import, as long as it
is before the first graph. The sources, the later overriding the earlier:

1. the defaults: DyNet's own, so a program unchanged but for its import line runs as it
   would under DyNet: **no autobatching** (each node is its own batch, batchviz's
   ``"none"`` strategy), seed 0 (a fresh random seed, as DyNet);
2. DyNet's own ``dynet_config`` module, when the program imported it and called
   ``dynet_config.set`` (it keeps its settings where ``dynet_config.get()`` finds them);
3. this module's :func:`set` (``from batchviz.dynet import dynet_config``);
4. the command line: ``--dynet-autobatch N`` (0 none, 1 agenda, 2 depth, as DyNet; a
   batchviz strategy name such as ``lookahead`` is accepted too), ``--dynet-seed N``,
   ``--dynet-mem`` (accepted; batchviz grows its memory as needed), ``--dynet-gpus N`` /
   ``--dynet-gpu`` / ``--dynet-devices GPU:0`` (the CuPy backend). Flags may be written
   ``--dynet-seed 3`` or ``--dynet-seed=3``; they stay in ``sys.argv`` for the program's
   own argument parser, as with DyNet.
"""
from __future__ import annotations

import re
import sys
import warnings

import numpy as np

from .. import backend
from ..errors import BackendError

#: DyNet's ``--dynet-autobatch`` numbers and the batchviz strategies they select
AUTOBATCH_STRATEGIES = {0: "none", 1: "agenda", 2: "depth"}

#: what :func:`set` was given (None: not given); the command line wins over it
_given: dict = {}


def set(mem="512", random_seed=0, autobatch=0, profiling=0, weight_decay=0,  # noqa: A001
        shared_parameters=0, requested_gpus=0, gpu_mask=None) -> None:
    """DyNet's ``dynet_config.set``: autobatching (0, 1, 2 or a strategy name), the random
    seed (0: a fresh one), the GPUs to use (``requested_gpus >= 1``: the CuPy backend).
    ``mem``, ``profiling`` and ``shared_parameters`` are accepted and have no effect;
    ``weight_decay`` must be 0 (batchviz has no global weight decay: add an L2 term to
    the loss instead)."""
    if weight_decay:
        raise NotImplementedError("dynet_config.set(weight_decay=...): batchviz.dynet has no "
                                  "global weight decay; add lambda * dy.squared_norm(p) of "
                                  "each parameter p to the loss instead")
    _given.update(mem=mem, seed=int(random_seed), autobatch=autobatch, profiling=profiling,
                  requested_gpus=int(requested_gpus), gpu_mask=list(gpu_mask or []))


def set_gpu(flag: bool = True) -> None:
    """DyNet's ``dynet_config.set_gpu``: run on the GPU (CuPy)."""
    _given["requested_gpus"] = 1 if flag else 0


def get() -> dict | None:
    """The settings given to :func:`set` (None if it was not called), as DyNet's ``get``."""
    return dict(_given) if _given else None


def gpu() -> bool | None:
    return None if "requested_gpus" not in _given else bool(_given["requested_gpus"])


def _flag(argv: list, name: str):
    """The value of ``--dynet-NAME V`` or ``--dynet-NAME=V`` (also ``--dynet_NAME``) in
    ``argv``; True for the bare flag; None when absent."""
    for spelling in (f"--dynet-{name}", f"--dynet_{name}"):
        for i, arg in enumerate(argv):
            if arg == spelling:
                nxt = argv[i + 1] if i + 1 < len(argv) else None
                return True if nxt is None or nxt.startswith("--") else nxt
            if arg.startswith(spelling + "="):
                return arg.split("=", 1)[1]
    return None


def _dynet_config_module() -> dict:
    """The settings of DyNet's own ``dynet_config`` module, if the program imported it."""
    module = sys.modules.get("dynet_config")
    getter = getattr(module, "get", None) if module is not None else None
    found = getter() if callable(getter) else None
    if not isinstance(found, dict):
        return {}
    return {k: found[k] for k in ("seed", "autobatch", "requested_gpus") if k in found}


def settings(argv=None) -> dict:
    """The effective settings: ``{"strategy", "seed", "gpus"}`` from every source."""
    argv = sys.argv if argv is None else argv
    found = {"autobatch": 0, "seed": 0, "requested_gpus": 0}
    found.update(_dynet_config_module())
    found.update({k: v for k, v in _given.items() if k in found})
    for name, key in (("autobatch", "autobatch"), ("seed", "seed"), ("gpus", "requested_gpus")):
        value = _flag(argv, name)
        if value is not None:
            found[key] = value
    if _flag(argv, "gpu") is not None or "GPU" in str(_flag(argv, "devices") or ""):
        found["requested_gpus"] = max(1, int(found["requested_gpus"] or 0))
    return {"strategy": strategy_of(found["autobatch"]), "seed": int(found["seed"]),
            "gpus": int(found["requested_gpus"] or 0)}


def strategy_of(autobatch) -> str:
    """The batchviz strategy of DyNet's autobatch setting (a number or a strategy name)."""
    if isinstance(autobatch, str) and not autobatch.strip().lstrip("-").isdigit():
        return autobatch.strip()
    try:
        return AUTOBATCH_STRATEGIES[int(autobatch)]
    except (KeyError, ValueError):
        raise ValueError(f"--dynet-autobatch {autobatch!r}: use 0 (none), 1 (agenda), 2 (depth) "
                         "or a batchviz strategy name") from None


def use_device(gpus: int) -> None:
    """Run on CuPy when GPUs were asked for (``--dynet-gpus``), as DyNet runs on CUDA."""
    if gpus > 0 and backend.get_backend() != "cupy":
        try:
            backend.set_backend("cupy")
        except BackendError as exc:
            raise BackendError(f"the program asks for a GPU (--dynet-gpus, --dynet-gpu or "
                               f"--dynet-devices GPU:n, or dynet_config.set(requested_gpus=...)), "
                               f"and batchviz.dynet runs on GPUs with CuPy: {exc}") from None


#: DyNet's device names
_DEVICE_NAME = re.compile(r"^(CPU|GPU:\d+)$")
#: the device names given that batchviz.dynet has warned about (once each; a list, as
#: ``set`` is DyNet's ``dynet_config.set`` in this module)
_ignored_devices: list = []


def device_in_use() -> str:
    """The DyNet name of the device batchviz.dynet runs on: ``CPU``, or ``GPU:0`` on CuPy."""
    return "GPU:0" if backend.get_backend() == "cupy" else "CPU"


def check_device(device, who: str) -> None:
    """A ``device=`` given to ``who``: DyNet's names only (``CPU``, ``GPU:0``, ...).

    batchviz.dynet runs every expression on one device, so a program that places its
    parameters and expressions on several runs on that one: the values are the same, and
    a warning says so, once per device name."""
    if device is None or device == "":
        return
    if not isinstance(device, str) or not _DEVICE_NAME.match(device):
        raise ValueError(f"{who}: invalid device name {device!r}; DyNet's are 'CPU', 'GPU:0', "
                         "'GPU:1', ...")
    if device != device_in_use() and device not in _ignored_devices:
        _ignored_devices.append(device)
        warnings.warn(f"{who}: device {device!r} is not used; batchviz.dynet runs every "
                      f"expression on one device, here {device_in_use()} (the values are the "
                      "same)", stacklevel=3)


def random_generator(seed: int) -> np.random.Generator:
    """The generator of random inputs and initial values: seeded by ``seed``, fresh for 0."""
    return np.random.default_rng(seed if seed else None)
