"""``batchviz`` on the command line.

``batchviz explain script.py [args...]`` runs a Python script and explains the last loss it
computed, naming the script's lines whose nodes were split into more batches than they
need (its graphs record their nodes' lines, :func:`batchviz.recording_sources`). With
``--json``, the script's own output goes to stderr and stdout is the JSON alone.
``batchviz demo`` explains the paper's Figure 1; ``--optimum`` adds the fewest batches
possible, solved exactly. Exit status: 0 on success, 1 when the script fails or computes
no loss, 2 for a usage error or a missing script, 141 (as a Unix tool killed by SIGPIPE)
when the reader of its output went away (``batchviz explain prog.py | head``).

Which words are batchviz's and which the script's: batchviz's options are recognised
anywhere before a ``--``, the rest after the script's path goes to the script
(:mod:`batchviz.cli_options`). Strategy names and the time limit are checked while the
command line is parsed, before the script runs.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import signal
import sys
import traceback

from .cli_options import EXPLAIN_USAGE_RULE, positive_seconds, split_script_words, strategy_names
from .errors import NoGraphError
from .examples import figure1
from .explain import explain
from .graph import current_graph, graph_scope
from .runtime import Graph, forget_asked, keeping_asked, last_asked
from .schedule import STRATEGIES
from .sourcelines import recording_sources


def _last_built_scalar():
    """The last scalar node of the current graph, for scripts that never ask for a value."""
    try:
        g = current_graph()
    except NoGraphError:
        return None
    for node in range(len(g.ops) - 1, -1, -1):
        if g.shapes[node] in ((), (1,)) and node not in g.param_of_node:
            return g.expression(node)
    return None


def _run_script(path: str, args: list):
    """Run ``path`` as ``__main__`` with ``args``; returns (loss or None, exit status)."""
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    status = 0
    try:
        # the script runs in an open graph, as a DyNet program runs in the graph DyNet
        # opens at import; a script that opens its own graphs uses those. Every graph
        # records its nodes' lines, so that the report can name the script's lines. The
        # loss to explain: the last one the script ran backward() from, else the last
        # scalar whose value it read, else the last value it read (runtime.last_asked)
        forget_asked()
        with recording_sources(), keeping_asked(), graph_scope(Graph()):
            try:
                runpy.run_path(path, run_name="__main__")
            except SystemExit as exit_:
                code = exit_.code
                status = code if isinstance(code, int) else (0 if code is None else 1)
            loss = last_asked()
            if loss is None:
                loss = _last_built_scalar()
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return loss, status


@contextlib.contextmanager
def _stdout_to_stderr():
    """What the script prints goes to stderr, so that stdout carries nothing but the report
    (``--json`` output stays parseable). Both Python's ``sys.stdout`` and file descriptor 1
    are redirected: the latter catches C extensions and subprocesses that write to it."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)


def _emit(explanation, options) -> None:
    if options.json:
        import json

        print(json.dumps(explanation.to_dict(), indent=2))
    else:
        print(explanation)
    if options.html:
        explanation.to_html(options.html)
        print(f"report written to {options.html}", file=sys.stderr)


def cmd_explain(options) -> int:
    path = options.script
    if not os.path.isfile(path):
        print(f"batchviz explain: no such script: {path}", file=sys.stderr)
        return 2
    quiet = _stdout_to_stderr() if options.json else contextlib.nullcontext()
    try:
        with quiet:
            loss, status = _run_script(path, options.args)
    except BrokenPipeError:  # the script's prints met a closed pipe: main ends quietly
        raise
    except Exception:  # the user's script failed: show its traceback, not ours
        traceback.print_exc()
        print(f"batchviz explain: {path} raised an exception (above); nothing to explain",
              file=sys.stderr)
        return 1
    if status != 0:
        print(f"batchviz explain: {path} exited with status {status}", file=sys.stderr)
        return status
    if loss is None:
        print(f"batchviz explain: {path} ran but built no scalar expression to explain "
              "(call .value() or .backward() on your loss)", file=sys.stderr)
        return 1
    _emit(explain(loss, strategies=options.strategies, optimum=_optimum(options)), options)
    return 0


