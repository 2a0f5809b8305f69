"""``bv.Graph``: a lazy graph that runs itself when a value is asked for.

:class:`~batchviz.graph.LazyGraph` records the nodes. This class adds what running them
needs: the strategy, the memory, and lazy evaluation (§3.1). ``expr.value()`` runs the
nodes added since the last run ("further calls will lazily evaluate the delta"); every
run is the paper's pipeline, one module per step::

    PendingView(graph)          the nodes to run              batchviz.schedule
    strategy.schedule(view)     -> batches                    batchviz.schedule
    plan(graph, batches, ...)   -> Plan: where outputs live,  batchviz.plan
                                   how each argument is read
    execute_forward(plan, ...)  one kernel per batch          batchviz.execute

and ``loss.backward()`` walks the same plans in reverse (:func:`execute_backward`).
"""
from __future__ import annotations

from .execute.executor import run_backward, run_forward
from .expression import Expression
from .graph import LazyGraph, current_graph, open_graph
from .schedule import resolve_strategy


class Graph(LazyGraph):
    """A dynamic computation graph, built lazily and executed in batches.

    Use it as a context manager (``with bv.Graph(strategy="agenda"): ...``) or through
    :func:`new_graph`. ``strategy`` is ``"none"``, ``"depth"``, ``"agenda"``, another
    registered name, or any :class:`~batchviz.Strategy` object.
    ``record_source=True`` remembers the user's source line of every node (for traces; it
    costs time at construction, so it is off by default).
    """

    expression_type = Expression

    def __init__(self, strategy="agenda", record_source: bool = False):
        self.strategy = resolve_strategy(strategy)
        super().__init__(record_source)
        # --- execution state ---
        self.n_evaluated = 0
        self.memory = None        # created by the executor on the first run
        self.last_stats = None

    def forward(self) -> None:
        """Run every node added since the last run, batched by the graph's strategy."""
        self.check_alive()
        if self.n_evaluated < len(self.ops):
            run_forward(self)

    def backward(self, node: int) -> None:
        """Accumulate d(node)/d(parameter) into every parameter's ``grad``."""
        self.forward()
        run_backward(self, node)

    def value_of(self, node: int):
        """The node's value, as a NumPy array of its own (runs what is pending first)."""
        import numpy as np
        from .backend import to_numpy
        self.check_alive()
        self.forward()
        return np.array(to_numpy(self.memory.value(node)), copy=True)

    def finish(self, because: str = "by graph.finish()") -> None:
        """End the graph: its expressions can no longer be used, and its memory is freed."""
        super().finish(because)
        if self.memory is not None:
            self.memory.release()
        self.memory = None

    def __repr__(self) -> str:
        state = "finished" if self.finished else f"{self.n_evaluated}/{len(self.ops)} evaluated"
        return f"<bv.Graph #{self.number} strategy={self.strategy.name!r} nodes={len(self.ops)} {state}>"


def new_graph(strategy="agenda", record_source: bool = False) -> Graph:
    """Finish the open graph and open a new one (DyNet's ``renew_cg``)."""
    previous = open_graph(None)
    if previous is not None and not previous.finished:
        previous.finish("when bv.new_graph() started a new one")
    graph = Graph(strategy, record_source=record_source)
    open_graph(graph)
    return graph


__all__ = ["Graph", "new_graph", "current_graph"]
