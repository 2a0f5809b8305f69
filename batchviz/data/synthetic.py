"""Synthetic stand-ins for the paper's data sets, generated at run time from a seed.

Neubig et al. (2017) time their models on WikiNER (tagging), the Stanford Sentiment
Treebank (TreeLSTM) and Universal Dependencies (parsing). What matters for batching speed
is the *shape* of the data: how sentence lengths and tree sizes vary. So each generator
here draws sizes from a distribution that roughly matches the real corpus, fills in
words with a Zipf-like frequency (so rare words exist, as the character-embedding model
needs), and derives labels by a simple, documented rule so a model can actually learn
something and its loss goes down. Same arguments and seed, same data: nothing is
downloaded or shipped.
"""

from __future__ import annotations

import numpy as np

from .conll import TaggedSentence
from .conllu import DepSentence
from .ptb import Tree

# Letters that spell a word id (10 consonants x 5 vowels = 50 syllables, one base-50 digit
# each) and disjoint filler letters prepended to vary word length. Because the two sets
# share no letter, stripping the filler recovers the id: spellings are unique, and the
# characters really do determine the word, which a character-level model can exploit.
_CONSONANTS, _VOWELS, _FILLER = "bdgklmnprt", "aeiou", "fhjsvwyz"
_SYLLABLES = [c + v for c in _CONSONANTS for v in _VOWELS]

UPOS = ("NOUN", "PUNCT", "VERB", "ADP", "DET", "PRON", "ADJ", "AUX", "ADV",
        "PROPN", "CCONJ", "PART", "NUM", "SCONJ", "X", "INTJ", "SYM")
RELATIONS = ("nsubj", "obj", "amod", "det", "case", "advmod", "nmod", "obl",
             "conj", "cc", "compound", "aux", "mark", "punct", "dep")


def spell_word(word_id: int) -> str:
    """A made-up but fixed spelling for ``word_id``, 2..12 letters (e.g. 123 -> ``"vfjwzbelo"``).

    The core is ``word_id`` written in bijective base 50, one consonant-vowel syllable per
    digit (ids below 50 get 2 letters, below 2550 get 4, ...; frequent words are short, as
    in real languages). A hash of the id then decides how many filler letters (0..12 minus
    the core length) go in front. Lengths stay within 2..12 for ids below about 6.4 million.
    """
    if word_id < 0:
        raise ValueError(f"word ids are non-negative, got {word_id}")
    digits, n = [], word_id
    while True:
        digits.append(_SYLLABLES[n % 50])
        n = n // 50 - 1
        if n < 0:
            break
    core = "".join(reversed(digits))
    h = (word_id * 2654435761 + 12345) % 2**32  # Knuth's multiplicative hash
    n_filler = h % (max(0, 12 - len(core)) + 1)
    filler = "".join(_FILLER[(h >> (3 * i + 4)) % len(_FILLER)] for i in range(n_filler))
    return filler + core


