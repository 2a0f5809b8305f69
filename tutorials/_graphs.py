"""Graphs the exercises are graded on, built per instance with core ``bv`` ops only.

Every builder follows :func:`batchviz.examples.figure1`'s convention: it returns
``(graph, loss, model)`` with the graph *built but not run* and left open, so that a test
can schedule it with several strategies, run it, or take gradients. Builders are
deterministic for a given ``seed``: node ids, signatures and batch counts are the same on
every machine.

* :func:`tree_lstm` - a binary Tree-LSTM (Tai et al., 2015) over random trees of 5-50
  leaves, the root classified with a softmax: the paper's "Tree-LSTM" benchmark shape.
* :func:`parser` - a transition parser in the style of Kiperwasser & Goldberg (2016): a
  BiLSTM encodes each sentence, then the arc-hybrid oracle's steps score MLP features
  picked from the stack and the buffer; an arc composes the head's vector with its
  dependent's. Several parsers are advanced in parallel, step by step.
* :func:`figure1_extended` - Figure 1 after one ``value()``, extended by more sequences:
  a strategy must treat the nodes computed by the first run as done.
* :func:`random_dag` - small random graphs of mixed ops, for property-style checks.
* :func:`mixed_ops` - one graph that uses many ops, each in several signature classes.
"""
from __future__ import annotations

import numpy as np

import batchviz as bv
from batchviz.data import arc_hybrid
from batchviz.data.synthetic import synthetic_dependencies, synthetic_trees
from batchviz.examples import figure1, figure1_model, graph_scope, rnn_regression_loss

__all__ = ["figure1", "figure1_extended", "tree_lstm", "parser", "random_dag", "mixed_ops",
           "word_index"]


def word_index(word: str, vocab: dict, rows: int) -> int:
    """A stable row of an embedding table for ``word`` (first come, first served, wrapping)."""
    if word not in vocab:
        vocab[word] = len(vocab) % rows
    return vocab[word]


def figure1_extended(strategy="agenda", first=(2, 3), then=(4, 1, 3), seed: int = 0):
    """Figure 1's RNN regression: the losses of sequences of lengths ``first`` are built
    and evaluated, then those of ``then`` are added (pending). Returns ``(graph, loss, model)``
    where ``loss`` sums all of them and is not evaluated yet."""
    model, params = figure1_model(seed=seed)
    rng = np.random.default_rng(seed)
    graph = bv.Graph(strategy)

    def losses(lengths):
        return [rnn_regression_loss([rng.normal(size=3) for _ in range(n)], rng.normal(size=2),
                                    params) for n in lengths]
    with graph_scope(graph):
        early = bv.esum(losses(first))
        early.value()
        loss = bv.esum([early] + losses(then))
    return graph, loss, model


# --- Tree-LSTM ------------------------------------------------------------------------------

def _tree_lstm_params(model, dim, n_labels, vocab_rows):
    return {
        "E": model.add_lookup_parameters((vocab_rows, dim), name="E"),
        # leaves: input, output and update gates from the word vector
        "W_leaf": model.add_parameters((3 * dim, dim), name="W_leaf"),
        "b_leaf": model.add_parameters((3 * dim,), init="zeros", name="b_leaf"),
        # inner nodes: input, forget-left, forget-right, output and update from [h_l; h_r]
        "U": model.add_parameters((5 * dim, 2 * dim), name="U"),
        "b": model.add_parameters((5 * dim,), init="zeros", name="b"),
        "W_out": model.add_parameters((n_labels, dim), name="W_out"),
        "b_out": model.add_parameters((n_labels,), init="zeros", name="b_out"),
    }


def _tree_lstm_leaf(p, x, d):
    gates = bv.affine_transform([p["b_leaf"], p["W_leaf"], x])
    i = bv.logistic(gates[0:d])
    o = bv.logistic(gates[d:2 * d])
    u = bv.tanh(gates[2 * d:3 * d])
    c = bv.cmult(i, u)
    return bv.cmult(o, bv.tanh(c)), c


def _tree_lstm_inner(p, left, right, d):
    (h_l, c_l), (h_r, c_r) = left, right
    gates = bv.affine_transform([p["b"], p["U"], bv.concatenate([h_l, h_r])])
    i = bv.logistic(gates[0:d])
    f_l = bv.logistic(gates[d:2 * d])
    f_r = bv.logistic(gates[2 * d:3 * d])
    o = bv.logistic(gates[3 * d:4 * d])
    u = bv.tanh(gates[4 * d:5 * d])
    c = bv.cmult(i, u) + bv.cmult(f_l, c_l) + bv.cmult(f_r, c_r)
    return bv.cmult(o, bv.tanh(c)), c


