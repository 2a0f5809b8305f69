"""Small canonical graphs used by the demo, the notebooks, the tutorials and the tests.

``figure1`` is the paper's running example (Figure 1): RNN regression over three sequences
of different lengths, summed into one loss. Depth batching cannot batch the three loss
computations (they sit at different depths); agenda batching can.
"""
from __future__ import annotations

import numpy as np

from . import ops
from .graph import graph_scope
from .runtime import Graph
from .model import Model

FIGURE1_LENGTHS = (2, 3, 4)


def rnn_regression_loss(xs, y, params):
    """The paper's RNN-Regression-Loss: h_t = tanh(W [h_{t-1}; x_t] + b), loss ||U h_n + c - y||^2."""
    W, U, b, c = params
    h = ops.api.zeros(W.shape[0])
    for x in xs:
        h = ops.api.tanh(W @ ops.api.concatenate([h, ops.api.input(x)]) + b)
    prediction = U @ h + c
    return ops.api.squared_distance(prediction, ops.api.input(y))


def figure1_model(hidden: int = 4, input_dim: int = 3, output_dim: int = 2, seed: int = 0):
    """Parameters (W, U, b, c) of the Figure 1 RNN, with a model holding them."""
    model = Model(seed=seed)
    W = model.add_parameters((hidden, hidden + input_dim), name="W")
    U = model.add_parameters((output_dim, hidden), name="U")
    b = model.add_parameters((hidden,), name="b")
    c = model.add_parameters((output_dim,), name="c")
    return model, (W, U, b, c)


def figure1(strategy="agenda", lengths=FIGURE1_LENGTHS, hidden: int = 4, input_dim: int = 3,
            output_dim: int = 2, seed: int = 0, record_source: bool | None = None):
    """Build (do not run) the Figure 1 graph. Returns ``(graph, loss, model)``.

    The graph is left open (not finished) so that the caller can run, trace or explain it;
    call ``graph.finish()`` when done."""
    model, params = figure1_model(hidden, input_dim, output_dim, seed)
    rng = np.random.default_rng(seed)
    graph = Graph(strategy, record_source=record_source)
    with graph_scope(graph):
        losses = []
        for n in lengths:
            xs = [rng.normal(size=input_dim) for _ in range(n)]
            y = rng.normal(size=output_dim)
            losses.append(rnn_regression_loss(xs, y, params))
        loss = ops.api.esum(losses)
    return graph, loss, model
