"""Universal Dependencies CoNLL-U files, the input of the BiLSTM dependency-parser benchmark.

A CoNLL-U sentence is a block of tab-separated 10-column token lines ended by a blank line:
``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC``. Besides ordinary tokens the format
has lines a parser never sees: ``#`` comments, multiword-token ranges (``1-2  don't``)
that only record the surface spelling, and empty nodes (``1.1``) of enhanced
dependencies. We skip those and keep the basic tree: words, UPOS tags, heads and labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence

from ._source import DataFormatError, Source, read_source

ROOT = 0  # the HEAD value of the sentence's root token(s)


@dataclass
class DepSentence:
    """A dependency-annotated sentence.

    Token ``i`` (1-based, as in the file) is ``words[i-1]``; its head is ``heads[i-1]``, a
    token number, or 0 for the artificial root. ``rels[i-1]`` labels that arc.
    """

    words: list[str] = field(default_factory=list)
    pos: list[str] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    rels: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.words)
        if not (len(self.pos) == len(self.heads) == len(self.rels) == n):
            raise ValueError("words, pos, heads and rels must have the same length")

    def __len__(self) -> int:
        return len(self.words)


def find_cycle(heads: Sequence[int]) -> list[int] | None:
    """Return the token numbers of one cycle in ``heads`` (e.g. ``[2, 3]``), or None.

    Follows head pointers from every token; a walk that reaches the root is fine, a walk
    that comes back to a token of the current walk has found a cycle. Tokens already known
    to reach the root are marked so the whole check is linear.
    """
    state = [0] * (len(heads) + 1)  # 0 unvisited, 1 on current walk, 2 reaches root
    state[ROOT] = 2
    for start in range(1, len(heads) + 1):
        walk = []
        node = start
        while state[node] == 0:
            state[node] = 1
            walk.append(node)
            node = heads[node - 1]
        if state[node] == 1:  # came back to the current walk
            return walk[walk.index(node):]
        for visited in walk:
            state[visited] = 2
    return None


def is_projective(heads: Sequence[int]) -> bool:
    """True when no two arcs cross, i.e. every subtree covers a contiguous span of words.

    Equivalently: for every arc ``h -> d``, every token strictly between ``h`` and ``d``
    is a descendant of ``h``. Arcs from the root (0) never break this in a tree, because
    every token descends from the root. ``heads`` must be a tree (see :func:`find_cycle`).
    Transition parsers such as arc-hybrid can only build projective trees, so their static
    oracle needs this property.
    """
    if find_cycle(heads) is not None:
        raise ValueError(f"heads {list(heads)} contain a cycle, so they are not a tree")
    n = len(heads)
    for dep in range(1, n + 1):
        head = heads[dep - 1]
        if head == ROOT:
            continue
        for between in range(min(head, dep) + 1, max(head, dep)):
            node = between
            while node not in (ROOT, head):  # climb until we meet head or the root
                node = heads[node - 1]
            if node != head:
                return False
    return True


def read_conllu(path_or_lines: Source) -> list[DepSentence]:
    """Read a CoNLL-U file into :class:`DepSentence` objects (basic dependencies only).

    Checks that token lines have 10 tab-separated columns, IDs run 1, 2, 3, ... within a
    sentence, every HEAD is a number between 0 and the sentence length, and heads contain
    no cycle. Violations raise :class:`~batchviz.data.DataFormatError` (a ``ValueError``)
    naming ``file:line``: the offending token line, or for a cycle the line of the first
    token in the cycle, together with the line where the sentence starts.
    """
    name, lines = read_source(path_or_lines)
    sentences: list[DepSentence] = []
    rows: list[tuple[int, list[str]]] = []  # (line number, columns) of the current sentence

    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            if rows:
                sentences.append(_build_sentence(name, rows))
                rows = []
            continue
        if line.startswith("#"):
            continue
        columns = line.split("\t")
        if len(columns) != 10:
            raise DataFormatError(name, lineno, f"expected 10 tab-separated columns, found {len(columns)}")
        token_id = columns[0]
        if "-" in token_id or "." in token_id:
            continue  # multiword range or empty node: not part of the basic tree
        rows.append((lineno, columns))
    if rows:
        sentences.append(_build_sentence(name, rows))
    return sentences


def _build_sentence(name: str, rows: list[tuple[int, list[str]]]) -> DepSentence:
    """Validate one sentence's token rows and turn them into a :class:`DepSentence`."""
    n = len(rows)
    start = rows[0][0]
    sentence = DepSentence()
    for expected, (lineno, cols) in enumerate(rows, start=1):
        if cols[0] != str(expected):
            raise DataFormatError(name, lineno, f"token ID {cols[0]!r} should be {expected} (IDs must count 1, 2, 3, ...)")
        try:
            head = int(cols[6])
        except ValueError:
            raise DataFormatError(name, lineno, f"HEAD {cols[6]!r} is not a number") from None
        if not 0 <= head <= n:
            raise DataFormatError(
                name, lineno,
                f"HEAD {head} out of range 0..{n} for the sentence starting at line {start}",
            )
        sentence.words.append(cols[1])
        sentence.pos.append(cols[3])
        sentence.heads.append(head)
        sentence.rels.append(cols[7])
    cycle = find_cycle(sentence.heads)
    if cycle is not None:
        path = " -> ".join(str(t) for t in cycle + cycle[:1])
        raise DataFormatError(
            name, rows[min(cycle) - 1][0],
            f"heads of the sentence starting at line {start} form a cycle {path}",
        )
    return sentence
