"""Table 1, "TreeLSTM": the binary Tree-LSTM of Tai et al. (2015) on SST-like trees.

Settings (App. C, ``treenn-bulk``): word embeddings and node states of 256, a sentiment
label (5 classes) predicted and scored at every node of the tree, minibatch 64 trees.
Trees come from :func:`batchviz.data.synthetic_trees`: 5-50 leaves, about 19 on average as
in the Stanford Sentiment Treebank, random binary bracketing.
"""
from __future__ import annotations

import numpy as np

import batchviz as bv
from batchviz.data import Vocab, synthetic_trees
from batchviz.nn import SGDTrainer, TreeLSTMCell

from .harness import STRATEGIES, Products, run_modes

FULL = dict(trees=64, embed=256, hidden=256, labels=5, vocab=5000, min_leaves=5, max_leaves=50)
QUICK = dict(trees=8, embed=16, hidden=16, labels=5, vocab=200, min_leaves=5, max_leaves=12)


class TreeClassifier:
    """Tree-LSTM over a tree, softmax loss at every node (per-tree code)."""

    def __init__(self, model, n_words: int, embed: int, hidden: int, labels: int):
        self.E = model.add_lookup_parameters((n_words, embed), name="words")
        self.cell = TreeLSTMCell(model, embed, hidden)
        self.W = model.add_parameters((labels, hidden), name="out.W")
        self.b = model.add_parameters((labels,), init="zeros", name="out.b")
        self.dims = (embed, hidden, labels)

    def loss(self, tree, vocab: Vocab):
        states = self.cell.encode(tree, lambda word: self.E[vocab.index(word)])
        return bv.esum([bv.pickneglogsoftmax(bv.affine_transform([self.b, self.W, h]), int(node.label))
                        for node, h in states])

    def products(self, trees) -> Products:
        embed, hidden, labels = self.dims
        leaves = sum(len(t.leaves()) for t in trees)
        nodes = sum(len(t.nodes()) for t in trees)
        p = Products()
        p.add(3 * hidden, embed, leaves)               # leaf gates [i, o, u]
        p.add(5 * hidden, hidden, 2 * (nodes - leaves))  # inner gates from h_L and h_R
        p.add(labels, hidden, nodes)                   # a prediction at every node
        return p


def run(quick: bool = False) -> dict:
    s = QUICK if quick else FULL
    trees = synthetic_trees(s["trees"], min_leaves=s["min_leaves"], max_leaves=s["max_leaves"],
                            n_labels=s["labels"], vocab_size=s["vocab"], seed=0)
    vocab = Vocab.from_corpus([t.words() for t in trees])
    model = bv.Model(seed=0)
    classifier = TreeClassifier(model, len(vocab), s["embed"], s["hidden"], s["labels"])
    trainer = SGDTrainer(model, learning_rate=0.1)

    def naive(run):
        return bv.esum([classifier.loss(t, vocab) for t in trees])

    leaves = [len(t.leaves()) for t in trees]
    settings = dict(s, leaves_in_minibatch=sum(leaves), mean_leaves=float(np.mean(leaves)))
    title = (f"Tree-LSTM (Table 1): {s['trees']} trees, {sum(leaves)} leaves "
             f"({min(leaves)}-{max(leaves)} per tree), dims {s['hidden']}, loss at every node")
    return run_modes("treelstm", title, {m: (m, naive) for m in STRATEGIES}, trainer,
                     classifier.products(trees), s["trees"], settings, quick, unit="trees/s")
