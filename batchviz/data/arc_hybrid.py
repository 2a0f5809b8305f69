"""The arc-hybrid transition system (Kuhlmann, Gomez-Rodriguez & Satta, 2011).

This is the system behind the BiLSTM dependency parser of Kiperwasser & Goldberg (2016)
("barchybrid" in their BIST code), one of the benchmarks of Neubig et al. (2017). A parser
state (:class:`Configuration`) has a *stack*, a *buffer* of words still to read and the
*arcs* built so far. Following BIST, the artificial ROOT (token 0) sits at the **end** of
the buffer rather than on the stack, so it collects its dependents last. Three moves:

* ``SHIFT``     move the first buffer word ``b0`` onto the stack (never ROOT);
* ``LEFT_ARC``  pop ``s0`` and attach it to ``b0`` (arc ``b0 -> s0``);
* ``RIGHT_ARC`` pop ``s0`` and attach it to ``s1``, the word below it (arc ``s1 -> s0``).

Each sentence of ``n`` words is parsed in exactly ``2n`` transitions. Every projective
tree (see :func:`batchviz.data.is_projective`) can be built, and :func:`oracle` tells
which transition builds the gold tree, which is how the parser is trained.
Tokens are numbered 1..n as in CoNLL-U, and 0 is ROOT.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SHIFT = "shift"
LEFT_ARC = "left_arc"
RIGHT_ARC = "right_arc"
TRANSITIONS = (SHIFT, LEFT_ARC, RIGHT_ARC)
ROOT = 0
EMPTY = -1  # feature_positions' marker for a stack/buffer slot that holds no word


@dataclass(frozen=True)
class Configuration:
    """An immutable parser state; :func:`apply` returns a new one.

    ``stack`` lists token ids bottom to top (``stack[-1]`` is ``s0``); ``buffer`` lists
    them front to back and always ends with ROOT; ``arcs`` holds ``(head, dependent,
    label)`` triples in the order they were built (``label`` is None when unlabeled).
    Immutability costs a little copying but lets a beam or a test keep old states around.
    """

    stack: tuple[int, ...]
    buffer: tuple[int, ...]
    arcs: tuple[tuple[int, int, str | None], ...] = ()

    @classmethod
    def initial(cls, n_words: int) -> "Configuration":
        """The start state for a sentence of ``n_words`` words: empty stack, all words + ROOT buffered."""
        if n_words < 1:
            raise ValueError(f"a sentence needs at least one word, got {n_words}")
        return cls(stack=(), buffer=tuple(range(1, n_words + 1)) + (ROOT,))

    @property
    def n_words(self) -> int:
        # every word is on the stack, in the buffer (besides ROOT) or attached by one arc
        return len(self.stack) + len(self.buffer) - 1 + len(self.arcs)

    def heads(self) -> list[int | None]:
        """Head of each word 1..n as built so far (``heads()[i-1]``), None if unattached."""
        result: list[int | None] = [None] * self.n_words
        for head, dep, _ in self.arcs:
            result[dep - 1] = head
        return result

    def labels(self) -> list[str | None]:
        """Arc label of each word 1..n as built so far, None if unattached or unlabeled."""
        result: list[str | None] = [None] * self.n_words
        for _, dep, label in self.arcs:
            result[dep - 1] = label
        return result


def legal_transitions(config: Configuration) -> list[str]:
    """The transitions allowed in ``config`` (in the order of :data:`TRANSITIONS`).

    ROOT may receive several dependents, as in BIST; a caller wanting exactly one root
    can forbid ``LEFT_ARC`` onto ROOT while the stack holds more than one word.
    """
    legal = []
    if len(config.buffer) > 1:  # a real word precedes ROOT
        legal.append(SHIFT)
    if config.stack:
        legal.append(LEFT_ARC)
    if len(config.stack) > 1:
        legal.append(RIGHT_ARC)
    return legal


def apply(config: Configuration, transition: str, label: str | None = None) -> Configuration:
    """Return the configuration after ``transition``; raises ``ValueError`` if it is illegal."""
    if transition not in legal_transitions(config):
        raise ValueError(
            f"{transition!r} is illegal with stack {list(config.stack)} and buffer {list(config.buffer)}"
        )
    stack, buffer = config.stack, config.buffer
    if transition == SHIFT:
        return Configuration(stack + buffer[:1], buffer[1:], config.arcs)
    s0 = stack[-1]
    head = buffer[0] if transition == LEFT_ARC else stack[-2]
    return Configuration(stack[:-1], buffer, config.arcs + ((head, s0, label),))


def is_final(config: Configuration) -> bool:
    """True once every word is attached: the stack is empty and only ROOT is buffered."""
    return not config.stack and config.buffer == (ROOT,)


def oracle(config: Configuration, gold_heads: Sequence[int]) -> str:
    """The static oracle: the transition that keeps ``config`` on the path to ``gold_heads``.

    ``gold_heads[i-1]`` is the gold head of word ``i`` (0 = ROOT). Reduce ``s0`` as soon
    as its gold head is at hand (``b0`` for LEFT_ARC, ``s1`` for RIGHT_ARC) *and* it has
    collected all its gold dependents, because a popped word can get no more children;
    otherwise SHIFT. Both arc transitions attach ``s0``, so the gold label for a labeled
    parser is ``gold_rels[s0 - 1]``. Raises ``ValueError`` when no transition can reach the
    gold tree, which on a fresh configuration means the tree is not projective.
    """
    if len(gold_heads) != config.n_words:
        raise ValueError(f"{len(gold_heads)} gold heads for a {config.n_words}-word configuration")
    if is_final(config):
        raise ValueError("the configuration is already final")
    if config.stack:
        s0 = config.stack[-1]
        attached = {dep for _, dep, _ in config.arcs}
        complete = all(dep in attached for dep, head in enumerate(gold_heads, start=1) if head == s0)
        if complete and gold_heads[s0 - 1] == config.buffer[0]:
            return LEFT_ARC
        if complete and len(config.stack) > 1 and gold_heads[s0 - 1] == config.stack[-2]:
            return RIGHT_ARC
    if len(config.buffer) > 1:
        return SHIFT
    raise ValueError("no transition reaches the gold tree (is it projective?)")


def oracle_sequence(gold_heads: Sequence[int]) -> list[str]:
    """The full gold transition sequence (length ``2n``) that builds ``gold_heads``."""
    return follow(gold_heads)[0]


def follow(gold_heads: Sequence[int], gold_rels: Sequence[str] | None = None) -> tuple[list[str], Configuration]:
    """Run the oracle from the initial state; return the transitions and the final state.

    With ``gold_rels`` the arcs of the final state carry the gold labels too.
    """
    config = Configuration.initial(len(gold_heads))
    transitions = []
    while not is_final(config):
        move = oracle(config, gold_heads)
        label = None if gold_rels is None or move == SHIFT else gold_rels[config.stack[-1] - 1]
        config = apply(config, move, label)
        transitions.append(move)
    return transitions, config


def feature_positions(config: Configuration, k: int = 3, buffer_k: int = 1) -> list[int]:
    """Token ids whose BiLSTM vectors feed the transition scorer: ``[s0, ..., s_{k-1}, b0, ..., b_{buffer_k-1}]``.

    BIST uses the top 3 stack words and the first buffer word (the defaults). A slot with
    no word (short stack, or past the end of the buffer) is :data:`EMPTY` (``-1``); a model
    substitutes a learned "empty" vector there. ROOT appears as ``0``, so running the
    BiLSTM over ``[ROOT, w1, ..., wn]`` makes token id ``i`` the row index of its vector.
    """
    stack = [config.stack[-1 - i] if i < len(config.stack) else EMPTY for i in range(k)]
    buffer = [config.buffer[i] if i < len(config.buffer) else EMPTY for i in range(buffer_k)]
    return stack + buffer
