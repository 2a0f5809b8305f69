"""CoNLL-style sequence-tagging files (e.g. CoNLL-2003 or WikiNER) and word vocabularies.

The tagging benchmarks of Neubig et al. (2017) train a BiLSTM tagger on named-entity data.
Such files put one token per line with whitespace-separated columns; we only need the
word (first column) and the tag (last column), so the middle columns (POS, chunk, ...) are
ignored. A blank line ends a sentence and ``-DOCSTART-`` lines mark document boundaries,
which carry no tokens and are skipped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ._source import DataFormatError, Source, read_source

UNK = "<unk>"


@dataclass
class TaggedSentence:
    """One sentence: ``words[i]`` carries tag ``tags[i]`` (the two lists have equal length)."""

    words: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.words) != len(self.tags):
            raise ValueError(f"{len(self.words)} words but {len(self.tags)} tags")

    def __len__(self) -> int:
        return len(self.words)


def read_conll(path_or_lines: Source) -> list[TaggedSentence]:
    """Read a CoNLL-style tagging file into a list of :class:`TaggedSentence`.

    Every token line must have at least two columns (a word and a tag), and all token lines
    must have the same number of columns as the first one: a line with a different count
    usually means a tab/space mix-up or a truncated file, and silently taking its "last
    column" as the tag would give wrong training data. Such lines raise
    :class:`~batchviz.data.DataFormatError` (a ``ValueError``) naming ``file:line``.
    Empty sentences (e.g. the blank line after ``-DOCSTART-``) are not returned.
    """
    name, lines = read_source(path_or_lines)
    sentences: list[TaggedSentence] = []
    words: list[str] = []
    tags: list[str] = []
    n_columns: int | None = None  # column count fixed by the first token line
    first_line = 0

    def flush() -> None:
        if words:
            sentences.append(TaggedSentence(list(words), list(tags)))
            words.clear()
            tags.clear()

    for lineno, line in enumerate(lines, start=1):
        columns = line.split()
        if not columns:
            flush()
            continue
        if columns[0] == "-DOCSTART-":
            flush()
            continue
        if len(columns) < 2:
            raise DataFormatError(name, lineno, f"expected a word and a tag, found one column {line.strip()!r}")
        if n_columns is None:
            n_columns, first_line = len(columns), lineno
        elif len(columns) != n_columns:
            raise DataFormatError(
                name, lineno,
                f"found {len(columns)} columns but line {first_line} has {n_columns}",
            )
        words.append(columns[0])
        tags.append(columns[-1])
    flush()
    return sentences


class Vocab:
    """A bijection between strings and integer ids, with an optional unknown-word entry.

    Models index embedding tables by id, so every word must map to an id, including words
    never seen in training: those map to ``unk`` (id 0) when the vocabulary has one. Tag
    sets are built with ``unk=None``, because an unknown *tag* is a bug, not a rare event,
    and :meth:`index` then raises ``KeyError`` instead of hiding it.

    Ids are assigned by descending frequency (ties broken alphabetically) so that the same
    counts always give the same ids, whatever order the corpus was read in.
    """

    def __init__(self, words: Iterable[str], unk: str | None = UNK):
        self.unk = unk
        self._words: list[str] = [unk] if unk is not None else []
        self._ids: dict[str, int] = {unk: 0} if unk is not None else {}
        for word in words:
            if word == unk:
                continue  # already at id 0
            if word in self._ids:
                raise ValueError(f"duplicate word {word!r} in vocabulary")
            self._ids[word] = len(self._words)
            self._words.append(word)

    @classmethod
    def from_counts(cls, counts: Mapping[str, int], min_count: int = 1, unk: str | None = UNK) -> "Vocab":
        """Keep words seen at least ``min_count`` times; rarer words will map to ``unk``.

        Neubig et al. (2017) use ``min_count=5`` for the tagger whose rare words are
        spelled out by a character BiLSTM instead of getting their own embedding.
        """
        if min_count < 1:
            raise ValueError(f"min_count must be >= 1, got {min_count}")
        if min_count > 1 and unk is None:
            raise ValueError("min_count > 1 drops words, which needs an unk entry to map them to")
        kept = [w for w, c in counts.items() if c >= min_count]
        kept.sort(key=lambda w: (-counts[w], w))
        return cls(kept, unk=unk)

    @classmethod
    def from_corpus(cls, sequences: Iterable[Iterable[str]], min_count: int = 1, unk: str | None = UNK) -> "Vocab":
        """Count the tokens of ``sequences`` (e.g. ``[s.words for s in sentences]``), then :meth:`from_counts`."""
        counts: Counter[str] = Counter()
        for seq in sequences:
            counts.update(seq)
        return cls.from_counts(counts, min_count=min_count, unk=unk)

    def index(self, word: str) -> int:
        """Id of ``word``; the unk id for unseen words, or ``KeyError`` if there is no unk."""
        found = self._ids.get(word)
        if found is not None:
            return found
        if self.unk is None:
            raise KeyError(f"{word!r} is not in the vocabulary (and it has no unk entry)")
        return 0

    def indices(self, words: Iterable[str]) -> list[int]:
        """:meth:`index` applied to every word."""
        return [self.index(w) for w in words]

    def word(self, index: int) -> str:
        """The string with id ``index``."""
        return self._words[index]

    @property
    def words(self) -> list[str]:
        """All entries in id order (a copy, so callers cannot corrupt the mapping)."""
        return list(self._words)

    def __len__(self) -> int:
        return len(self._words)

    def __contains__(self, word: object) -> bool:
        return word in self._ids

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocab) and (self.unk, self._words) == (other.unk, other._words)

    def __repr__(self) -> str:
        return f"Vocab({len(self)} entries, unk={self.unk!r})"

    def to_dict(self) -> dict:
        """A JSON-friendly dict; ``Vocab.from_dict(v.to_dict()) == v``."""
        return {"unk": self.unk, "words": list(self._words)}

    @classmethod
    def from_dict(cls, data: Mapping) -> "Vocab":
        """Inverse of :meth:`to_dict`."""
        unk = data["unk"]
        words = list(data["words"])
        if unk is not None and (not words or words[0] != unk):
            raise ValueError(f"saved vocabulary must start with its unk entry {unk!r}")
        return cls(words, unk=unk)
