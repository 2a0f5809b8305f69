"""DyNet's softmax layers: ``StandardSoftmaxBuilder`` and ``ClassFactoredSoftmaxBuilder``
(Goodman's class-factored softmax, as in DyNet's ``cfsm-builder.cc``).

Both are written with this package's ops (affine transforms, ``pickneglogsoftmax``,
``log_softmax``) on parameters in a sub-collection named as DyNet names it, so a loss is
DyNet's nodes and the losses of many positions batch under autobatching (the weights are
shared arguments).

Where DyNet departs from what it documents, these follow the documentation (docs/dynet.md,
"What differs"):

* each call's ``update`` is honoured. DyNet makes the weight expressions once per graph and
  flag, so after an ``update=False`` call a later ``update=True`` call in the same graph
  still uses the constant weights and its loss sends no gradient to them;
* the class-factored ``full_logits`` is ``log p(class) + log p(word | class)`` (so
  ``full_log_distribution`` is the log distribution it is documented to be); DyNet adds
  ``p(word | class)``, not its log;
* ``StandardSoftmaxBuilder(bias=False).sample`` draws from the softmax, as with a bias;
  DyNet reads the raw scores as probabilities there.
"""
from __future__ import annotations

import numbers
import re

import numpy as np

from .arith import affine_transform
from .expression import Expression, as_expression
from .graph import rng
from .inputs import inputTensor
from .losses import log_softmax, pickneglogsoftmax, pickneglogsoftmax_batch, softmax
from .shaping import concatenate, concatenate_to_batch, pick_batch_elem

#: the score DyNet gives a word id that no cluster holds (it notes: "should be -inf")
MISSING_WORD_SCORE = -10000.0


def _count(value, what: str, who: str) -> int:
    """``value`` as a non-negative int (DyNet's ``unsigned`` arguments)."""
    if isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer()):
        if value < 0:
            raise OverflowError(f"{who}: {what} must be a non-negative integer, got {value}")
        return int(value)
    raise TypeError(f"{who}: {what} must be an integer, got {value!r}")


def _weights(p, update: bool):
    """The parameter, or (``update=False``) a constant copy that takes no gradient."""
    return p if update else p.const_expr()


def _scores(W, b, rep: Expression, update: bool) -> Expression:
    """``b + W rep`` (``W rep`` when there is no bias)."""
    if b is None:
        return _weights(W, update) * rep
    return affine_transform([_weights(b, update), _weights(W, update), rep])


def _draw(probabilities) -> int:
    """An index drawn from ``probabilities`` by the seeded generator (the last index when
    rounding leaves the draw past the total, as DyNet)."""
    u = rng().random()
    for k, p in enumerate(np.ravel(probabilities)):
        u -= p
        if u < 0.0:
            return k
    return len(np.ravel(probabilities)) - 1


class SoftmaxBuilder:
    """What both softmax layers share: ``neg_log_softmax``, the minibatched
    ``neg_log_softmax_batch``, ``full_log_distribution`` and the collection."""

    local = None   # the builder's sub-collection, set by the subclasses

    def param_collection(self):
        """The builder's sub-collection (its weights first, then the bias)."""
        return self.local

    def full_log_distribution(self, rep, update: bool = True) -> Expression:
        """``log p(c | rep)`` for every class ``c``: a vector of the number of classes."""
        return log_softmax(self.full_logits(rep, update))

    # what each softmax layer computes its own way (DyNet's base class has them too)
    def neg_log_softmax(self, rep, classidx: int, update: bool = True) -> Expression:
        raise self._abstract("neg_log_softmax")

    def neg_log_softmax_batch(self, rep, classidxs, update: bool = True) -> Expression:
        raise self._abstract("neg_log_softmax_batch")

    def sample(self, rep) -> int:
        raise self._abstract("sample")

    def full_logits(self, rep, update: bool = True) -> Expression:
        raise self._abstract("full_logits")

    def _abstract(self, method: str) -> NotImplementedError:
        return NotImplementedError(f"SoftmaxBuilder.{method}: the base class of the softmax "
                                   "layers computes nothing itself; use StandardSoftmaxBuilder "
                                   "or ClassFactoredSoftmaxBuilder")

    def _rep(self, rep, who: str) -> Expression:
        return as_expression(rep, f"{type(self).__name__}.{who}")