def tree_lstm_loss(tree, p, vocab, dim):
    """The loss of one tree: post-order over its nodes (iterative), root classified."""
    states = {}
    for node in tree.nodes():
        if node.is_leaf:
            x = p["E"][word_index(node.word, vocab, p["E"].shape[0])]
            states[id(node)] = _tree_lstm_leaf(p, x, dim)
        else:
            left, right = node.children
            states[id(node)] = _tree_lstm_inner(p, states[id(left)], states[id(right)], dim)
    h_root = states[id(tree)][0]
    scores = bv.affine_transform([p["b_out"], p["W_out"], h_root])
    return bv.pickneglogsoftmax(scores, int(tree.label))


def tree_lstm(strategy="agenda", n_trees: int = 64, min_leaves: int = 5, max_leaves: int = 50,
              dim: int = 8, n_labels: int = 5, seed: int = 0, record_source: bool = False):
    """A minibatch of ``n_trees`` binary Tree-LSTM losses, summed. Returns ``(graph, loss, model)``."""
    trees = synthetic_trees(n_trees, min_leaves=min_leaves, max_leaves=max_leaves,
                            n_labels=n_labels, seed=seed)
    model = bv.Model(seed=seed)
    p = _tree_lstm_params(model, dim, n_labels, vocab_rows=500)
    vocab: dict = {}
    graph = bv.Graph(strategy, record_source=record_source)
    with graph_scope(graph):
        loss = bv.esum([tree_lstm_loss(t, p, vocab, dim) for t in trees])
    return graph, loss, model


# --- transition parser ----------------------------------------------------------------------

def _lstm_params(model, name, in_dim, dim):
    return (model.add_parameters((4 * dim, in_dim + dim), name=f"W_{name}"),
            model.add_parameters((4 * dim,), init="zeros", name=f"b_{name}"))


def _lstm_step(params, x, h, c, d):
    W, b = params
    gates = bv.affine_transform([b, W, bv.concatenate([x, h])])
    i = bv.logistic(gates[0:d])
    f = bv.logistic(gates[d:2 * d])
    o = bv.logistic(gates[2 * d:3 * d])
    u = bv.tanh(gates[3 * d:4 * d])
    c = bv.cmult(f, c) + bv.cmult(i, u)
    return bv.cmult(o, bv.tanh(c)), c


def _bilstm(p, xs, d):
    """One vector per token: [forward state; backward state]."""
    def run(params, seq):
        h, c, out = bv.zeros(d), bv.zeros(d), []
        for x in seq:
            h, c = _lstm_step(params, x, h, c, d)
            out.append(h)
        return out
    forward = run(p["fwd"], xs)
    backward = run(p["bwd"], xs[::-1])[::-1]
    return [bv.concatenate([f, b]) for f, b in zip(forward, backward)]


class _Parser:
    """One sentence's parser state: its configuration, oracle moves and token vectors."""

    def __init__(self, sentence, p, vocab, d):
        self.moves, _ = arc_hybrid.follow(sentence.heads)
        self.config = arc_hybrid.Configuration.initial(len(sentence))
        rows = p["E"].shape[0]
        words = [p["E_root"][0]] + [p["E"][word_index(w, vocab, rows)] for w in sentence.words]
        self.vectors = _bilstm(p, words, d)  # index = token id (0 is ROOT)
        self.step = 0

    def done(self) -> bool:
        return self.step == len(self.moves)

    def advance(self, p) -> "bv.Expression":
        """Score the oracle's next move, apply it, and return the step's loss."""
        positions = arc_hybrid.feature_positions(self.config)
        features = bv.concatenate([p["empty"] if t == arc_hybrid.EMPTY else self.vectors[t]
                                   for t in positions])
        hidden = bv.tanh(bv.affine_transform([p["b_hid"], p["W_hid"], features]))
        scores = bv.affine_transform([p["b_act"], p["W_act"], hidden])
        move = self.moves[self.step]
        loss = bv.pickneglogsoftmax(scores, arc_hybrid.TRANSITIONS.index(move))
        if move != arc_hybrid.SHIFT:  # the head's vector absorbs its new dependent
            dependent = self.config.stack[-1]
            head = self.config.buffer[0] if move == arc_hybrid.LEFT_ARC else self.config.stack[-2]
            both = bv.concatenate([self.vectors[head], self.vectors[dependent]])
            self.vectors[head] = bv.tanh(bv.affine_transform([p["b_comp"], p["W_comp"], both]))
        self.config = arc_hybrid.apply(self.config, move)
        self.step += 1
        return loss


