"""The op of a model parameter's node.

A parameter's node is made by the graph itself (:meth:`batchviz.graph.LazyGraph.parameter_node`)
the first time the parameter is used, so its op lives here, below the graph, rather than
among the op constructors. It is never scheduled: its value is the parameter's own array,
available from the start (it counts as *done* before the first batch)."""
from __future__ import annotations

from .base import Op, register


class Parameter(Op):
    name = "parameter"
    arity = 0

    def describe_signature(self, key, graph=None):
        node = key[2]
        if graph is not None and node in graph.param_of_node:
            return f"parameter-{graph.param_of_node[node].name}#{node}"
        return f"parameter-node{node}"


PARAMETER = register(Parameter())