class StandardSoftmaxBuilder(SoftmaxBuilder):
    """A softmax over ``num_labels`` classes of an affine map of ``rep``: parameters ``W``
    ``(num_labels, rep_dim)`` (Glorot) and ``b`` ``(num_labels,)`` (zeros, with ``bias``)."""

    collection_name = "standard-softmax-builder"

    def __init__(self, rep_dim: int, num_labels: int, pc, bias: bool = True):
        who = "StandardSoftmaxBuilder"
        rep_dim = _count(rep_dim, "rep_dim", who)
        num_labels = _count(num_labels, "num_labels", who)
        if not rep_dim or not num_labels:
            raise ValueError(f"{who}: rep_dim and num_labels must be positive, got {rep_dim} "
                             f"and {num_labels}")
        self.spec = (rep_dim, num_labels, bool(bias))
        self.local = pc.add_subcollection(self.collection_name)
        self.W = self.local.add_parameters((num_labels, rep_dim))
        self.b = self.local.add_parameters((num_labels,), init=0.0) if bias else None

    @classmethod
    def from_spec(cls, spec, pc):
        return cls(spec[0], spec[1], pc, spec[2])

    def full_logits(self, rep, update: bool = True) -> Expression:
        """``W rep + b``: the scores before the softmax."""
        return _scores(self.W, self.b, self._rep(rep, "full_logits"), update)

    def neg_log_softmax(self, rep, classidx, update: bool = True) -> Expression:
        """``-log p(classidx | rep)``."""
        classidx = _count(classidx, "classidx", "StandardSoftmaxBuilder.neg_log_softmax")
        return pickneglogsoftmax(self.full_logits(rep, update), classidx)

    def neg_log_softmax_batch(self, rep, classidxs, update: bool = True) -> Expression:
        """``-log p(classidxs[j] | rep_j)`` for each instance ``j`` of the minibatch ``rep``."""
        rep = self._rep(rep, "neg_log_softmax_batch")
        classidxs = [_count(c, "a class", "StandardSoftmaxBuilder.neg_log_softmax_batch")
                     for c in classidxs]
        if rep.bd != len(classidxs):
            raise ValueError(f"Inputs of StandardSoftmaxBuilder::neg_log_softmax should have "
                             f"same batch size, got {rep.bd} for rep and {len(classidxs)} "
                             "for classidxs")
        return pickneglogsoftmax_batch(self.full_logits(rep, update), classidxs)

    def sample(self, rep) -> int:
        """A class drawn from ``p(c | rep)`` (``rep`` one vector)."""
        return _draw(softmax(self.full_logits(rep)).npvalue())


