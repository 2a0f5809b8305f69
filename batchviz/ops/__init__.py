"""The op registry: each module defines its ops (shape rule, signature, batched kernels)
next to the function users call to build them. Adding an op touches one module."""
from .base import FIXED_SIGNATURES, REGISTRY, Op, register  # noqa: F401
from . import api  # noqa: F401  (imports every op module, which registers its ops)
