"""DyNet 2.1's Python API over batchviz's runtime: ``import batchviz.dynet as dy``.

A DyNet program runs with its import line changed, gives DyNet's results, and everything
batchviz shows works on it (``batchviz explain prog.py``, ``bv.trace``, the widgets). The
page "Running DyNet programs" of the docs has the table of what is supported and how it
differs; the design in brief:

* **Graphs.** DyNet's single computation graph is a batchviz :class:`~batchviz.Graph`, made
  current by ``dy.renew_cg()`` (:mod:`.graph`). Its batching strategy comes from DyNet's
  settings (:mod:`.config`): ``--dynet-autobatch 1`` (or ``dynet_config.set(autobatch=1)``)
  is the agenda, ``2`` the depth strategy, a batchviz strategy name any other; with no
  setting there is **no autobatching**, as in DyNet.
* **Expressions** (:mod:`.expression`) wrap a batchviz node and DyNet's minibatch size, and
  their operators mean what DyNet's mean: ``x * y`` is a matrix product here, while
  batchviz's own ``*`` stays element-wise; nothing of batchviz is patched.
* **The minibatch dimension** (DyNet's "manual batching") is the last axis of a batchviz
  node: DyNet's ``((d,), 32)`` is a ``(d, 32)`` node. So ``W * X`` is one product, a batched
  node is one node, and batched nodes batch with each other under autobatching: the paper's
  "manual batching with autobatching on top" (§4.1). ``explain`` counts each batched node
  once, with its full size.
* **Parameters** (:mod:`.parameters`) are batchviz parameters under DyNet's names, in
  collections (:mod:`.collection`);
  initializers (:mod:`.initializers`) draw DyNet's distributions from the seeded generator.
* **Builders**: ``VanillaLSTMBuilder`` runs on batchviz's fused LSTM steps (:mod:`.lstm`),
  and so does ``SparseLSTMBuilder``, its masked form (:mod:`.sparse_lstm`);
  the simple RNN, GRU, coupled and fast LSTMs are written with DyNet's ops (:mod:`.rnn`), and
  so are the softmax layers (:mod:`.softmax_builders`); ``StackedRNNState`` stacks builders
  by hand (:mod:`.stacked`).
* **Trainers** (:mod:`.trainers`, :mod:`.eg_trainer`) apply DyNet's update rules with its defaults.
* **Checkpoints and dumps**: ``cg_checkpoint``/``cg_revert`` cut the graph back to a mark
  and ``dump_cg`` prints it with its values (:mod:`.graph`, :mod:`.dump`); DyNet's
  ``Tensor`` (:mod:`.tensor`) and device queries (:mod:`.devices`) are here too.
* Every public name of DyNet 2.1's module is here; a use of one that cannot have DyNet's
  meaning (a minibatch of convolution filters, say) raises ``NotImplementedError`` naming
  what to do instead, never a wrong result.
"""
from __future__ import annotations

from . import config as dynet_config
from .arith import *  # noqa: F401,F403
from .arith import __all__ as _arith_names
from .expression import Expression
from .devices import ERRMSG, HAVE_CUDA, DeviceInfo, available_devices, get_device_info
from .graph import (ComputationGraph, cg, cg_checkpoint, cg_revert, cg_version, dump_cg,
                    print_graphviz, print_text_graphviz, renew_cg, reset_random_seed)
from .initializers import (ConstInitializer, FromFileInitializer, GlorotInitializer,
                           IdentityInitializer, NormalInitializer, NumpyInitializer,
                           PyInitializer, SaxeInitializer, UniformInitializer)
from .inputs import (FloatValue, FloatVectorValue, InputExpression, UnsignedValue,
                     UnsignedVectorValue, constant, inputMatrix, inputTensor,
                     inputTensorTranspose, inputVector, matInput, one_hot, ones,
                     random_bernoulli, random_gumbel, random_normal, random_uniform,
                     scalarInput, sparse_inputTensor, to_device, vecInput, zeroes, zeros)
from .io import load, load_generator, save
from .losses import *  # noqa: F401,F403
from .losses import __all__ as _loss_names
from .lstm import BiRNNBuilder, CompactVanillaLSTMBuilder, LSTMBuilder, VanillaLSTMBuilder
from .lstm_ops import *  # noqa: F401,F403
from .lstm_ops import __all__ as _lstm_op_names
from .matrix_functions import inverse, logdet
from .collection import Model, ParameterCollection
from .contractions import *  # noqa: F401,F403
from .contractions import __all__ as _contraction_names
from .parameters import (LookupParameters, Parameters, const_parameter, lookup, lookup_batch,
                         parameter)
from .reductions import *  # noqa: F401,F403
from .reductions import __all__ as _reduction_names
from .rnn import CoupledLSTMBuilder, FastLSTMBuilder, GRUBuilder, RNNState, SimpleRNNBuilder
from .shaping import *  # noqa: F401,F403
from .sparse_lstm import SparseLSTMBuilder
from .stacked import StackedRNNState
from .softmax_builders import (ClassFactoredSoftmaxBuilder, SoftmaxBuilder,
                               StandardSoftmaxBuilder)
from .tensor import Tensor
from .shaping import __all__ as _shaping_names
from .trainers import (AdadeltaTrainer, AdagradTrainer, AdamTrainer, AmsgradTrainer,
                       CyclicalSGDTrainer, MomentumSGDTrainer, RMSPropTrainer,
                       SimpleSGDTrainer, Trainer)