def cmd_demo(options) -> int:
    graph, loss, _ = figure1("agenda", lengths=tuple(options.lengths))
    try:
        print(f"The paper's Figure 1: RNN regression over {len(options.lengths)} sequences of "
              f"lengths {', '.join(map(str, options.lengths))}, summed into one loss.\n")
        _emit(explain(loss, strategies=options.strategies, optimum=_optimum(options)), options)
    finally:
        graph.finish("when the demo ended")
    return 0


def _optimum(options):
    """explain's ``optimum``: the time limit with ``--optimum``, else None (free only)."""
    return options.optimum_seconds if options.optimum else None


def _common_options(p) -> list:
    """The options ``explain`` and ``demo`` share; returns their argparse actions (the
    command-line splitter reads which of them take a value)."""
    return [
        p.add_argument("--strategies", type=strategy_names(STRATEGIES),
                       default=["none", "depth", "agenda"], metavar="A,B,...",
                       help="strategies to compare, comma-separated, from: "
                            + ", ".join(STRATEGIES) + " (default: none,depth,agenda)"),
        p.add_argument("--html", metavar="FILE", help="also write the report as an HTML page"),
        p.add_argument("--json", action="store_true", help="print the numbers as JSON instead"),
        p.add_argument("--optimum", action="store_true",
                       help="solve for the fewest batches exactly (OR-Tools); without it, the "
                            "optimum is shown only where a strategy meets the lower bound"),
        p.add_argument("--optimum-seconds", type=positive_seconds, default=10.0, metavar="S",
                       help="the solver's time limit with --optimum, in seconds > 0 "
                            "(default 10)"),
    ]


def _explain_option_table() -> dict:
    """``{option string: takes a value}`` for every option of ``batchviz explain``."""
    table = {"-h": False, "--help": False}
    for action in _common_options(argparse.ArgumentParser(add_help=False)):
        for option in action.option_strings:
            table[option] = action.nargs != 0
    return table


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="batchviz", description="On-the-fly operation batching, made visible.",
        allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    # allow_abbrev=False: a script's --opt must not be taken for batchviz's --optimum
    p = sub.add_parser("explain", help="run a script and explain the last loss it computed",
                       description="Run a Python script and explain the last loss it "
                                   "computed. " + EXPLAIN_USAGE_RULE + ".",
                       allow_abbrev=False)
    p.add_argument("script", help="path of a Python script")
    p.add_argument("args", nargs="*", metavar="ARG",
                   help="arguments passed to the script (all words after '--' are)")
    _common_options(p)
    p.set_defaults(run=cmd_explain)
    p = sub.add_parser("demo", help="explain the paper's Figure 1 example", allow_abbrev=False)
    p.add_argument("--lengths", nargs="+", type=int, default=[2, 3, 4], metavar="N",
                   help="sequence lengths (default: 2 3 4)")
    _common_options(p)
    p.set_defaults(run=cmd_demo)
    return parser


def parse_command_line(argv) -> argparse.Namespace:
    """The options of ``argv``; for ``explain``, batchviz's options wherever they stand
    before a ``--`` and the script's words in ``options.args`` (see cli_options)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0] != "explain":
        return parser.parse_args(argv)
    ours, script, script_args = split_script_words(argv[1:], _explain_option_table())
    options = parser.parse_args(["explain", *ours] + (["--", script] if script else []))
    options.args = script_args
    return options


def _quiet_broken_pipe() -> int:
    """The reader of stdout went away (``| head``): stop without a traceback, as Unix tools
    do, and keep Python's last flush of stdout at exit from complaining about it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # a stdout without a file descriptor
        pass
    finally:
        os.close(devnull)
    return 128 + int(getattr(signal, "SIGPIPE", 13))


def main(argv=None) -> int:
    options = parse_command_line(argv)
    try:
        code = options.run(options)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except (ValueError, TypeError) as error:  # e.g. a bad argument to explain
        print(f"batchviz {options.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
