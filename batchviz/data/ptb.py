"""Bracketed trees in Penn Treebank style, as used by the Stanford Sentiment Treebank (SST).

The TreeLSTM benchmark of Neubig et al. (2017) runs over SST, whose lines look like
``(3 (2 It) (4 (2 's) (3 good)))``: every node is ``(label child child ...)`` and a leaf is
``(label word)``. SST labels are sentiment classes 0..4, so numeric labels become ``int``;
PTB labels such as ``NP`` stay strings.

A TreeLSTM computes a node only after its children, which is why :meth:`Tree.nodes`
returns nodes in post-order: that list is a valid evaluation order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ._source import DataFormatError, Source, read_source

_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_INT = re.compile(r"-?\d+")


@dataclass
class Tree:
    """A tree node. Leaves have a ``word`` and no ``children``; inner nodes the reverse."""

    label: int | str
    children: list["Tree"] = field(default_factory=list)
    word: str | None = None

    def __post_init__(self) -> None:
        if (self.word is None) == (not self.children):
            raise ValueError("a Tree node needs either a word (leaf) or children, not both or neither")

    @property
    def is_leaf(self) -> bool:
        return self.word is not None

    def nodes(self) -> list["Tree"]:
        """All nodes in post-order: children before parents, left subtree before right.

        Iterative, so very deep trees (long right-branching sentences) cannot hit Python's
        recursion limit.
        """
        order: list[Tree] = []
        stack: list[tuple[Tree, bool]] = [(self, False)]
        while stack:
            node, children_done = stack.pop()
            if children_done or node.is_leaf:
                order.append(node)
                continue
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children))
        return order

    def leaves(self) -> list["Tree"]:
        """Leaf nodes from left to right: their ``word`` attributes spell the sentence."""
        return [node for node in self.nodes() if node.is_leaf]

    def words(self) -> list[str]:
        """The sentence: the leaves' words from left to right."""
        return [leaf.word for leaf in self.leaves()]  # type: ignore[misc]

    def is_binary(self) -> bool:
        """True if every inner node has exactly two children (what a binary TreeLSTM needs)."""
        return all(node.is_leaf or len(node.children) == 2 for node in self.nodes())

    def binarize(self) -> "Tree":
        """Return a strictly binary copy; this tree is left unchanged.

        A node with children ``a b c d`` becomes ``(L a (L b (L c d)))``: right-factored,
        with the original label ``L`` copied onto the new intermediate nodes. A unary inner
        node (one child, e.g. PTB ``(NP (NNP John))``) is replaced by its binarized child,
        whose label wins, since a binary cell cannot consume a single input.
        """
        if self.is_leaf:
            return Tree(self.label, word=self.word)
        kids = [child.binarize() for child in self.children]
        if len(kids) == 1:
            return kids[0]
        node = Tree(self.label, kids[-2:])
        for kid in reversed(kids[:-2]):
            node = Tree(self.label, [kid, node])
        return node

    def to_bracket(self) -> str:
        """The bracketed string; ``read_trees([t.to_bracket()])[0] == t``."""
        label = str(self.label)
        if self.is_leaf:
            return f"({label} {self.word})"
        inner = " ".join(child.to_bracket() for child in self.children)
        return f"({label} {inner})" if label else f"( {inner})"

    def __str__(self) -> str:
        return self.to_bracket()


class _Open:
    """A node whose ``)`` has not been read yet, with where its ``(`` was for error messages."""

    def __init__(self, line: int, column: int):
        self.line, self.column = line, column
        self.label: int | str | None = None
        self.children: list[Tree] = []
        self.words: list[str] = []


def _label(text: str) -> int | str:
    return int(text) if _INT.fullmatch(text) else text


def read_trees(path_or_lines: Source) -> list[Tree]:
    """Parse every bracketed tree in the input (one per line, or spread over several lines).

    Errors raise :class:`~batchviz.data.DataFormatError` (a ``ValueError``) with
    ``file:line:column``: a ``)`` with no matching ``(``, a ``(`` never closed (pointing
    at that ``(``), text outside any brackets, or a node mixing a word with subtrees.
    A PTB-style outer bracket without a label, ``( (S ...))``, gives a root labelled ``""``.
    """
    name, lines = read_source(path_or_lines)
    trees: list[Tree] = []
    stack: list[_Open] = []
    for lineno, line in enumerate(lines, start=1):
        for match in _TOKEN.finditer(line):
            token, column = match.group(), match.start() + 1
            if token == "(":
                if stack and stack[-1].label is None:
                    stack[-1].label = ""  # "( (S ...))": the outer node has no label
                stack.append(_Open(lineno, column))
            elif token == ")":
                if not stack:
                    raise DataFormatError(name, lineno, "unbalanced ')' with no matching '('", column)
                tree = _close(name, stack.pop())
                if stack:
                    stack[-1].children.append(tree)
                else:
                    trees.append(tree)
            elif not stack:
                raise DataFormatError(name, lineno, f"text {token!r} outside any brackets", column)
            elif stack[-1].label is None:
                stack[-1].label = _label(token)
            else:
                stack[-1].words.append(token)
    if stack:  # point at the outermost open bracket: the tree that never ended
        outer, inner = stack[0], stack[-1]
        raise DataFormatError(
            name, outer.line,
            f"unbalanced '(' never closed; {len(stack)} bracket(s) still open at end of input,"
            f" innermost at line {inner.line} column {inner.column}",
            outer.column,
        )
    return trees


def _close(name: str, node: _Open) -> Tree:
    """Turn a finished bracket into a leaf or an inner :class:`Tree`, checking its shape."""
    where = (name, node.line)
    if node.label is None:
        raise DataFormatError(*where, "empty brackets '()'", node.column)
    if node.words and node.children:
        raise DataFormatError(*where, f"node {node.label!r} mixes words {node.words} with subtrees", node.column)
    if len(node.words) > 1:
        raise DataFormatError(*where, f"leaf {node.label!r} has {len(node.words)} words {node.words}, expected one", node.column)
    if node.words:
        return Tree(node.label, word=node.words[0])
    if not node.children:
        raise DataFormatError(*where, f"node {node.label!r} has neither a word nor children", node.column)
    return Tree(node.label, node.children)
