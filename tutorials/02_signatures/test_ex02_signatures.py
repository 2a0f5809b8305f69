"""Grading tests of exercise 2: node signatures (Appendix A).

Each test builds a graph, computes *your* signature of each node and checks that it groups
the nodes exactly as the runtime's signatures do (``graph.sigs``): equal signatures if and
only if the runtime would batch the nodes together."""
import numpy as np
import pytest

import batchviz as bv
from batchviz.examples import graph_scope

import _graphs
from _grading import assert_same_partition, fail

EXERCISE = "ex02_signatures"
pytestmark = pytest.mark.ex2


def scheduled(graph):
    return [i for i in range(len(graph)) if i not in graph.param_of_node]


def of_ops(graph, names):
    return [i for i in scheduled(graph) if graph.ops[i].name in names]


@pytest.mark.points(2)
def test_elementwise_rule(student):
    rule = student.elementwise_signature
    if rule("tanh", (4,)) != rule("tanh", (64, 64)):
        fail("a tanh of a 4-vector and one of a 64x64 matrix must get equal signatures: "
             "component-wise ops batch by name alone")
    if rule("tanh", (4,)) == rule("log", (4,)) or rule("add", (4,)) == rule("cmult", (4,)):
        fail("different component-wise ops must get different signatures (tanh vs log, add vs cmult)")
    if rule("esum", (4,)) == rule("esum", (2, 3)):
        fail("a sum of 4-vectors and a sum of 2x3 matrices cannot share a kernel (it adds each "
             "node's rows, which must all be one size): put the shape in the signature of esum "
             "and average")
    rng = np.random.default_rng(0)
    graph = bv.Graph()
    with graph_scope(graph):
        a, b = bv.input(rng.normal(size=4)), bv.input(rng.normal(size=(2, 3)))
        c = bv.input(rng.normal(size=4))
        ts = [bv.tanh(a), bv.tanh(b), bv.tanh(c)]
        bv.logistic(ts[0]), bv.logistic(ts[1]), ts[0] + ts[2], bv.cmult(ts[0], ts[2])
        bv.esum([ts[0], ts[2]]), bv.esum([ts[0], ts[2], ts[0]]), bv.esum([ts[1], ts[1]])
    nodes = [i for i in scheduled(graph) if graph.ops[i].elementwise]
    assert_same_partition(graph, nodes, lambda n: rule(graph.ops[n].name, graph.shapes[n]),
                          "component-wise ops of different shapes and numbers of arguments")


def dimension_key(student, graph, n):
    bounds = graph.attrs[n] if graph.ops[n].name == "pick_range" else None
    return student.dimension_sensitive_signature(
        graph.ops[n].name, graph.shapes[n], [graph.shapes[a] for a in graph.args[n]], bounds)


@pytest.mark.points(2)
def test_dimension_sensitive_rule(student):
    graph, _, _ = _graphs.mixed_ops()
    names = {"concatenate", "squared_distance", "pick_range", "pick", "dot_product", "input",
             "pickneglogsoftmax", "squared_norm", "scale", "shift", "sum_elems"}
    assert_same_partition(graph, of_ops(graph, names), lambda n: dimension_key(student, graph, n),
                          "dimension-sensitive ops")
    with graph_scope(graph):  # matrix products of two expressions: shapes decide
        m = [bv.input(np.ones(s)) for s in ((2, 3), (2, 3), (4, 3))]
        x = [bv.input(np.ones(3)) for _ in range(3)]
        [bv.matmul(mi, xi) for mi, xi in zip(m, x)]
    assert_same_partition(graph, of_ops(graph, {"matmul"})[-3:],
                          lambda n: dimension_key(student, graph, n),
                          "products of two expressions (no parameter involved)")


def shared_keys(graph, n):
    """The argument keys described in the exercise: node ids of shared parameter arguments,
    shapes of everything else."""
    name, args = graph.ops[n].name, graph.args[n]
    shareable = {"matmul": {0}, "lookup": {0}, "affine": {0} | set(range(1, len(args), 2))}[name]
    return [("node", a) if p in shareable and a in graph.param_of_node else graph.shapes[a]
            for p, a in enumerate(args)]


@pytest.mark.points(3)
def test_shared_argument_rule(student):
    graph, _, _ = _graphs.mixed_ops()
    nodes = of_ops(graph, {"matmul", "affine", "lookup"})
    assert_same_partition(
        graph, nodes, lambda n: student.shared_argument_signature(graph.ops[n].name, shared_keys(graph, n)),
        "ops with shared arguments (W @ x, affine transforms, lookups)")


def check_signature_on(student, graph, what):
    nodes = scheduled(graph)
    assert_same_partition(graph, nodes, lambda n: student.signature(graph, n), what)
    graph.finish()


@pytest.mark.points(2)
def test_signature_on_figure1(student):
    check_signature_on(student, _graphs.figure1()[0], "Figure 1 (RNN regression)")


@pytest.mark.points(2)
def test_signature_on_mixed_ops(student):
    check_signature_on(student, _graphs.mixed_ops()[0], "a graph of many ops")


@pytest.mark.points(2)
def test_signature_on_tree_lstm(student):
    check_signature_on(student, _graphs.tree_lstm(n_trees=8)[0], "Tree-LSTM over 8 trees")


@pytest.mark.points(2)
def test_signature_on_parser(student):
    check_signature_on(student, _graphs.parser(n_sentences=4)[0], "transition parser, 4 sentences")
