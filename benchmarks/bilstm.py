"""Table 1, "BiLSTM": a BiLSTM tagger on variable-length, NER-like sentences.

Settings (App. C, ``bilstm-tagger-bulk``): one layer, word embeddings and LSTMs of 256 in
each direction, words seen fewer than 5 times map to an unknown word, minibatch 64. The
data stand in for WikiNER: :func:`batchviz.data.synthetic_tagging` with its NER-like
log-normal lengths (mean about 24 words) and Zipf word frequencies (about 5% of tokens
are rare), 9 tags as in IOB named-entity tagging.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

import batchviz as bv
from batchviz.data import Vocab, synthetic_tagging
from batchviz.nn import SGDTrainer

from .harness import STRATEGIES, run_modes
from .taggers import Tagger

FULL = dict(corpus=20000, vocab=20000, tags=9, embed=256, hidden=256, batch=64, min_count=5)
QUICK = dict(corpus=300, vocab=500, tags=9, embed=16, hidden=16, batch=8, min_count=5)


def tagging_corpus(s: dict, seed: int = 0):
    """``(sentences, word vocabulary with rare words as unk, counts, one minibatch)``; the
    minibatch is ``s["batch"]`` sentences drawn at random."""
    corpus = synthetic_tagging(s["corpus"], vocab_size=s["vocab"], n_tags=s["tags"], seed=seed)
    counts = Counter(w for sentence in corpus for w in sentence.words)
    words = Vocab.from_counts(counts, min_count=s["min_count"])
    rng = np.random.default_rng(seed)
    picked = [corpus[i] for i in rng.choice(len(corpus), size=s["batch"], replace=False)]
    return corpus, words, counts, picked


def run(quick: bool = False) -> dict:
    s = QUICK if quick else FULL
    _, words, _, picked = tagging_corpus(s)
    batch = [(words.indices(x.words), [int(t[1:]) for t in x.tags]) for x in picked]
    model = bv.Model(seed=0)
    tagger = Tagger(model, len(words), s["tags"], s["embed"], s["hidden"], layers=1)
    trainer = SGDTrainer(model, learning_rate=0.1)

    def naive(run):
        return bv.esum([tagger.loss(w, t) for w, t in batch])

    lengths = [len(w) for w, _ in batch]
    products = tagger.products(lengths)
    settings = dict(s, vocabulary_kept=len(words), words_in_minibatch=sum(lengths))
    title = (f"BiLSTM tagger (Table 1): {s['batch']} sentences, {sum(lengths)} words "
             f"(lengths {min(lengths)}-{max(lengths)}), vocabulary {len(words)}, embed/LSTM {s['hidden']}")
    return run_modes("bilstm", title, {m: (m, naive) for m in STRATEGIES}, trainer, products,
                     s["batch"], settings, quick)
