"""What to say, once, when Graphviz's ``dot`` program is not installed."""
from __future__ import annotations

import warnings

DOT_MISSING = (
    "Graphviz's `dot` program was not found on PATH, so batchviz drew a simpler picture "
    "itself (layers by depth, no edge routing). For the real layout install Graphviz: "
    "`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS), "
    "`conda install -c conda-forge graphviz` (conda), or see https://graphviz.org/download/."
)


class DotMissingWarning(UserWarning):
    """Graphviz's ``dot`` is missing; a pure-Python drawing was used instead."""


def warn_dot_missing() -> None:
    warnings.warn(DOT_MISSING, DotMissingWarning, stacklevel=3)
