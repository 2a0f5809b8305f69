"""A trace as a ``networkx.DiGraph``, for networkx's graph algorithms and exporters."""
from __future__ import annotations


def to_networkx(trace):
    """Nodes keyed by node id with ``op``, ``signature``, ``signature_name``, ``depth``,
    ``shape`` and ``parameter`` (its name, or None); an edge from each argument to its user.

    A node's ``depth`` is the longest path from a source to it, so
    ``networkx.topological_generations`` yields exactly the nodes of each depth."""
    import networkx as nx

    g = nx.DiGraph(strategy=trace.strategy, loss=trace.loss)
    for n in trace.nodes:
        g.add_node(n.id, op=n.op, signature=n.signature, signature_name=n.signature_name,
                   depth=n.depth, shape=n.shape, parameter=n.parameter)
    for n in trace.nodes:
        for a in n.args:
            g.add_edge(a, n.id)
    return g
