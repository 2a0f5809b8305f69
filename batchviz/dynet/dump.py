"""The text of DyNet's ``dump_cg``: a graph node by node, with values and gradients.

DyNet prints each node's number, value and gradient, to look for the node where a NaN
appears. This text has the same purpose and batchviz's own layout (not DyNet's format):
each node with what ``bv.trace`` records of it (op, arguments, shape, parameter name,
signature, the user's line when sources are recorded), the batch that computed its value,
then the value and the gradient. Shapes are batchviz's: a minibatch is a node's last
axis, and ``b + W * x`` is one affine node where DyNet has two.
"""
from __future__ import annotations

import numpy as np

from ..signature import shape_text
from ..trace import trace


def graph_text(graph, show_values: bool, show_gradients: bool, nan_check_only: bool,
               title: str) -> str:
    """The dump of ``graph`` (a ``bv.Graph``), computed first; ``title`` names it."""
    if len(graph) == 0:
        return "(Computation graph is empty)\n"
    graph.forward()
    recorded = trace(graph, graph.strategy)
    lines = [f"{title} (batchviz graph #{graph.number}, strategy {graph.strategy.name!r}): "
             f"{len(graph)} nodes, computed in {len(graph.layout.batches)} batches",
             "(batchviz's dump, not DyNet's format: shapes are batchviz's, a minibatch is "
             "a node's last axis)"]
    for node in recorded.nodes:
        lines.append(_heading(graph, recorded, node))
        if show_values:
            lines += _numbers("Value", graph.value_of(node.id), nan_check_only)
        if show_gradients:
            if graph.has_gradient(node.id):
                lines += _numbers("Gradient", graph.gradient_of(node.id), nan_check_only)
            else:
                lines.append("Gradient: (not computed)")
    return "\n".join(lines) + "\n"


def _heading(graph, recorded, node) -> str:
    """``Node 4: tanh(3), 8x1, batch 2 (signature tanh), at prog.py:12`` (the arguments
    are node numbers; the batch is the one that computed the value shown)."""
    if node.is_parameter:
        return f"Node {node.id}: parameter {node.parameter}, {shape_text(node.shape)}"
    args = f"({', '.join(map(str, node.args))})" if node.args else ""
    text = f"Node {node.id}: {node.op}{args}, {shape_text(node.shape)}"
    batch = graph.layout.batch_of[node.id]
    if batch >= 0:
        text += f", batch {batch}"
    text += f" (signature {recorded.display_name(node.signature)})"
    return text + (f", at {node.source}" if node.source else "")


def _numbers(what: str, values: np.ndarray, nan_check_only: bool) -> list:
    """``Value: valid`` or ``invalid`` (a NaN or an infinity), or the numbers below."""
    if nan_check_only:
        return [f"{what}: {'valid' if np.all(np.isfinite(values)) else 'invalid'}"]
    return [f"{what}:", np.array2string(np.asarray(values))]
