"""Exercise 1: lazy graphs (the paper's §3.1, "Graph Definition").

batchviz computes nothing while you build a graph: every op call appends one *node* to the
current graph and returns an ``Expression`` handle. Only ``expr.value()`` runs the graph, and
a later ``value()`` runs only the *delta*: the nodes added since the previous run. Replace
each ``raise NotImplementedError`` below with your code, then run

    pytest tutorials/01_lazy

Useful: ``graph.ops[i].name``, ``graph.args[i]`` (argument node ids), ``graph.n_evaluated``
(nodes with smaller ids have run), ``graph.param_of_node`` (node id -> model parameter),
``bv.last_run_stats().forward.nodes`` (how many nodes the latest run computed).
"""
import batchviz as bv


def tanh_layer(W, b, x):
    """Return the expression ``tanh(W @ x + b)``.

    ``W`` and ``b`` are model parameters, ``x`` a NumPy vector (make it an expression with
    ``bv.input``). Build the graph only: do not call ``value()``.
    """
    raise NotImplementedError(
        "Exercise 1: build tanh(W @ x + b) from bv.input(x), the @ and + operators and bv.tanh, "
        "and return the expression without calling .value()")


def pending_nodes(graph):
    """The ids of the nodes that the next ``value()`` on ``graph`` will compute, in
    creation order.

    Think about which nodes a run computes: is it only what the expression you ask for
    depends on? What about nodes an earlier ``value()`` computed, and parameter nodes?
    """
    raise NotImplementedError(
        "Exercise 1: return the ids of the nodes the next value() computes: every node from "
        "graph.n_evaluated up to len(graph) - 1 that is not a parameter (graph.param_of_node)")


def ancestors(graph, node):
    """The set of nodes that ``node`` depends on: its arguments, their arguments, and so on
    (``node`` itself excluded, parameters included).

    Walk the graph with an explicit stack or queue, not with recursion: an RNN unrolled over
    a few thousand steps is deeper than Python's recursion limit.
    """
    raise NotImplementedError(
        "Exercise 1: collect the ancestors of `node` by following graph.args with an explicit "
        "stack (no recursion) and return them as a set")


def running_sums(xs):
    """Sum the squared norms of the vectors ``xs`` one term at a time, in one graph.

    Start a graph (``graph = bv.new_graph()``), then for each ``x``: add ``||x||^2``
    (``bv.squared_norm(bv.input(x))``) to the running total, and call ``total.value()``.
    Return ``(graph, values)`` where ``values[k]`` is the total after ``k + 1`` terms.

    Because the graph is lazy, each ``value()`` should compute only the few nodes of the new
    term: never the terms that an earlier ``value()`` already computed.
    """
    raise NotImplementedError(
        "Exercise 1: in one graph, add bv.squared_norm(bv.input(x)) to a running total for each "
        "x, call .value() after each addition, and return (graph, values)")