def tag_rule(word_id: int, prev_id: int | None, n_tags: int) -> int:
    """The tag of ``word_id`` after ``prev_id`` (None at sentence start).

    ``(word_id + (n_tags // 2) * (prev_id % 2)) % n_tags``: mostly a function of the word,
    but an odd left neighbour shifts it by half the tag set, so a tagger must look at
    context: a model that ignores context is right only after even-numbered words.
    """
    shift = 0 if prev_id is None else (n_tags // 2) * (prev_id % 2)
    return (word_id + shift) % n_tags


def leaf_sentiment(word_id: int, n_labels: int) -> int:
    """Sentiment label of a leaf: ``word_id % n_labels``."""
    return word_id % n_labels


def combine_sentiment(left: int, right: int, n_labels: int) -> int:
    """Label of an inner node: mean of its children's labels, halves rounded toward neutral.

    Neutral is the middle label (2 of 0..4), so ``(3, 4) -> 3`` and ``(0, 1) -> 1``.
    """
    total, neutral2 = left + right, n_labels - 1  # compare 2*mean with 2*neutral
    if total % 2 == 0:
        return total // 2
    return total // 2 + 1 if total < neutral2 else total // 2


def relation_rule(pos_index: int, head_is_right: bool) -> str:
    """Arc label of a dependent with UPOS ``UPOS[pos_index]`` by direction of its head."""
    return RELATIONS[(2 * pos_index + int(head_is_right)) % len(RELATIONS)]


def _zipf_ids(rng: np.random.Generator, size: int, vocab_size: int, exponent: float) -> np.ndarray:
    """Word ids with P(id) proportional to 1 / (id + 1) ** exponent (id 0 most frequent)."""
    weights = 1.0 / np.arange(1, vocab_size + 1) ** exponent
    return rng.choice(vocab_size, size=size, p=weights / weights.sum())


def _lognormal_lengths(rng: np.random.Generator, n: int, mean: float, sigma: float, lo: int, hi: int) -> np.ndarray:
    """Integer lengths from a log-normal with the given mean, rounded and clipped to lo..hi.

    Log-normal because sentence lengths are positive with a long right tail.
    """
    mu = np.log(mean) - sigma**2 / 2  # makes E[exp(N(mu, sigma))] == mean
    return np.clip(np.rint(rng.lognormal(mu, sigma, size=n)), lo, hi).astype(int)


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")


def synthetic_tagging(n_sentences: int, length: int | None = None, vocab_size: int = 1000,
                      n_tags: int = 300, seed: int = 0, lengths: str = "ner",
                      zipf_exponent: float = 1.0) -> list[TaggedSentence]:
    """Tagged sentences whose tags follow :func:`tag_rule`; words are :func:`spell_word` strings.

    ``length=40`` (with the defaults ``vocab_size=1000, n_tags=300``) reproduces the
    synthetic task of the paper's section 4.1: every sentence exactly 40 words. With
    ``length=None`` lengths follow ``lengths="ner"``, an *approximation* of WikiNER
    English: log-normal, mean about 24 tokens, long right tail, clipped to 1..120. Tags
    are strings ``"T<k>"``. ``zipf_exponent=0`` makes words uniform.
    """
    _check_positive(n_sentences=n_sentences, vocab_size=vocab_size, n_tags=n_tags)
    rng = np.random.default_rng(seed)
    if length is not None:
        _check_positive(length=length)
        sizes = np.full(n_sentences, length)
    elif lengths == "ner":
        sizes = _lognormal_lengths(rng, n_sentences, mean=24.0, sigma=0.6, lo=1, hi=120)
    else:
        raise ValueError(f"unknown length distribution {lengths!r}; expected 'ner' or an int length")
    ids = _zipf_ids(rng, int(sizes.sum()), vocab_size, zipf_exponent).tolist()
    spelling = {}
    sentences, pos = [], 0
    for size in sizes.tolist():
        words, tags, prev = [], [], None
        for w in ids[pos:pos + size]:
            if w not in spelling:
                spelling[w] = spell_word(w)
            words.append(spelling[w])
            tags.append(f"T{tag_rule(w, prev, n_tags)}")
            prev = w
        sentences.append(TaggedSentence(words, tags))
        pos += size
    return sentences


def synthetic_trees(n_trees: int, min_leaves: int = 5, max_leaves: int = 50, n_labels: int = 5,
                    vocab_size: int = 5000, seed: int = 0, zipf_exponent: float = 1.0) -> list[Tree]:
    """Random binary sentiment trees shaped like SST, labelled at every node.

    Leaf counts are log-normal with mean about 19 words (SST's average), clipped to
    ``min_leaves..max_leaves``. Each inner node splits its span at a uniform random point.
    Leaves get :func:`leaf_sentiment` of their word id; inner nodes
    :func:`combine_sentiment` of their children, so the root label is computable bottom-up
    exactly as a TreeLSTM is asked to do.
    """
    _check_positive(n_trees=n_trees, min_leaves=min_leaves, n_labels=n_labels, vocab_size=vocab_size)
    if max_leaves < min_leaves:
        raise ValueError(f"max_leaves {max_leaves} < min_leaves {min_leaves}")
    rng = np.random.default_rng(seed)
    sizes = _lognormal_lengths(rng, n_trees, mean=19.0, sigma=0.5, lo=min_leaves, hi=max_leaves)
    trees = []
    for size in sizes.tolist():
        ids = _zipf_ids(rng, size, vocab_size, zipf_exponent).tolist()
        trees.append(_random_binary_tree(rng, ids, n_labels))
    return trees


def _random_binary_tree(rng: np.random.Generator, ids: list[int], n_labels: int) -> Tree:
    if len(ids) == 1:
        return Tree(leaf_sentiment(ids[0], n_labels), word=spell_word(ids[0]))
    split = int(rng.integers(1, len(ids)))
    left = _random_binary_tree(rng, ids[:split], n_labels)
    right = _random_binary_tree(rng, ids[split:], n_labels)
    label = combine_sentiment(int(left.label), int(right.label), n_labels)
    return Tree(label, [left, right])


def synthetic_dependencies(n_sentences: int, seed: int = 0, vocab_size: int = 5000,
                           mean_length: float = 17.0, max_length: int = 100,
                           zipf_exponent: float = 1.0) -> list[DepSentence]:
    """Random projective dependency trees with UD-like lengths and rule-based labels.

    Lengths are log-normal with mean ``mean_length`` (UD English averages about 17 words;
    this is an approximation), clipped to ``1..max_length``. Every tree has exactly one
    root and is projective: each subtree is grown over a contiguous span, whose head is a
    uniform random word of the span and whose other words are cut into contiguous pieces
    that become the head's dependents. ``pos`` is ``UPOS[word_id % 17]`` and ``rels`` is
    :func:`relation_rule` of that POS and the arc direction (``"root"`` for the root).
    """
    _check_positive(n_sentences=n_sentences, vocab_size=vocab_size, max_length=max_length)
    rng = np.random.default_rng(seed)
    sizes = _lognormal_lengths(rng, n_sentences, mean=mean_length, sigma=0.65, lo=1, hi=max_length)
    sentences = []
    for size in sizes.tolist():
        ids = _zipf_ids(rng, size, vocab_size, zipf_exponent).tolist()
        heads = _random_projective_heads(rng, size)
        pos_index = [w % len(UPOS) for w in ids]
        rels = ["root" if h == 0 else relation_rule(p, h > d)
                for d, (h, p) in enumerate(zip(heads, pos_index), start=1)]
        sentences.append(DepSentence([spell_word(w) for w in ids], [UPOS[p] for p in pos_index], heads, rels))
    return sentences


def _random_projective_heads(rng: np.random.Generator, n: int) -> list[int]:
    """Heads (1-based, 0 = root) of a random projective tree over words 1..n.

    Works on spans with an explicit stack instead of recursion: a span ``lo..hi`` with
    parent ``p`` picks its head ``h``, and each side of ``h`` is cut at every gap with
    probability 1/2 into pieces that are pushed as new spans with parent ``h``.
    """
    heads = [0] * n
    spans = [(1, n, 0)]
    while spans:
        lo, hi, parent = spans.pop()
        h = int(rng.integers(lo, hi + 1))
        heads[h - 1] = parent
        for a, b in ((lo, h - 1), (h + 1, hi)):
            if a > b:
                continue
            cuts = [g for g in range(a, b) if rng.random() < 0.5]  # cut after word g
            starts = [a] + [g + 1 for g in cuts]
            ends = cuts + [b]
            spans.extend((s, e, h) for s, e in zip(starts, ends))
    return heads
