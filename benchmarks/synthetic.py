"""§4.1: the synthetic BiLSTM tagger, without and with manual batching.

Settings (the paper's): every sentence 40 words, word embeddings 200, vocabulary 1000,
2 layers of 256-unit LSTMs in each direction, 300 labels, minibatch 64. The six rows of
the paper's Figure 2: the naive per-instance code with none / depth / agenda batching, and
manual batching (Train-Batch-Manual, written with batchviz on matrices of 64 columns) with
none / depth / agenda on top; and the naive code with batchviz's lookahead and layout
strategies.
"""
from __future__ import annotations

import batchviz as bv
from batchviz.data import spell_word, synthetic_tagging
from batchviz.nn import SGDTrainer

from .harness import PAPER_STRATEGIES, STRATEGIES, run_modes
from .taggers import ManualTagger, Tagger

FULL = dict(length=40, embed=200, vocab=1000, hidden=256, layers=2, labels=300, batch=64)
QUICK = dict(length=6, embed=16, vocab=50, hidden=16, layers=2, labels=10, batch=8)


def minibatch(s: dict, seed: int = 0) -> list:
    """One minibatch of ``(word ids, tag ids)`` from :func:`batchviz.data.synthetic_tagging`
    (word ids 0..vocab-1 are recovered from the generated spellings)."""
    sentences = synthetic_tagging(s["batch"], length=s["length"], vocab_size=s["vocab"],
                                  n_tags=s["labels"], seed=seed)
    ids = {spell_word(i): i for i in range(s["vocab"])}
    return [([ids[w] for w in x.words], [int(t[1:]) for t in x.tags]) for x in sentences]


def run(quick: bool = False) -> dict:
    s = QUICK if quick else FULL
    batch = minibatch(s)
    model = bv.Model(seed=0)
    tagger = Tagger(model, s["vocab"], s["labels"], s["embed"], s["hidden"], layers=s["layers"])
    manual = ManualTagger(tagger)
    trainer = SGDTrainer(model, learning_rate=0.1)

    def naive(run):
        return bv.esum([tagger.loss(words, tags) for words, tags in batch])

    def manual_loss(run):
        return manual.loss(batch)

    modes = {name: (name, naive) for name in STRATEGIES}
    modes.update({f"manual+{name}": (name, manual_loss) for name in PAPER_STRATEGIES})
    products = tagger.products([s["length"]] * s["batch"])
    title = (f"synthetic (§4.1): {s['batch']} sentences x {s['length']} words, embed {s['embed']}, "
             f"{s['layers']}-layer BiLSTM {s['hidden']}, {s['labels']} labels")
    return run_modes("synthetic", title, modes, trainer, products, s["batch"], s, quick)
