"""Synthetic data for the DyNet example programs: made from a seed, no downloads, and
learnable (the loss of a model trained on it falls), so that the programs run anywhere.

Nothing here imports DyNet or batchviz: the programs run unchanged under either.
"""
import numpy as np


def _zipf(rng, vocab, size):
    """Word ids with Zipf frequencies (a few frequent words, a long tail of rare ones)."""
    p = 1.0 / np.arange(1, vocab + 1)
    return rng.choice(vocab, size=size, p=p / p.sum())


def _length(rng, mean, low=2, high=80):
    return int(np.clip(rng.lognormal(np.log(mean), 0.45), low, high))


def tagged_sentences(n, vocab=1000, tags=9, mean_length=15, seed=0):
    """``n`` sentences as ``(word ids, tag ids)``. A word's tag is its own (fixed per word)
    most of the time, else the next tag after the previous word's: a BiLSTM can learn both."""
    rng = np.random.default_rng(seed)
    own = rng.integers(tags, size=vocab)
    sentences = []
    for _ in range(n):
        words = _zipf(rng, vocab, _length(rng, mean_length))
        labels = [int(own[w]) for w in words]
        for i in range(1, len(words)):
            if words[i] % 5 == 0:  # some words take their tag from the previous word
                labels[i] = (labels[i - 1] + 1) % tags
        sentences.append(([int(w) for w in words], labels))
    return sentences


def classified_sentences(n, vocab=1000, classes=5, mean_length=20, seed=0):
    """``n`` sentences as ``(word ids, class)``: every word leans to one class, and a
    sentence's class is the one its words lean to most (a sentiment corpus's pattern,
    which a bag of words learns)."""
    rng = np.random.default_rng(seed)
    leaning = rng.integers(classes, size=vocab)
    sentences = []
    for _ in range(n):
        words = _zipf(rng, vocab, _length(rng, mean_length))
        votes = np.bincount(leaning[words], minlength=classes)
        sentences.append(([int(w) for w in words], int(np.argmax(votes))))
    return sentences


def lm_sentences(n, vocab=1000, mean_length=20, seed=0):
    """``n`` sentences of word ids from a Markov chain with a few likely next words per
    word; word 0 ends a sentence (and starts the next, as ``<s>``)."""
    rng = np.random.default_rng(seed)
    successors = rng.integers(1, vocab, size=(vocab, 4))
    sentences = []
    for _ in range(n):
        words, w = [0], int(_zipf(rng, vocab - 1, 1)[0]) + 1
        for _ in range(_length(rng, mean_length)):
            words.append(w)
            w = int(successors[w, rng.integers(4)]) if rng.random() < 0.9 else int(rng.integers(1, vocab))
        sentences.append(words + [0])
    return sentences


def trees(n, vocab=1000, labels=5, min_leaves=5, max_leaves=30, mean_leaves=19, seed=0):
    """``n`` random binary trees over Zipf words. A leaf is ``(word, label)``, an inner node
    ``(left, right, label)``; a node's label is its words' mean "sentiment" in ``labels``
    buckets (each word has a sentiment), as in a sentiment treebank."""
    rng = np.random.default_rng(seed)
    sentiment = rng.uniform(-1.0, 1.0, size=vocab)

    def build(words):
        if len(words) == 1:
            return (int(words[0]), bucket([words[0]]))
        split = int(rng.integers(1, len(words)))
        return (build(words[:split]), build(words[split:]), bucket(words))

    def bucket(words):
        mean = float(np.mean(sentiment[list(words)]))
        return min(labels - 1, int((mean + 1.0) / 2.0 * labels))

    return [build(_zipf(rng, vocab, _length(rng, mean_leaves, min_leaves, max_leaves)))
            for _ in range(n)]


def reversals(n, symbols=20, mean_length=8, seed=0):
    """``n`` pairs ``(source, target)`` of symbol ids in ``[0, symbols)``: the target is the
    source reversed, a task an encoder-decoder with attention learns by looking at the
    source from its end."""
    rng = np.random.default_rng(seed)
    pairs = []
    for _ in range(n):
        source = [int(s) for s in rng.integers(symbols, size=_length(rng, mean_length, 2, 30))]
        pairs.append((source, source[::-1]))
    return pairs


def images(n, pixels=784, classes=10, seed=0):
    """``(images, labels)``: ``n`` noisy copies of ``classes`` random prototype images in
    [0, 1] (an MNIST stand-in: 28 x 28 = 784 pixels, 10 classes)."""
    rng = np.random.default_rng(seed)
    prototypes = rng.random((classes, pixels)) < 0.2
    labels = rng.integers(classes, size=n)
    noise = rng.random((n, pixels)) < 0.1
    return (prototypes[labels] ^ noise).astype(np.float32), labels
