"""Table 1, "Transition-Parsing": a BIST-style arc-hybrid parser, 64 parsers in parallel.

Settings (App. C, the modified ``barchybrid`` of Kiperwasser & Goldberg, 2016): word
embeddings 100, POS embeddings 25, a 2-layer BiLSTM of 200 in each direction over
``[ROOT, w1..wn]`` (``--bibi-lstm``), features = the BiLSTM vectors of the top three stack
words and the first buffer word, a tanh MLP with 100 hidden units scoring the labeled
transitions (shift, and left/right arcs with each relation), and BIST's hinge loss: when
the best wrong transition scores within 1 of the gold one, the loss gains
``1 + score(wrong) - score(gold)``.

Deciding whether a loss term exists needs the scores, so the forward pass must run at every
step. As in the paper, ``b = 64`` parsers advance in parallel: at each step every unfinished
parser builds its scores, one ``value()`` runs them all (their nodes batched together), then
each parser takes its gold transition (static oracle; BIST's error exploration needs a
dynamic oracle, which the data module does not provide). Data: UD-like random projective
trees from :func:`batchviz.data.synthetic_dependencies` (mean length 17).
"""
from __future__ import annotations

import numpy as np

import batchviz as bv
from batchviz.data import (EMPTY, LEFT_ARC, RELATIONS, SHIFT, UPOS, Configuration, Vocab, apply,
                           feature_positions, is_final, legal_transitions, oracle,
                           synthetic_dependencies)
from batchviz.nn import MLP, BiLSTMBuilder, SGDTrainer

from .harness import STRATEGIES, Products, run_modes

FULL = dict(sentences=64, words=100, pos=25, lstm=200, layers=2, hidden=100, stack_features=3,
            buffer_features=1)
QUICK = dict(sentences=6, words=8, pos=4, lstm=8, layers=2, hidden=8, stack_features=3,
             buffer_features=1)
ROOT_WORD = ROOT_POS = "*root*"
RELS = ("root",) + RELATIONS


class Parser:
    """BiLSTM features + MLP scorer over labeled arc-hybrid transitions."""

    def __init__(self, model, words: Vocab, s: dict):
        self.words, self.pos = words, Vocab([ROOT_POS] + list(UPOS), unk=None)
        self.E_word = model.add_lookup_parameters((len(words), s["words"]), name="words")
        self.E_pos = model.add_lookup_parameters((len(self.pos), s["pos"]), name="pos")
        self.bilstm = BiLSTMBuilder(s["layers"], (s["words"], s["pos"]), s["lstm"], model)
        self.empty = model.add_lookup_parameters((2, s["lstm"]), name="empty")  # [forward; backward]
        self.k, self.kb = s["stack_features"], s["buffer_features"]
        n_features = 2 * (self.k + self.kb)
        self.classes = 1 + 2 * len(RELS)  # shift, left_arc(rel), right_arc(rel)
        self.mlp = MLP(model, [(s["lstm"],) * n_features, s["hidden"], self.classes])
        self.s = s
        self._masks: dict = {}

    def transition_class(self, move: str, rel: str | None) -> int:
        if move == SHIFT:
            return 0
        return 1 + RELS.index(rel) + (0 if move == LEFT_ARC else len(RELS))

    def legal_mask(self, legal: list) -> np.ndarray:
        """Which transition classes ``legal`` (a list of moves) allows, cached per list."""
        key = tuple(legal)
        mask = self._masks.get(key)
        if mask is None:
            mask = np.zeros(self.classes, dtype=bool)
            for move in legal:
                for rel in ((None,) if move == SHIFT else RELS):
                    mask[self.transition_class(move, rel)] = True
            self._masks[key] = mask
        return mask

    def best_wrong(self, values, legal: list, gold: int):
        """The legal class other than ``gold`` with the highest score (None if there is none)."""
        candidates = np.where(self.legal_mask(legal), values, -np.inf)
        candidates[gold] = -np.inf
        wrong = int(candidates.argmax())
        return None if candidates[wrong] == -np.inf else wrong

    def encode(self, sentence):
        """BiLSTM vectors (as forward/backward pieces) of ROOT (row 0) and every word."""
        words = [self.words.index(ROOT_WORD)] + self.words.indices(sentence.words)
        tags = [0] + self.pos.indices(sentence.pos)
        return self.bilstm.transduce_pieces([[self.E_word[w], self.E_pos[t]] for w, t in zip(words, tags)])

    def batch_loss(self, sentences, run):
        """Hinge loss of parsing ``sentences`` in parallel; ``run(expr)`` runs the forward
        pass (all pending nodes: every parser's scores of this step) and returns the value."""
        empty = (self.empty[0], self.empty[1])
        parsers = [(self.encode(x), x, Configuration.initial(len(x))) for x in sentences]
        losses = []
        while parsers:
            scored = []
            for vectors, sentence, config in parsers:
                pieces = []
                for position in feature_positions(config, self.k, self.kb):
                    pieces.extend(empty if position == EMPTY else vectors[position])
                scored.append(self.mlp(pieces))
            # the first read runs one forward for every parser's scores; all values are
            # read before any loss node is added, so this step's losses join the next
            # step's forward (a read after adding nodes would run those few on their own)
            step_values = [run(scores) for scores in scored]
            still = []
            for (vectors, sentence, config), scores, values in zip(parsers, scored, step_values):
                move = oracle(config, sentence.heads)
                rel = None if move == SHIFT else sentence.rels[config.stack[-1] - 1]
                gold = self.transition_class(move, rel)
                wrong = self.best_wrong(values, legal_transitions(config), gold)
                if wrong is not None and values[wrong] > values[gold] - 1.0:
                    losses.append(scores[wrong] - scores[gold] + 1.0)
                config = apply(config, move, rel)
                if not is_final(config):
                    still.append((vectors, sentence, config))
            parsers = still
        if not losses:  # every decision already right by a margin: a zero loss
            return scored[0][0] * 0.0
        return bv.esum(losses)

    def products(self, sentences) -> Products:
        s, p = self.s, Products()
        tokens = sum(len(x) + 1 for x in sentences)
        steps = sum(2 * len(x) for x in sentences)
        H = s["lstm"]
        for layer in range(s["layers"]):
            for _ in range(2):
                if layer == 0:
                    p.add(4 * H, s["words"], tokens)
                    p.add(4 * H, s["pos"], tokens)
                else:
                    p.add(4 * H, H, 2 * tokens)
                p.add(4 * H, H, tokens)
        p.add(s["hidden"], H, 2 * (self.k + self.kb) * steps)
        p.add(self.classes, s["hidden"], steps)
        return p


def run(quick: bool = False) -> dict:
    s = QUICK if quick else FULL
    sentences = synthetic_dependencies(s["sentences"], seed=0, max_length=30 if quick else 100)
    words = Vocab.from_corpus([[ROOT_WORD]] + [x.words for x in sentences])
    model = bv.Model(seed=0)
    parser = Parser(model, words, s)
    trainer = SGDTrainer(model, learning_rate=0.1)

    def naive(run):
        return parser.batch_loss(sentences, run)

    lengths = [len(x) for x in sentences]
    settings = dict(s, words_in_minibatch=sum(lengths), transitions=2 * sum(lengths),
                    steps=2 * max(lengths), mean_length=float(np.mean(lengths)))
    title = (f"transition parser (Table 1): {s['sentences']} sentences in parallel, "
             f"{sum(lengths)} words, {2 * max(lengths)} steps (one forward each)")
    return run_modes("parser", title, {m: (m, naive) for m in STRATEGIES}, trainer,
                     parser.products(sentences), s["sentences"], settings, quick)
