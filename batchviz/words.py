"""Counts in words, ``1 node`` and ``3 nodes``: the reports, captions and pictures print
many counts, and small graphs (the ones students start with) have counts of one."""
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
