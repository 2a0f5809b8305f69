"""Character BiLSTM word embeddings (Ling et al., 2015), for the paper's "BiLSTM w/char".

A rare word gets no embedding of its own; it is spelled out instead: a forward LSTM and a
backward LSTM read its characters, and their final outputs, concatenated, are the word's
vector. Which words take this path is decided per word at graph-construction time, so the
batches differ from sentence to sentence: exactly what makes the task hard to batch by hand.
"""
from __future__ import annotations

from .. import ops
from .lstm import LSTMBuilder


class CharBiLSTMEmbedder:
    """``embedder(char_ids)`` -> the ``(2 * hidden_dim,)`` vector ``[f_last; b_first]``.

    Paper settings (App. C): ``char_dim=64``, ``hidden_dim=128``.
    """

    def __init__(self, model, n_chars: int, char_dim: int = 64, hidden_dim: int = 128,
                 name: str | None = None):
        name = model.unique_prefix("char") if name is None else name
        if n_chars < 1:
            raise ValueError(f"n_chars must be positive, got {n_chars}")
        self.n_chars = int(n_chars)
        self.C = model.add_lookup_parameters((n_chars, char_dim), name=f"{name}.E")
        self.forward = LSTMBuilder(1, char_dim, hidden_dim, model, name=f"{name}.f")
        self.backward = LSTMBuilder(1, char_dim, hidden_dim, model, name=f"{name}.b")
        self.output_dim = 2 * hidden_dim

    def pieces(self, char_ids) -> tuple:
        """The final forward and backward outputs, as two expressions."""
        char_ids = list(char_ids)
        if not char_ids:
            raise ValueError("CharBiLSTMEmbedder: a word needs at least one character")
        xs = [self.C[c] for c in char_ids]
        f = self.forward.initial_state().transduce(xs)[-1]
        b = self.backward.initial_state().transduce(xs[::-1])[-1]
        return f, b

    def __call__(self, char_ids):
        return ops.api.concatenate(list(self.pieces(char_ids)))
