"""Table 1, "BiLSTM w/char": the BiLSTM tagger, with rare words spelled by a character BiLSTM.

Settings (App. C, ``bilstm-tagger-withchar-bulk``): as the BiLSTM task, plus character
embeddings of 64 and character LSTMs of 128 in each direction for words seen fewer than 5
times (their two final states, concatenated, replace the 256-dim word embedding). Which
words take the character path changes from sentence to sentence, so the character LSTMs
are hard to batch by hand; the runtime batches them across words and sentences.
"""
from __future__ import annotations

import batchviz as bv
from batchviz.nn import SGDTrainer

from .bilstm import FULL as BILSTM_FULL
from .bilstm import QUICK as BILSTM_QUICK
from .bilstm import tagging_corpus
from .harness import STRATEGIES, run_modes
from .taggers import Tagger

FULL = dict(BILSTM_FULL, char_embed=64, char_hidden=128)
QUICK = dict(BILSTM_QUICK, char_embed=8, char_hidden=8)


def run(quick: bool = False) -> dict:
    s = QUICK if quick else FULL
    corpus, words, counts, picked = tagging_corpus(s)
    letters = sorted({ch for sentence in corpus for w in sentence.words for ch in w})
    char_id = {ch: i for i, ch in enumerate(letters)}

    def spelling(w):
        return None if counts[w] >= s["min_count"] else [char_id[ch] for ch in w]

    batch = [(words.indices(x.words), [int(t[1:]) for t in x.tags], [spelling(w) for w in x.words])
             for x in picked]
    model = bv.Model(seed=0)
    tagger = Tagger(model, len(words), s["tags"], s["embed"], s["hidden"], layers=1,
                    chars=len(letters), char_embed=s["char_embed"], char_hidden=s["char_hidden"])
    trainer = SGDTrainer(model, learning_rate=0.1)

    def naive(run):
        return bv.esum([tagger.loss(w, t, sp) for w, t, sp in batch])

    lengths = [len(w) for w, _, _ in batch]
    rare = [len(sp) for _, _, sps in batch for sp in sps if sp is not None]
    products = tagger.products(lengths, rare)
    settings = dict(s, vocabulary_kept=len(words), characters=len(letters),
                    words_in_minibatch=sum(lengths), rare_words_in_minibatch=len(rare))
    title = (f"BiLSTM tagger w/char (Table 1): {s['batch']} sentences, {sum(lengths)} words, "
             f"{len(rare)} rare words spelled by a char BiLSTM ({s['char_embed']}/{s['char_hidden']})")
    return run_modes("bilstm-char", title, {m: (m, naive) for m in STRATEGIES}, trainer, products,
                     s["batch"], settings, quick)