class ClassFactoredSoftmaxBuilder(SoftmaxBuilder):
    """``p(w | rep) = p(c(w) | rep) p(w | c(w), rep)``, the words grouped into the clusters
    of ``cluster_file``: lines ``CLASS WORD [FREQ]`` (separated by spaces or tabs), the words
    numbered by ``word_dict`` (``{word: id}``, the ids ``0 .. len - 1``).

    Parameters, in DyNet's order: the class weights ``(classes, rep_dim)`` and bias, then for
    each cluster of more than one word (in the order the file first names them) its word
    weights ``(words in it, rep_dim)`` and bias. A word alone in its cluster needs no second
    softmax: its loss is the class's."""

    collection_name = "class-factored-softmax-builder"

    def __init__(self, rep_dim: int, cluster_file: str, word_dict: dict, pc, bias: bool = True):
        if not isinstance(cluster_file, str):
            raise TypeError(f"Argument 'cluster_file' has incorrect type (expected str, got "
                            f"{type(cluster_file).__name__})")
        self._build(rep_dim, _read_clusters(cluster_file), word_dict, pc, bias, cluster_file)

    @classmethod
    def from_spec(cls, spec, pc):
        """The builder again from its spec, which holds the clusters themselves: loading
        needs no cluster file."""
        rep_dim, pairs, word_dict, bias = spec
        builder = cls.__new__(cls)
        builder._build(rep_dim, [tuple(pair) for pair in pairs], word_dict, pc, bias, "(saved)")
        return builder

    def _build(self, rep_dim, pairs, word_dict, pc, bias, source: str) -> None:
        who = "ClassFactoredSoftmaxBuilder"
        rep_dim = _count(rep_dim, "rep_dim", who)
        _check_word_dict(word_dict)
        self.spec = (rep_dim, [list(pair) for pair in pairs], dict(word_dict), bool(bias))
        class_ids: dict = {}
        self.cluster_of: list = []       # word id -> its cluster (-1: none)
        self.row_of: list = []           # word id -> its row in its cluster
        self.cluster_words: list = []    # cluster -> its word ids
        for class_name, word in pairs:
            if word not in word_dict:
                raise RuntimeError(f"Unknown word encountered in frozen dictionary: {word} "
                                   f"(cluster file {source}, word_dict)")
            c, w = class_ids.setdefault(class_name, len(class_ids)), word_dict[word]
            if w >= len(self.cluster_of):
                grow = w + 1 - len(self.cluster_of)
                self.cluster_of += [-1] * grow
                self.row_of += [0] * grow
            if c == len(self.cluster_words):
                self.cluster_words.append([])
            self.cluster_of[w], self.row_of[w] = c, len(self.cluster_words[c])
            self.cluster_words[c].append(w)
        if not class_ids:
            raise ValueError(f"{who}: the cluster file {source} names no clusters")
        self.local = pc.add_subcollection(self.collection_name)
        add, n = self.local.add_parameters, len(self.cluster_words)
        self.class_W = add((n, rep_dim))
        self.class_b = add((n,), init=0.0) if bias else None
        self.word_W, self.word_b = [None] * n, [None] * n
        for c, words in enumerate(self.cluster_words):
            if len(words) > 1:
                self.word_W[c] = add((len(words), rep_dim))
                self.word_b[c] = add((len(words),), init=0.0) if bias else None

    # --- the two softmaxes ---------------------------------------------------------------
    def class_logits(self, rep, update: bool = True) -> Expression:
        return _scores(self.class_W, self.class_b, self._rep(rep, "class_logits"), update)

    def class_log_distribution(self, rep, update: bool = True) -> Expression:
        """``log p(c | rep)`` for every cluster ``c``."""
        return log_softmax(self.class_logits(rep, update))

    def subclass_logits(self, rep, classid, update: bool = True) -> Expression:
        """The scores of the words of cluster ``classid``, in the order the file lists them."""
        c = self._cluster(classid, "subclass_logits")
        return _scores(self.word_W[c], self.word_b[c], self._rep(rep, "subclass_logits"), update)

    def subclass_log_distribution(self, rep, classid, update: bool = True) -> Expression:
        """``log p(w | classid, rep)`` for the words of cluster ``classid``."""
        return log_softmax(self.subclass_logits(rep, classid, update))

    def _cluster(self, classid, who: str) -> int:
        c = _count(classid, "classid", f"ClassFactoredSoftmaxBuilder.{who}")
        if c >= len(self.cluster_words):
            raise ValueError(f"ClassFactoredSoftmaxBuilder.{who}: cluster {c} out of range "
                             f"(there are {len(self.cluster_words)})")
        if self.word_W[c] is None:   # (DyNet crashes here)
            raise ValueError(f"ClassFactoredSoftmaxBuilder.{who}: cluster {c} holds one word, "
                             "so it has no word softmax (p(word | cluster) is 1)")
        return c

    # --- losses and distributions over words ----------------------------------------------
    def neg_log_softmax(self, rep, classidx, update: bool = True) -> Expression:
        """``-log p(class | rep) - log p(word | class, rep)`` for the word ``classidx``."""
        rep = self._rep(rep, "neg_log_softmax")
        w = _count(classidx, "classidx", "ClassFactoredSoftmaxBuilder.neg_log_softmax")
        c = self.cluster_of[w] if w < len(self.cluster_of) else -1
        if c < 0:
            raise ValueError(f"Word ID {w} missing from clusters in "
                             "ClassFactoredSoftmaxBuilder::neg_log_softmax")
        class_loss = pickneglogsoftmax(self.class_logits(rep, update), c)
        if self.word_W[c] is None:
            return class_loss
        return class_loss + pickneglogsoftmax(self.subclass_logits(rep, c, update),
                                              self.row_of[w])

    def neg_log_softmax_batch(self, rep, classidxs, update: bool = True) -> Expression:
        """The loss of word ``classidxs[j]`` for each instance ``j`` of the minibatch ``rep``:
        each instance's on its own (their words' softmaxes differ), as DyNet computes it;
        autobatching batches them again."""
        rep = self._rep(rep, "neg_log_softmax_batch")
        classidxs = list(classidxs)
        if rep.bd != len(classidxs):
            raise ValueError(f"Inputs of ClassFactoredSoftmaxBuilder::neg_log_softmax should "
                             f"have same batch size, got {rep.bd} for rep and "
                             f"{len(classidxs)} for classidxs")
        if rep.bd == 1:
            return self.neg_log_softmax(rep, classidxs[0], update)
        return concatenate_to_batch([self.neg_log_softmax(pick_batch_elem(rep, j), w, update)
                                     for j, w in enumerate(classidxs)])

    def full_logits(self, rep, update: bool = True) -> Expression:
        """``log p(c(w) | rep) + log p(w | c(w), rep)`` for every word id up to the largest
        in the clusters (``-10000`` for an id no cluster holds, as DyNet): each word's log
        probability, so the softmax of these is the distribution itself.

        Built as two constant 0/1 matrices that put the clusters' words (and classes) at the
        words' ids, so it is a few nodes, not one per word."""
        rep = self._rep(rep, "full_logits")
        classes = self.class_log_distribution(rep, update)
        words, where_class, where_word = len(self.cluster_of), *self._placements()
        scores = inputTensor(where_class) * classes
        within = [self.subclass_log_distribution(rep, c, update)
                  for c, W in enumerate(self.word_W) if W is not None]
        if within:
            scores = scores + inputTensor(where_word) * concatenate(within)
        missing = [w for w in range(words) if self.cluster_of[w] < 0]
        if missing:
            offset = np.zeros(words)
            offset[missing] = MISSING_WORD_SCORE
            scores = scores + inputTensor(offset)
        return scores

    def _placements(self):
        """(word id x cluster, word id x row of the clusters' word softmaxes concatenated):
        the 0/1 matrices that :meth:`full_logits` multiplies by."""
        words = len(self.cluster_of)
        where_class = np.zeros((words, len(self.cluster_words)))
        starts, total = {}, 0
        for c, W in enumerate(self.word_W):
            if W is not None:
                starts[c], total = total, total + len(self.cluster_words[c])
        where_word = np.zeros((words, max(total, 1)))
        for w, c in enumerate(self.cluster_of):
            if c >= 0:
                where_class[w, c] = 1.0
                if c in starts:
                    where_word[w, starts[c] + self.row_of[w]] = 1.0
        return where_class, where_word

    def sample(self, rep) -> int:
        """A word id drawn from ``p(w | rep)``: a cluster, then a word of it."""
        rep = self._rep(rep, "sample")
        c = _draw(softmax(self.class_logits(rep)).npvalue())
        if self.word_W[c] is None:
            return self.cluster_words[c][0]
        return self.cluster_words[c][_draw(softmax(self.subclass_logits(rep, c)).npvalue())]