from .eg_trainer import EGTrainer
__version__ = "2.1"  # the DyNet API this module follows


def forward(expressions, recalculate: bool = False) -> None:
    """Compute the graph that the expressions belong to (all pending nodes, in batches)."""
    for e in expressions:
        e.forward(recalculate)
        recalculate = False


def npvalues(expressions, recalculate: bool = False) -> list:
    forward(expressions, recalculate)
    return [e.npvalue() for e in expressions]


def values(expressions, recalculate: bool = False) -> list:
    forward(expressions, recalculate)
    return [e.value() for e in expressions]


def init(shared_parameters=None) -> None:
    """DyNet's ``init()``: nothing to do, the settings are read when the first graph is made."""


def init_from_params(params: "DynetParams") -> None:
    """DyNet's ``init_from_params(params)``: ``params.init()``."""
    params.init()


class DynetParams:
    """DyNet's ``DynetParams``: settings given one by one, applied by ``init()``."""

    def __init__(self):
        self._settings = {}

    def from_args(self, shared_parameters=None) -> None:
        """The command line is read when the first graph is made anyway."""

    def set_mem(self, mem) -> None:
        self._settings["mem"] = mem

    def set_random_seed(self, random_seed: int) -> None:
        self._settings["random_seed"] = random_seed

    def set_autobatch(self, autobatch) -> None:
        self._settings["autobatch"] = int(autobatch)

    def set_requested_gpus(self, requested_gpus: int) -> None:
        self._settings["requested_gpus"] = requested_gpus

    def set_profiling(self, profiling) -> None:
        self._settings["profiling"] = profiling

    def set_weight_decay(self, weight_decay: float) -> None:
        """Kept for ``init()``, which refuses a nonzero one (see ``dynet_config.set``)."""
        self._settings["weight_decay"] = weight_decay

    def set_shared_parameters(self, shared_parameters: bool) -> None:
        self._settings["shared_parameters"] = shared_parameters

    def set_gpu_mask(self, gpu_mask: list) -> None:
        """Which GPUs to use, DyNet's list of 0s and 1s: batchviz uses CuPy's one GPU when
        any is chosen."""
        if any(g not in (0, 1) for g in gpu_mask):
            raise ValueError(f"gpu_mask should only contain 0 and 1s, got {gpu_mask!r}")
        self._settings["gpu_mask"] = list(gpu_mask)
        self._settings["requested_gpus"] = 1 if any(gpu_mask) else 0

    def set_cpu_mode(self) -> None:
        self._settings["requested_gpus"] = 0
        self._settings["gpu_mask"] = []

    def from_config(self, conf: dict) -> None:
        """The settings of a ``dynet_config.get()`` dictionary (DyNet's keys)."""
        for key, setting in (("mem", "mem"), ("seed", "random_seed"), ("autobatch", "autobatch"),
                             ("profiling", "profiling"), ("weight_decay", "weight_decay"),
                             ("shared_params", "shared_parameters"),
                             ("requested_gpus", "requested_gpus"), ("gpu_mask", "gpu_mask")):
            if key in conf:
                self._settings[setting] = conf[key]

    def init(self) -> None:
        dynet_config.set(**self._settings)


__all__ = (["Expression", "InputExpression", "ComputationGraph", "cg", "cg_version",
            "renew_cg", "reset_random_seed", "print_graphviz", "print_text_graphviz", "forward",
            "values", "npvalues", "init",
            "cg_checkpoint", "cg_revert", "dump_cg", "Tensor", "available_devices",
            "get_device_info", "DeviceInfo", "inputTensorTranspose",
            "DynetParams", "dynet_config", "ParameterCollection", "Model", "Parameters",
            "LookupParameters", "parameter", "const_parameter", "lookup", "lookup_batch",
            "PyInitializer", "NormalInitializer", "UniformInitializer", "ConstInitializer",
            "IdentityInitializer", "GlorotInitializer", "SaxeInitializer", "NumpyInitializer",
            "FromFileInitializer", "scalarInput", "inputVector", "vecInput", "inputMatrix",
            "matInput", "inputTensor", "zeros", "zeroes", "ones", "constant", "random_normal",
            "random_bernoulli", "random_uniform", "random_gumbel", "one_hot", "to_device",
            "sparse_inputTensor",
            "VanillaLSTMBuilder", "LSTMBuilder", "CoupledLSTMBuilder", "CompactVanillaLSTMBuilder",
            "SparseLSTMBuilder", "FastLSTMBuilder",
            "SimpleRNNBuilder", "GRUBuilder", "BiRNNBuilder", "RNNState", "StackedRNNState",
            "SoftmaxBuilder",
            "StandardSoftmaxBuilder", "ClassFactoredSoftmaxBuilder", "Trainer",
            "SimpleSGDTrainer", "CyclicalSGDTrainer", "MomentumSGDTrainer", "AdagradTrainer",
            "AdadeltaTrainer", "RMSPropTrainer", "AdamTrainer", "AmsgradTrainer", "EGTrainer",
            "save", "load",
            "load_generator", "inverse", "logdet", "init_from_params", "HAVE_CUDA", "ERRMSG",
            "FloatValue", "UnsignedValue", "FloatVectorValue", "UnsignedVectorValue"]
           + _arith_names + _loss_names + _reduction_names + _shaping_names + _lstm_op_names
           + _contraction_names)
