"""Pictures for the concept pages, drawn with graphviz straight from a graph's own lists.

A :class:`batchviz.Graph` keeps its nodes as parallel lists indexed by node id (``ops``,
``args``, ``shapes``, ``sigs``, ``depths``), so drawing it takes one loop: a box per node,
an arrow from each argument to its user. Reading this file is a quick tour of those lists.

``bv.render(trace, step=k)`` is batchviz's own picture of *one step* of a schedule (which
nodes are done, in the batch, on the agenda, waiting), and the pages use it for that. These
helpers draw what it does not: a graph coloured by signature, a *whole* schedule in one
picture (each node labelled with the batch that computes it), and the memory arena of a run.
"""
from __future__ import annotations

from html import escape

import graphviz

# qualitative colours, one per signature, light enough for black text
PALETTE = ["#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
           "#dbdb8d", "#9edae5", "#e7ba52", "#cedb9c", "#e7cb94", "#d6616b", "#a55194"]
EMPHASIS = "#d62728"


def signature_colours(graph, nodes) -> dict:
    """``{signature: colour}`` in order of first appearance among ``nodes``."""
    colours: dict[int, str] = {}
    for i in nodes:
        s = graph.sigs[i]
        if s not in colours:
            colours[s] = PALETTE[len(colours) % len(PALETTE)]
    return colours


def shown_nodes(graph, parameters: bool) -> list:
    """The node ids to draw: every node, or every node but the model's parameters."""
    return [i for i in range(len(graph.ops)) if parameters or i not in graph.param_of_node]


def draw_graph(graph, batches=None, emphasize=(), parameters=False,
               rankdir="TB") -> graphviz.Digraph:
    """The graph, one box per node, filled with its signature's colour.

    ``batches`` (a schedule: a list of lists of node ids) adds "batch k" to every label.
    ``emphasize`` names signatures (as ``graph.signature_name`` writes them) whose nodes get
    a thick red outline. ``parameters=True`` also draws the parameter nodes, which are
    never scheduled. The inputs are at the top and the loss at the bottom, as in
    ``bv.render``'s pictures (``rankdir="BT"`` turns it upside down, as in the paper)."""
    nodes = shown_nodes(graph, parameters)
    drawn = set(nodes)
    batch_of = {i: k for k, batch in enumerate(batches or []) for i in batch}
    colours = signature_colours(graph, nodes)
    dot = graphviz.Digraph(graph_attr={"rankdir": rankdir, "nodesep": "0.15",
                                       "ranksep": "0.22", "fontname": "Helvetica"},
                           node_attr={"shape": "box", "style": "rounded,filled",
                                      "fontname": "Helvetica", "fontsize": "10",
                                      "height": "0.3", "margin": "0.06,0.02"},
                           edge_attr={"arrowsize": "0.5", "color": "#777777"})
    for i in nodes:
        sig_name = graph.signature_name(graph.sigs[i])
        label = f"{graph.ops[i].name} #{i}"
        if i in batch_of:
            label += f"\nbatch {batch_of[i]}"
        strong = sig_name in emphasize
        dot.node(str(i), label, fillcolor=colours[graph.sigs[i]],
                 color=EMPHASIS if strong else "#555555", penwidth="3" if strong else "1",
                 tooltip=f"node {i}: {sig_name}, depth {graph.depths[i]}")
    for i in nodes:
        for a in graph.args[i]:
            if a in drawn:
                dot.edge(str(a), str(i))
    # the legend is the graph's label, so that it takes no part in the layout
    dot.attr(label=_legend(graph, colours, emphasize), labelloc="b", labeljust="r",
             fontsize="10")
    return dot


def _legend(graph, colours, emphasize) -> str:
    """An HTML-like graphviz table: one row per signature, in its colour."""
    rows = []
    for s, colour in colours.items():
        name = graph.signature_name(s)
        style = f' COLOR="{EMPHASIS}"' if name in emphasize else ""
        rows.append(f'<TR><TD BGCOLOR="{colour}"{style}>{escape(name)}</TD></TR>')
    return ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="3">'
            '<TR><TD><B>signatures</B></TD></TR>' + "".join(rows) + "</TABLE>>")


def draw_memory(graph, batch_index: int) -> graphviz.Digraph:
    """The forward arena of a run, and how one batch read its arguments.

    Every planned batch (``graph.layout.batches``) owns one contiguous segment of the
    arena (``record.start`` to ``record.stop``), in schedule order: the picture has one row
    per batch, top to bottom in address order, and one cell per node. For the batch
    ``batch_index`` it marks its outputs (orange) and the cells it read (yellow), with the
    plan's read of each argument position: ``View`` (the arguments lie back to back: no
    copy), ``Strided`` (evenly spaced, read in place), ``Copy`` or ``Concat`` (one copy
    kernel), ``Stack`` (a parameter is involved: the slow path), or ``Shared`` (one node
    for the whole batch, such as the ``W`` of ``W @ h``)."""
    records = graph.layout.batches
    chosen = records[batch_index]
    read: dict[int, str] = {}
    for position, how in enumerate(chosen.reads):
        for node in _argument_nodes(graph, chosen, position):
            read[node] = f"arg {position}: {type(how).__name__}"
    widest = max(len(r.nodes) for r in records)
    rows = []
    for r in records:
        cells = []
        for node in r.nodes:
            if r is chosen:
                colour, note = "#ff9f43", "output"
            elif node in read:
                colour, note = "#fff3b0", read[node]
            else:
                colour, note = "#f4f4f4", ""
            text = f"#{node}" + (f'<BR/><FONT POINT-SIZE="8">{note}</FONT>' if note else "")
            cells.append(f'<TD BGCOLOR="{colour}">{text}</TD>')
        if len(r.nodes) < widest:
            cells.append(f'<TD COLSPAN="{widest - len(r.nodes)}" BORDER="0"> </TD>')
        head = (f'<TD ALIGN="LEFT" BORDER="0">batch {r.index}: {escape(r.op.name)}</TD>'
                f'<TD ALIGN="RIGHT" BORDER="0"><FONT POINT-SIZE="8">{r.start}-{r.stop}'
                "</FONT></TD>")
        rows.append(f"<TR>{head}{''.join(cells)}</TR>")
    table = ('<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="1" CELLPADDING="3">'
             + "".join(rows) + "</TABLE>>")
    dot = graphviz.Digraph(graph_attr={"fontname": "Helvetica", "fontsize": "11",
                                       "label": f"the arena of one run: batch {chosen.index} "
                                                f"({chosen.op.name} x{len(chosen.nodes)}) in "
                                                "orange, the arguments it read in yellow",
                                       "labelloc": "t"},
                           node_attr={"fontname": "Helvetica", "fontsize": "10"})
    dot.node("arena", table, shape="plaintext")
    return dot


def _argument_nodes(graph, record, position: int) -> list:
    """The nodes a batch read at one argument position, in batch order."""
    return [graph.args[node][position] for node in record.nodes]


def schedule_text(graph, batches) -> str:
    """One line per batch: its index, size, signature and node ids."""
    lines = []
    for k, batch in enumerate(batches):
        name = graph.signature_name(graph.sigs[batch[0]])
        lines.append(f"batch {k:2d}: {len(batch)} x {name:<27} {batch}")
    return "\n".join(lines)
