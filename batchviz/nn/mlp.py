"""A multi-layer perceptron: ``affine -> activation -> ... -> affine``."""
from __future__ import annotations

from .. import ops
from .lstm import _dims

ACTIVATIONS = {"tanh": "tanh", "relu": "rectify", "sigmoid": "logistic", "linear": None}


class MLP:
    """``MLP(model, [in, hidden..., out])``; ``mlp(x)`` returns the output scores.

    ``in`` may be a tuple of input pieces (then ``mlp([x1, x2, ...])``): the first layer
    has one matrix per piece, which saves a ``concatenate`` node. The activation follows
    every layer but the last.
    """

    def __init__(self, model, dims, activation: str = "tanh", name: str | None = None):
        name = model.unique_prefix("mlp") if name is None else name
        dims = list(dims)
        if len(dims) < 2:
            raise ValueError(f"an MLP needs at least input and output sizes, got {dims}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; use one of {sorted(ACTIVATIONS)}")
        self.input_dims = _dims(dims[0])
        self.activation = ACTIVATIONS[activation]
        self.layers = []
        previous = self.input_dims
        for k, out in enumerate(dims[1:]):
            Ws = [model.add_parameters((out, d), name=f"{name}.W{k}.{j}") for j, d in enumerate(previous)]
            b = model.add_parameters((out,), init="zeros", name=f"{name}.b{k}")
            self.layers.append((Ws, b))
            previous = (int(out),)
        self.output_dim = int(dims[-1])

    def __call__(self, x):
        xs = list(x) if isinstance(x, (list, tuple)) else [x]
        if len(xs) != len(self.input_dims):
            raise ValueError(f"this MLP takes {len(self.input_dims)} input piece(s) of sizes "
                             f"{self.input_dims}, got {len(xs)}")
        activate = getattr(ops.api, self.activation) if self.activation else None
        last = len(self.layers) - 1
        for k, (Ws, b) in enumerate(self.layers):
            terms = [b]
            for W, xi in zip(Ws, xs):
                terms += [W, xi]
            y = ops.api.affine_transform(terms)
            if k < last and activate is not None:
                y = activate(y)
            xs = [y]
        return xs[0]
