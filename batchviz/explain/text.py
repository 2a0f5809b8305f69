"""The terminal report: the same sections as plain aligned text or as ``rich`` tables.

The report is built once as neutral pieces (lines and tables); :func:`render_text` prints
them with ``rich`` when colour is wanted and available, or aligns them by hand otherwise,
so ``str(explanation)`` stays plain, diffable text in files, pipes and doctests.
"""
from __future__ import annotations

import io
import os
import shutil
import sys

from ..words import bytes_text, counted, step_label
from .sources import split_lines

#: said where the lines of the user's code would explain something, but were not recorded
NO_LINES = ("the lines of your code that split these batches were not recorded: build the "
            "graph as bv.Graph(record_source=True) or inside `with bv.recording_sources():`, "
            "or run your script with `batchviz explain script.py`")


def seconds_text(s: float) -> str:
    if s < 1e-5:
        return f"{s * 1e6:.2g} \u00b5s"
    if s < 1e-3:
        return f"{s * 1e6:.0f} \u00b5s"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def header_lines(e) -> list:
    lines = [f"batchviz explain: {counted(e.nodes, 'node')} in {counted(e.signatures, 'signature')} "
             f"(+{counted(e.parameters, 'parameter')}, done from the start)",
             f"lower bound: {counted(e.lower_bound, 'batch')} (per signature its longest dependency "
             "chain, summed over signatures)"]
    if e.optimum is not None:
        lines.append(e.optimum.summary())
    elif e.optimum_note:
        lines.append(f"optimum: {e.optimum_note}")
    return lines


def strategy_table(e) -> tuple:
    """(header, rows, best column per row): the strategies side by side."""
    names = list(e.strategies)
    r = [e.strategies[n] for n in names]
    rows = [
        ("batches", [x.batches for x in r], [str(x.batches) for x in r]),
        ("kernel launches", [x.kernels for x in r], [str(x.kernels) for x in r]),
        ("copies made", [x.copies for x in r], [str(x.copies) for x in r]),
        ("copies avoided (views)", [-x.copies_avoided for x in r], [str(x.copies_avoided) for x in r]),
        ("bytes copied", [x.bytes_copied for x in r], [bytes_text(x.bytes_copied) for x in r]),
        ("time (estimate)", [x.estimated_seconds for x in r], [seconds_text(x.estimated_seconds) for x in r]),
        ("above lower bound", [x.above_lower_bound for x in r], [f"+{x.above_lower_bound}" for x in r]),
    ]
    optimum = e.optimum
    if optimum is not None and optimum.proven and optimum.count > e.lower_bound:
        rows.append(("above optimum", [x.batches for x in r],
                     [f"+{x.batches - optimum.count}" for x in r]))
    heads = [f"{n} (as it ran)" if x.ran else n for n, x in zip(names, r)]
    return ["", *heads], [(label, cells, values.index(min(values))) for label, values, cells in rows]


def signature_table(e) -> tuple:
    names = list(e.strategies)
    header = ["signature", "nodes", "depths", "chain", *names]
    rows = []
    for s in e.rows:
        depths = str(s.min_depth) if s.min_depth == s.max_depth else f"{s.min_depth}\u2013{s.max_depth}"
        rows.append([s.display_name or s.name, str(s.nodes), depths, str(s.chain_bound),
                     *[str(s.batches[n]) for n in names]])
    return header, rows


def note_lines(e) -> list:
    lines = []
    if e.more_signatures:
        lines.append(f"... and {counted(e.more_signatures, 'more signature')} with "
                     f"{counted(e.more_signature_nodes, 'node')}")
    if e.largest:
        total = e.strategies[e.reference].batches
        lines.append(f"largest batches ({e.reference}): " + ", ".join(
            f"{b.size} \u00d7 {b.name} ({step_label(b.step, total)})" for b in e.largest))
    if e.small:
        lines.append(f"signatures left in small batches ({e.reference}):")
        for s in e.small:
            lines.append(f"  - {s.name}: {s.nodes} nodes in {s.batches} batches; {s.reason}")
        if e.more_small:
            lines.append(f"  ... and {e.more_small} more")
    lines += split_lines(e)
    if not e.sources_recorded and any(r.above_lower_bound > 0 for n, r in e.strategies.items()
                                      if n != "none"):
        lines.append(NO_LINES)
    if e.unbatchable:
        verb = "belongs" if e.unbatchable == 1 else "belong"
        lines.append(f"{counted(e.unbatchable, 'node')} {verb} to unbatchable ops (one batch each)")
    lines.append(f"time is an estimate: {seconds_text(e.launch_seconds)} per kernel launch + "
                 f"{e.flops_per_second / 1e9:.1f} GFLOP/s, calibrated once on this machine "
                 "with NumPy")
    return lines


def wants_color(stream=None) -> bool:
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def render_text(e, color: bool | None = None, width: int | None = None) -> str:
    if color is None:
        color = wants_color()
    if color:
        try:
            return _render_rich(e, width)
        except ImportError:
            pass
    return _render_plain(e)


def _align(header: list, rows: list, left_columns: int = 1) -> list:
    widths = [max(len(str(row[k])) for row in [header] + rows) for k in range(len(header))]

    def fmt(row):
        cells = [str(c).ljust(w) if k < left_columns else str(c).rjust(w)
                 for k, (c, w) in enumerate(zip(row, widths))]
        return "  ".join(cells).rstrip()

    return [fmt(header)] + [fmt(r) for r in rows]


def _render_plain(e) -> str:
    out = header_lines(e) + [""]
    header, rows = strategy_table(e)
    out += _align(header, [[label, *cells] for label, cells, _ in rows]) + [""]
    header, rows = signature_table(e)
    out += _align(header, rows) + [""]
    out += note_lines(e)
    out.append(f"verdict: {e.verdict}")
    return "\n".join(out)


def _render_rich(e, width) -> str:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, highlight=False,
                      width=width or shutil.get_terminal_size((100, 24)).columns)
    first, *rest = header_lines(e)
    console.print(Text(first, style="bold"))
    for line in rest:
        console.print(line)
    header, rows = strategy_table(e)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("")
    for name in header[1:]:
        table.add_column(name, justify="right",
                         style="bold" if name.split(" (")[0] == e.reference else None)
    for label, cells, best in rows:
        table.add_row(label, *[Text(c, style="green") if k == best else c for k, c in enumerate(cells)])
    console.print(table)
    header, rows = signature_table(e)
    sigs = Table(box=box.SIMPLE_HEAD, show_edge=False)
    for k, name in enumerate(header):
        sigs.add_column(name, justify="left" if k == 0 else "right")
    for r in rows:
        sigs.add_row(*r)
    console.print(sigs)
    for line in note_lines(e):
        console.print(line, style="dim" if line.startswith("time is") else None)
    console.print(Text("verdict: ", style="bold") + Text(e.verdict, style="bold cyan"))
    return buffer.getvalue().rstrip("\n")
