"""The ops: each module defines its ops (shape rule, signature, batched kernels) next to
the functions users call to build them. Adding an op touches one module.

The op *protocol* (:mod:`~batchviz.ops.base`), the parameter op and the gradient kinds
sit below the graph and the executor, which use them; the op modules with their
constructors sit above the graph. :mod:`batchviz.ops.api` imports every op module, which
registers its ops, and gathers the constructors in one namespace (``bv.tanh``, ...)."""
from .base import FIXED_SIGNATURES, REGISTRY, Op, register  # noqa: F401
