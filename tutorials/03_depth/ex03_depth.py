"""Exercise 3: depth-based batching (the paper's §3.2, "Determining execution order";
TensorFlow Fold's strategy).

A node's *depth* is the length of the longest path from a leaf to it: 0 for a node without
arguments, else one more than its deepest argument. Nodes of equal depth never depend on
each other, so running depth 0, then depth 1, ... respects every dependency; inside one
depth, nodes of equal signature form one batch.

Write ``node_depths`` and the strategy, then run ``pytest tutorials/03_depth``. Your
strategy plugs into the real runtime unchanged::

    with bv.Graph(strategy=DepthStrategy()):
        loss = ...
        loss.value()      # scheduled by your code (the runtime checks your schedule first)

and in Jupyter you can watch it batch step by step: ``bv.Stepper(loss, strategy=DepthStrategy())``.

What a strategy sees (``view``, a ``bv.PendingView``): ``view.nodes`` - the node ids to
schedule, in creation order (parameters and nodes computed by an earlier ``value()`` are
not in it: they are done); ``view.signature[i]``, ``view.args[i]`` - lists indexed by node id
over the whole graph; ``view.pending_args(i)`` - the arguments of ``i`` that still have to
run; ``view.graph`` - the graph itself. A schedule is a list of batches, each a list of node
ids of one signature, in execution order.
"""
import batchviz as bv


def node_depths(graph):
    """The depth of every node of ``graph``, as a list indexed by node id.

    Node ids are creation order, so every argument has a smaller id than its user: one pass
    in id order is enough (no recursion, no sorting).
    """
    raise NotImplementedError(
        "Exercise 3: return a list with one depth per node id: 0 if graph.args[i] is empty, "
        "else 1 + the largest depth among graph.args[i]")


class DepthStrategy(bv.Strategy):
    """Batch the pending nodes that share both depth and signature; run depths in order."""

    name = "student-depth"

    def schedule(self, view):
        raise NotImplementedError(
            "Exercise 3: group view.nodes by (depth, signature) using node_depths(view.graph) "
            "and view.signature, and return the groups ordered by depth")
