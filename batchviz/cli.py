"""``batchviz`` on the command line.

``batchviz explain script.py [args...]`` runs a Python script and explains the last loss it
computed, naming the script's lines whose nodes were split into more batches than they
need (its graphs record their nodes' lines, :func:`batchviz.recording_sources`). With
``--json``, the script's own output goes to stderr and stdout is the JSON alone.
``batchviz demo`` explains the paper's Figure 1; ``--optimum`` adds the fewest batches
possible, solved exactly. Exit status: 0 on success, 1 when the script fails or computes
no loss, 2 for a usage error or a missing script.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import sys
import traceback

from .errors import NoGraphError
from .examples import figure1
from .explain import explain
from .graph import current_graph, graph_scope
from .runtime import Graph, forget_asked, keeping_asked, last_asked
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="batchviz", description="On-the-fly operation batching, made visible.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def common(p):
        p.add_argument("--strategies", type=lambda text: text.split(","),
                       default=["none", "depth", "agenda"], metavar="A,B,...",
                       help="strategies to compare, comma-separated (default: none,depth,agenda)")
        p.add_argument("--html", metavar="FILE", help="also write the report as an HTML page")
        p.add_argument("--json", action="store_true", help="print the numbers as JSON instead")
        p.add_argument("--optimum", action="store_true",
                       help="solve for the fewest batches exactly (OR-Tools); without it, the "
                            "optimum is shown only where a strategy meets the lower bound")
        p.add_argument("--optimum-seconds", type=float, default=10.0, metavar="S",
                       help="the solver's time limit with --optimum (default 10)")

    p = sub.add_parser("explain", help="run a script and explain the last loss it computed")
    p.add_argument("script", help="path of a Python script")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    common(p)
    p.set_defaults(run=cmd_explain)
    p = sub.add_parser("demo", help="explain the paper's Figure 1 example")
    p.add_argument("--lengths", nargs="+", type=int, default=[2, 3, 4], metavar="N",
                   help="sequence lengths (default: 2 3 4)")
    common(p)
    p.set_defaults(run=cmd_demo)
    return parser


def main(argv=None) -> int:
    options = build_parser().parse_args(argv)
    try:
        return options.run(options)
    except (ValueError, TypeError) as error:  # e.g. an unknown strategy name
        print(f"batchviz {options.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
