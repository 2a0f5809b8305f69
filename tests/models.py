"""Random per-instance models for the property tests: RNNs, trees and random DAGs.

Each builder writes the naive per-instance code a user would write; the strategies must
all compute the same thing from it."""

import importlib.util
from pathlib import Path

import numpy as np

import batchviz as bv


class Params:
    def __init__(self, model, d=3, x=2):
        self.d = d
        self.W = model.add_parameters((d, d + x), name="W")
        self.b = model.add_parameters((d,), name="b")
        self.U = model.add_parameters((2, d), name="U")
        self.L = model.add_parameters((d, 2 * d), name="L")
        self.E = model.add_lookup_parameters((7, x), name="E")


def rnn_loss(P, words, target):
    h = bv.zeros(P.d)
    for w in words:
        h = bv.tanh(P.W @ bv.concatenate([h, P.E[w]]) + P.b)
    return bv.squared_distance(P.U @ h, bv.input(target))


def tree_encode(P, tree):
    """Binary tree of word ids -> (root vector, list of per-node scalar losses)."""
    outputs = []

    def visit(node):
        # explicit stack instead of recursion
        order, stack = [], [node]
        while stack:
            n = stack.pop()
            order.append(n)
            if not isinstance(n, int):
                stack.extend(n)
        values = {}
        for n in reversed(order):
            if isinstance(n, int):
                h = bv.tanh(P.W @ bv.concatenate([bv.zeros(P.d), P.E[n]]) + P.b)
            else:
                left, right = values[id(n[0])], values[id(n[1])]
                h = bv.logistic(P.L @ bv.concatenate([left, right])) * 2.0 - 1.0
            values[id(n)] = h
            outputs.append(bv.sum_elems(bv.cmult(h, h)))
        return values[id(node)]

    root = visit(tree)
    return root, outputs


def random_tree(rng, n_leaves):
    nodes = [int(rng.integers(0, 7)) for _ in range(n_leaves)]
    while len(nodes) > 1:
        i = int(rng.integers(0, len(nodes) - 1))
        nodes[i:i + 2] = [(nodes[i], nodes[i + 1])]
    return nodes[0]


def random_dag_losses(P, rng, n_nodes):
    """A random DAG of mixed ops over d-vectors; returns scalar losses from its sinks."""
    d = P.d
    pool = [bv.tanh(P.W @ bv.concatenate([bv.input(rng.normal(size=d)), P.E[int(rng.integers(0, 7))]]) + P.b)]
    for _ in range(n_nodes):
        kind = int(rng.integers(0, 9))
        a = pool[int(rng.integers(0, len(pool)))]
        b = pool[int(rng.integers(0, len(pool)))]
        if kind == 0:
            x = bv.tanh(a)
        elif kind == 1:
            x = a + b
        elif kind == 2:
            x = bv.cmult(a, b)
        elif kind == 3:
            x = P.L @ bv.concatenate([a, b])
        elif kind == 4:
            x = bv.logistic(a - b)
        elif kind == 5:
            x = bv.affine_transform([P.b, P.W, bv.concatenate([a, b[0:2]])])
        elif kind == 6:
            x = a * 0.5
        elif kind == 7:
            x = bv.softmax(a)
        else:
            x = bv.esum([a, b, a])
        pool.append(x)
    picks = rng.choice(len(pool), size=min(4, len(pool)), replace=False)
    return [bv.pickneglogsoftmax(pool[int(i)], int(rng.integers(0, d))) for i in picks]


def mixed_graph(seed: int, instances: int, evaluate_first: bool):
    """Random RNNs, trees and DAGs of mixed ops, several per graph so that batches form.
    With ``evaluate_first``, one loss runs before the rest is built: the view then starts
    after the nodes that have run, and its edges to them are not pending."""
    rng = np.random.default_rng(seed)
    P = Params(bv.Model(seed=seed))
    g = bv.Graph("agenda")
    with g:
        losses = []
        for k in range(instances):
            kind = k % 3
            if kind == 0:
                losses.append(rnn_loss(P, list(rng.integers(0, 7, size=int(rng.integers(1, 6)))),
                                       rng.normal(size=2)))
            elif kind == 1:
                _, outs = tree_encode(P, random_tree(rng, int(rng.integers(1, 6))))
                losses.append(bv.esum(outs))
            else:
                losses.append(bv.esum(random_dag_losses(P, rng, int(rng.integers(1, 25)))))
            if evaluate_first and k == instances // 2:
                losses[-1].value()
        bv.esum(losses)
    return g


def load_tutorial_graphs():
    """``tutorials/_graphs.py`` (the graphs the course exercises use) as a module."""
    path = Path(__file__).resolve().parents[1] / "tutorials" / "_graphs.py"
    spec = importlib.util.spec_from_file_location("_batchviz_tutorial_graphs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_TUTORIAL = load_tutorial_graphs()

#: the course exercises' graphs, each built under the default strategy (``build()[0]`` is
#: the graph): where the compiled and the source forms must agree beyond random graphs
TUTORIAL_GRAPHS = {
    "figure1-extended": lambda: _TUTORIAL.figure1_extended(),
    "tree-lstm": lambda: _TUTORIAL.tree_lstm(n_trees=24, max_leaves=20),
    "parser": lambda: _TUTORIAL.parser(n_sentences=3),
    "mixed-ops": lambda: _TUTORIAL.mixed_ops(),
    "random-dag": lambda: _TUTORIAL.random_dag(seed=5, n_ops=120),
}


def lstm_models_loss(seed: int = 0):
    """A BiLSTM over sentences of lengths 5, 5, 5 and 3 and a Tree-LSTM over two random
    trees, built with batchviz.nn in the current graph: the graph has ``lstm_step`` nodes,
    which keep more than their value and read the cell block of other step nodes (block
    reads, views or gathers), and arguments that lie evenly spaced (strided views). Returns
    the summed loss."""
    import batchviz as bv
    from batchviz.data import synthetic_trees
    from batchviz.nn import BiLSTMBuilder, TreeLSTMCell

    model = bv.Model(seed=seed)
    E = model.add_lookup_parameters((20, 4), name="E")
    bilstm = BiLSTMBuilder(2, 4, 3, model)
    cell = TreeLSTMCell(model, 4, 3)
    terms = []
    for n in (5, 5, 5, 3):
        pieces = bilstm.transduce_pieces([E[(seed + n * i) % 20] for i in range(n)])
        terms += [bv.sum_elems(bv.cmult(f, b)) for f, b in pieces]
    for tree in synthetic_trees(2, min_leaves=3, max_leaves=6, vocab_size=20, seed=seed):
        terms += [bv.sum_elems(h) for _, h in cell.encode(tree, lambda w: E[len(w) % 20])]
    return bv.esum(terms)