def _check_word_dict(word_dict) -> None:
    """DyNet's requirement: a dict numbering its words ``0 .. len - 1``."""
    if not isinstance(word_dict, dict):
        raise TypeError(f"Argument 'dic' has incorrect type (expected dict, got "
                        f"{type(word_dict).__name__})")
    if sorted(word_dict.values()) != list(range(len(word_dict))):
        raise ValueError("Dictionary should have unique ids from 0 to num_classes")


def _read_clusters(cluster_file: str) -> list:
    """``(class, word)`` of every line of a DyNet cluster file, in order; a third field (a
    frequency) is ignored; a line without two fields (an empty line too) is an error."""
    try:
        with open(cluster_file, encoding="utf-8", newline="\n") as f:
            lines = f.read().split("\n")
    except FileNotFoundError:
        raise ValueError(f"Could not find cluster file {cluster_file} in "
                         "ClassFactoredSoftmax") from None
    if lines and lines[-1] == "":
        lines.pop()   # (the end of the last line)
    pairs = []
    for number, line in enumerate(lines, 1):
        fields = re.split(r"[ \t]+", line.strip(" \t"))
        if len(fields) < 2:
            raise ValueError(f"Invalid format in cluster file {cluster_file} in "
                             f"ClassFactoredSoftmax (line {number}: {line!r})")
        pairs.append((fields[0], fields[1]))
    return pairs


__all__ = ["SoftmaxBuilder", "StandardSoftmaxBuilder", "ClassFactoredSoftmaxBuilder"]
