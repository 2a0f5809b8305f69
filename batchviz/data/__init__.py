"""Data for the benchmark tasks of Neubig et al. (2017), in plain Python and NumPy.

Loaders for the real corpora (CoNLL tagging files, CoNLL-U treebanks, bracketed SST/PTB
trees), seeded generators of synthetic look-alikes so the benchmarks run without any
download, and the arc-hybrid transition system used by the dependency-parser benchmark.
Nothing here depends on the rest of ``batchviz``: models receive plain lists of strings
and ints and decide themselves how to turn them into tensors.

Every loader takes a path or a list of lines and reports malformed input with a
:class:`DataFormatError` (a ``ValueError``) whose message starts ``file:line:``.
"""

from ._source import DataFormatError
from .arc_hybrid import (
    EMPTY,
    LEFT_ARC,
    RIGHT_ARC,
    SHIFT,
    TRANSITIONS,
    Configuration,
    apply,
    feature_positions,
    follow,
    is_final,
    legal_transitions,
    oracle,
    oracle_sequence,
)
from .conll import UNK, TaggedSentence, Vocab, read_conll
from .conllu import DepSentence, find_cycle, is_projective, read_conllu
from .ptb import Tree, read_trees
from .synthetic import (
    RELATIONS,
    UPOS,
    combine_sentiment,
    leaf_sentiment,
    relation_rule,
    spell_word,
    synthetic_dependencies,
    synthetic_tagging,
    synthetic_trees,
    tag_rule,
)

__all__ = [
    "DataFormatError",
    # CoNLL tagging
    "TaggedSentence", "Vocab", "UNK", "read_conll",
    # CoNLL-U dependencies
    "DepSentence", "read_conllu", "is_projective", "find_cycle",
    # bracketed trees
    "Tree", "read_trees",
    # synthetic data
    "synthetic_tagging", "synthetic_trees", "synthetic_dependencies",
    "spell_word", "tag_rule", "leaf_sentiment", "combine_sentiment", "relation_rule",
    "UPOS", "RELATIONS",
    # arc-hybrid parsing
    "Configuration", "SHIFT", "LEFT_ARC", "RIGHT_ARC", "TRANSITIONS", "EMPTY",
    "legal_transitions", "apply", "is_final", "oracle", "oracle_sequence", "follow",
    "feature_positions",
]