def parser(strategy="agenda", n_sentences: int = 16, dim: int = 8, hidden: int = 16,
           max_length: int = 40, seed: int = 0, record_source: bool = False):
    """``n_sentences`` parsers trained with the static oracle, advanced in parallel one
    transition at a time, their step losses summed. Returns ``(graph, loss, model)``."""
    sentences = synthetic_dependencies(n_sentences, seed=seed, max_length=max_length)
    model = bv.Model(seed=seed)
    d2 = 2 * dim
    p = {
        "E": model.add_lookup_parameters((500, dim), name="E"),
        "E_root": model.add_lookup_parameters((1, dim), name="E_root"),
        "fwd": _lstm_params(model, "fwd", dim, dim),
        "bwd": _lstm_params(model, "bwd", dim, dim),
        "empty": model.add_parameters((d2,), name="empty"),
        "W_hid": model.add_parameters((hidden, 4 * d2), name="W_hid"),
        "b_hid": model.add_parameters((hidden,), init="zeros", name="b_hid"),
        "W_act": model.add_parameters((len(arc_hybrid.TRANSITIONS), hidden), name="W_act"),
        "b_act": model.add_parameters((len(arc_hybrid.TRANSITIONS),), init="zeros", name="b_act"),
        "W_comp": model.add_parameters((d2, 2 * d2), name="W_comp"),
        "b_comp": model.add_parameters((d2,), init="zeros", name="b_comp"),
    }
    vocab: dict = {}
    graph = bv.Graph(strategy, record_source=record_source)
    with graph_scope(graph):
        parsers = [_Parser(s, p, vocab, dim) for s in sentences]
        losses = []
        while not all(q.done() for q in parsers):
            for q in parsers:
                if not q.done():
                    losses.append(q.advance(p))
        loss = bv.esum(losses)
    return graph, loss, model


# --- small random graphs --------------------------------------------------------------------

def random_dag(strategy="agenda", n_ops: int = 40, dim: int = 3, seed: int = 0):
    """A random graph of element-wise, matrix and reduction ops over a few inputs, ending in
    one scalar loss. Returns ``(graph, loss, model)``."""
    rng = np.random.default_rng(seed)
    model = bv.Model(seed=seed)
    W = model.add_parameters((dim, dim), name="W")
    V = model.add_parameters((dim, dim), name="V")
    graph = bv.Graph(strategy)
    with graph_scope(graph):
        pool = [bv.input(rng.normal(size=dim)) for _ in range(3)]
        for _ in range(n_ops):
            kind = int(rng.integers(0, 6))
            a = pool[int(rng.integers(0, len(pool)))]
            b = pool[int(rng.integers(0, len(pool)))]
            if kind == 0:
                pool.append(bv.tanh(a))
            elif kind == 1:
                pool.append(a + b)
            elif kind == 2:
                pool.append(bv.cmult(a, b))
            elif kind == 3:
                pool.append(W @ a)
            elif kind == 4:
                pool.append(V @ bv.logistic(a))
            else:
                pool.append(bv.input(rng.normal(size=dim)))
        loss = bv.esum([bv.squared_norm(x) for x in pool[-4:]])
    return graph, loss, model


def mixed_ops(strategy="agenda", seed: int = 0):
    """Many kinds of ops, each used where its signature rule matters: element-wise ops on
    different shapes, sums of 2 and 3 terms, products with a parameter and with an
    expression, affine transforms with a parameter and with an expression bias, slices with
    different bounds, picks with different indices, lookups into two tables.
    Returns ``(graph, loss, model)``."""
    rng = np.random.default_rng(seed)
    model = bv.Model(seed=seed)
    W = model.add_parameters((3, 4), name="W")
    V = model.add_parameters((3, 4), name="V")
    b = model.add_parameters((3,), name="b")
    E = model.add_lookup_parameters((10, 4), name="E")
    F = model.add_lookup_parameters((10, 4), name="F")
    graph = bv.Graph(strategy)
    with graph_scope(graph):
        xs = [E[i] for i in (1, 2, 3)] + [F[4], F[5]]
        m23 = bv.input(rng.normal(size=(2, 3)))
        m34 = bv.input(rng.normal(size=(3, 4)))
        hs = [W @ x for x in xs[:3]] + [V @ xs[3], m34 @ xs[4]]             # shared and not
        gs = [bv.affine_transform([b, W, x]) for x in xs[:2]]
        gs.append(bv.affine_transform([hs[0], W, xs[2]]))                    # expression bias
        ts = [bv.tanh(h) for h in hs] + [bv.tanh(m23), bv.logistic(gs[0])]  # any shape
        sums = [hs[0] + hs[1], bv.cmult(hs[2], gs[2]), hs[3] - ts[0],
                bv.esum([ts[0], ts[1]]), bv.esum([ts[2], ts[3], ts[4]]), bv.esum([gs[0], gs[1]])]
        cats = [bv.concatenate([ts[0], ts[1]]), bv.concatenate([ts[2], xs[0]]),
                bv.concatenate([xs[1], ts[3]])]                            # 3+3, 3+4, 4+3
        slices = [cats[0][0:3], cats[0][3:6], cats[1][0:3], cats[2][0:3]]
        picks = [cats[0][1], cats[0][4], cats[1][0], ts[6][1]]             # index per node
        scalars = [bv.squared_distance(slices[0], slices[1]), bv.squared_distance(ts[0], sums[0]),
                   bv.dot_product(cats[1], cats[2]), bv.sum_elems(ts[5]),
                   bv.pickneglogsoftmax(sums[3], 0), bv.pickneglogsoftmax(sums[4], 2),
                   bv.squared_norm(slices[2] * 2.0), bv.squared_norm(slices[3] * 0.5 + 1.0)]
        loss = bv.esum(scalars + picks)
    return graph, loss, model
