"""Counts in words, ``1 node`` and ``3 nodes``: the reports, captions and pictures print
many counts, and small graphs (the ones students start with) have counts of one. And the
few other ways text is put the same everywhere: a step's name, words wrapped in lines."""
from __future__ import annotations


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: ``1 batch``, ``2 batches``."""
    if n == 1:
        return f"{n} {noun}"
    if noun.endswith(("s", "ch", "sh", "x")):
        return f"{n} {noun}es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{n} {noun[:-1]}ies"
    return f"{n} {noun}s"


def bytes_text(n: int) -> str:
    """A byte count in the unit that fits: ``512 B``, ``3.4 KiB``, ``55.0 MiB``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def step_label(step: int, n_steps: int) -> str:
    """``step 12/29``: the one way every label, caption and title names a moment of a
    schedule of ``n_steps`` batches. Steps count from 0 like ``trace.steps``: at step ``k``,
    ``k`` batches have run and batch ``k`` runs next; step ``n_steps`` is the end."""
    return f"step {step}/{n_steps}"


def wrap_words(text: str, width: int) -> list:
    """``text`` in lines of at most ``width`` characters, broken between words."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return lines + ([line] if line else [])
