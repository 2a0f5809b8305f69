"""How ``batchviz explain``'s command line is divided between batchviz and the script, and
the checks made on batchviz's options *before* the script runs.

The rule (also in ``batchviz explain --help``): batchviz's own options (``--json``,
``--html``, ``--strategies``, ``--optimum``, ``--optimum-seconds``, ``-h``) are recognised
anywhere before a ``--``, before or after the script's path; every other word after the
script's path, and every word after ``--``, goes to the script. So
``batchviz explain prog.py --json --steps 1`` explains with JSON and runs
``prog.py --steps 1``, and a script that has its own ``--json`` gets it with
``batchviz explain prog.py -- --json``.

Why not argparse's ``REMAINDER``: it gives the script every word after its path, so
``batchviz explain prog.py --json`` ran the script with ``--json`` and printed text — a
silent wrong answer. And why check early: a misspelt strategy or a negative time limit
found after a long script has run wastes the run.
"""
from __future__ import annotations

import argparse
import difflib
import math

SCRIPT_SEPARATOR = "--"

EXPLAIN_USAGE_RULE = (
    "batchviz's own options are recognised anywhere before a '--', before or after the "
    "script; every other word after the script, and everything after '--', goes to the "
    "script (batchviz explain prog.py --json -- --its-own-json-flag)")


def split_script_words(words: list, options: dict) -> tuple:
    """``(batchviz_words, script, script_args)`` from the words after ``explain``.

    ``options`` maps each of batchviz's option strings to whether it takes a value. An
    unknown option *before* the script stays with batchviz (argparse then reports it as a
    usage error); after the script it is the script's. ``--name=value`` is recognised as
    ``--name value``. ``script`` is None when no path was given."""
    ours, theirs, script = [], [], None
    i = 0
    while i < len(words):
        word = words[i]
        if word == SCRIPT_SEPARATOR:
            rest = words[i + 1:]
            if script is None and rest:
                script, rest = rest[0], rest[1:]
            theirs.extend(rest)
            break
        name = word.split("=", 1)[0]
        if name in options:
            ours.append(word)
            takes_value = options[name] and "=" not in word
            if takes_value and i + 1 < len(words):
                ours.append(words[i + 1])
                i += 1
        elif script is None and not word.startswith("-"):
            script = word
        elif script is None:
            ours.append(word)  # argparse says it is unknown
        else:
            theirs.append(word)
        i += 1
    return ours, script, theirs


def strategy_names(known):
    """The parser of ``--strategies``' value: names separated by commas, each one of
    ``known`` (the registered strategies, read when the value is parsed). A misspelt name is
    refused with every known name and the closest one, while the command line is parsed:
    before the script runs. (argparse shows an ``ArgumentTypeError``'s message as it is.)"""
    def parse(text: str) -> list:
        names = [name.strip() for name in text.split(",") if name.strip()]
        if not names:
            raise argparse.ArgumentTypeError(
                f"no strategy named in {text!r}; name one or more, e.g. depth,agenda")
        valid = list(known)
        for name in names:
            if name not in valid:
                close = difflib.get_close_matches(name, valid, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise argparse.ArgumentTypeError(
                    f"unknown strategy {name!r}{hint}; known strategies: {', '.join(valid)}")
        return names
    return parse


def positive_seconds(text: str) -> float:
    """The parser of ``--optimum-seconds``' value: a finite number of seconds above 0 (the
    solver's time limit; 0 or less would give it no time at all)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds, got {text!r}") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise argparse.ArgumentTypeError(
            f"the solver's time limit must be a number of seconds greater than 0, got {text!r}")
    return seconds
