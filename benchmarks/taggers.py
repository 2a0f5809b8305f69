"""BiLSTM taggers (Huang et al., 2015; Plank et al., 2016) for the tagging benchmarks.

:class:`Tagger` is the naive code the paper wants users to write: one sentence at a time,
a word embedding (or, with ``chars``, a character BiLSTM for rare words) per token, a
BiLSTM, and a softmax loss per token. The strategies batch it.

:class:`ManualTagger` is the paper's Train-Batch-Manual baseline for sentences of equal
length: the same parameters, but the inputs of all sentences at one time step aggregated
into a matrix with one column per sentence (one ``lookup_batch`` per step, LSTM steps on
``(dim, 64)`` matrices, one summed loss per step).
"""
from __future__ import annotations

import batchviz as bv
from batchviz.nn import BiLSTMBuilder, CharBiLSTMEmbedder

from .harness import Products


class Tagger:
    """BiLSTM tagger; ``chars`` = number of characters to spell rare words with (or None)."""

    def __init__(self, model, n_words: int, n_tags: int, embed: int, hidden: int,
                 layers: int = 1, chars: int | None = None, char_embed: int = 64,
                 char_hidden: int = 128):
        self.embed, self.hidden, self.layers, self.n_tags = embed, hidden, layers, n_tags
        self.E = model.add_lookup_parameters((n_words, embed), name="words")
        self.bilstm = BiLSTMBuilder(layers, embed, hidden, model)
        self.W_f = model.add_parameters((n_tags, hidden), name="out.W_f")
        self.W_b = model.add_parameters((n_tags, hidden), name="out.W_b")
        self.b = model.add_parameters((n_tags,), init="zeros", name="out.b")
        self.chars = None
        if chars is not None:
            if 2 * char_hidden != embed:
                raise ValueError(f"character vectors (2 x {char_hidden}) must have the word "
                                 f"embedding size {embed}")
            self.chars = CharBiLSTMEmbedder(model, chars, char_embed, char_hidden)
        self.char_dims = (char_embed, char_hidden)

    def word_vector(self, word: int, spelling):
        """The embedding of a frequent word; a character BiLSTM over ``spelling`` for a rare
        one (``spelling`` is None for frequent words)."""
        if spelling is None or self.chars is None:
            return self.E[word]
        return self.chars(spelling)

    def loss(self, words, tags, spellings=None):
        """Summed softmax loss of one sentence."""
        if spellings is None:
            xs = [self.E[w] for w in words]
        else:
            xs = [self.word_vector(w, s) for w, s in zip(words, spellings)]
        pieces = self.bilstm.transduce_pieces(xs)
        return bv.esum([bv.pickneglogsoftmax(bv.affine_transform([self.b, self.W_f, f, self.W_b, b]), t)
                        for (f, b), t in zip(pieces, tags)])

    def predict(self, words, spellings=None) -> list[int]:
        if spellings is None:
            xs = [self.E[w] for w in words]
        else:
            xs = [self.word_vector(w, s) for w, s in zip(words, spellings)]
        pieces = self.bilstm.transduce_pieces(xs)
        scores = [bv.affine_transform([self.b, self.W_f, f, self.W_b, b]) for f, b in pieces]
        return [int(s.npvalue().argmax()) for s in scores]

    def products(self, lengths, rare_spellings=()) -> Products:
        """Matrix-vector products of a minibatch with sentences of ``lengths`` and the
        character lengths of its rare words."""
        p = Products()
        H, n = self.hidden, sum(lengths)
        for layer in range(self.layers):
            d = self.embed if layer == 0 else 2 * H
            for _ in range(2):  # forward and backward
                if layer == 0:
                    p.add(4 * H, d, n)
                else:  # two input pieces of H
                    p.add(4 * H, H, 2 * n)
                p.add(4 * H, H, n)
        p.add(self.n_tags, H, 2 * n)
        if self.chars is not None:
            ce, ch = self.char_dims
            letters = sum(rare_spellings)
            for _ in range(2):
                p.add(4 * ch, ce, letters)
                p.add(4 * ch, ch, letters)
        return p


class ManualTagger:
    """Train-Batch-Manual: ``tagger``'s parameters run on whole time steps at once."""

    def __init__(self, tagger: Tagger):
        if tagger.chars is not None:
            raise ValueError("manual batching is for the word-only tagger (equal lengths)")
        self.t = tagger

    def loss(self, batch):
        """Summed loss of ``batch``, a list of ``(words, tags)`` of one common length."""
        length = len(batch[0][0])
        if any(len(words) != length for words, _ in batch):
            raise ValueError("manual batching here needs sentences of one length (no padding)")
        t = self.t
        xs = [bv.lookup_batch(t.E, [words[i] for words, _ in batch]) for i in range(length)]
        pieces = t.bilstm.transduce_pieces(xs)
        return bv.esum([
            bv.pickneglogsoftmax_batch(bv.affine_batch([t.b, t.W_f, f, t.W_b, b]),
                                       [tags[i] for _, tags in batch])
            for i, (f, b) in enumerate(pieces)])
