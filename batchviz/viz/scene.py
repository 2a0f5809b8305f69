"""What a picture shows, before any drawing: its boxes, its edges, and their paint.

A *scene* is split in two on purpose. The **structure** (which boxes, with which labels,
joined by which edges) depends only on the graph and the drawing options, never on the step,
so every step of a trace is the same DOT graph with the same layout: widgets can flip
through steps and only colours change. The **paint** (how many of a box's nodes are done,
in the batch, on the agenda or waiting) is the only thing a step changes.

Small graphs draw one box per node. Larger ones draw one box per (signature, depth band)
with its node count, and ``expand`` draws a region node by node again.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..signature_names import SEPARATOR
from ..trace.timeline import STATES
from ..words import counted
from .palette import signature_colours

DEFAULT_MAX_NODES = 300   # above this many nodes, draw collapsed
MAX_EXPANDED = 2000       # an expanded region larger than this is refused (dot would take ages)
DEFAULT_MAX_BOXES = 60    # collapsed pictures widen their depth bands to stay below this


@dataclass
class SceneNode:
    key: str              # the DOT node name: ``n12`` (node 12) or ``g5_3`` (signature 5, band 3)
    lines: tuple          # label lines
    signature: int
    members: np.ndarray   # the node ids this box stands for
    group: bool           # a collapsed box of several nodes
    parameter: bool
    tooltip: str
    layer: int            # its depth, or its depth band's first depth (the fallback's row)


@dataclass
class Scene:
    nodes: list
    edges: list           # (tail key, head key, number of node edges it stands for)
    colours: dict         # signature -> outline colour
    names: dict           # signature -> short name (legend, group boxes)
    legend: list          # signatures listed in the legend, most nodes first
    legend_more: int      # signatures left out of the legend
    collapsed: bool
    note: str
    index_of_node: np.ndarray = field(repr=False)  # node id -> index in ``nodes`` (-1: hidden)


@dataclass
class Paint:
    """Per scene node, how many of its nodes are in each state (columns in ``STATES``
    order); or, for ``by_signature``, no states: boxes are filled with their signature's tint."""

    counts: np.ndarray | None
    caption: str
    by_signature: bool = False


def _expanded_mask(table, expand) -> np.ndarray:
    if not isinstance(expand, dict) or not expand:
        raise TypeError("expand must be a dict such as dict(depth=(3, 8)) or "
                        "dict(signature='tanh'), got " + repr(expand))
    unknown = set(expand) - {"depth", "signature"}
    if unknown:
        raise ValueError(f"expand: unknown key(s) {sorted(unknown)}; use 'depth' and/or 'signature'")
    mask = np.ones(table.n, dtype=bool)
    if "depth" in expand:
        d = expand["depth"]
        lo, hi = (d, d) if isinstance(d, (int, np.integer)) else tuple(d)
        mask &= (table.depth >= lo) & (table.depth <= hi)
    if "signature" in expand:
        wanted = expand["signature"]
        wanted = [wanted] if isinstance(wanted, (str, int, np.integer)) else list(wanted)
        by_name = {name: s for s, name in table.sig_names.items()}  # full or short names
        by_name.update({name: s for s, name in table.display_names.items()})
        sigs = []
        for w in wanted:
            if isinstance(w, str):
                if w not in by_name:
                    raise ValueError(f"expand: no signature named {w!r}; signatures are "
                                     + ", ".join(sorted(by_name)[:20]))
                sigs.append(by_name[w])
            else:
                sigs.append(int(w))
        mask &= np.isin(table.sig, sigs)
    return mask


def wrap_name(name: str, width: int = 18) -> tuple:
    """A display name (``pick_range·40x1·32:40``) as lines of at most ``width`` characters,
    broken after its separators (a part longer than that keeps a line of its own): a
    collapsed box is then as narrow as its parts, and a picture of many side by side fits."""
    lines, line = [], ""
    for part in name.split(SEPARATOR):
        piece = part if not line else SEPARATOR + part
        if line and len(line) + len(piece) > width:
            lines.append(line + SEPARATOR)
            line = part
        else:
            line += piece
    return tuple(lines + [line])


def _band_width(sig, depth, max_boxes) -> int:
    """Smallest depth band width (1, 2, 4, ...) that keeps the box count at most max_boxes."""
    if len(sig) == 0:
        return 1
    top = int(depth.max()) + 1
    width = 1
    while True:
        boxes = len(np.unique(sig * (top // width + 1) + depth // width))
        if boxes <= max_boxes or width >= top:
            return width
        width *= 2


def build_scene(table, *, parameters: bool = False, collapse=None, expand=None,
                max_nodes: int = DEFAULT_MAX_NODES, max_boxes: int = DEFAULT_MAX_BOXES) -> Scene:
    visible = np.ones(table.n, dtype=bool) if parameters else ~table.is_param
    n_visible = int(visible.sum())
    collapsed = bool(collapse) if collapse is not None else n_visible > max_nodes
    single = visible.copy()
    note = ""
    if collapsed:
        single &= _expanded_mask(table, expand) if expand is not None else False
        if int(single.sum()) > MAX_EXPANDED:
            raise ValueError(
                f"expand={expand!r} selects {int(single.sum())} nodes; at most {MAX_EXPANDED} "
                "can be drawn one by one. Narrow the depth range or add a signature.")
    elif expand is not None:
        _expanded_mask(table, expand)  # still reject a malformed expand
    boxed = visible & ~single

    index_of_node = np.full(table.n, -1, dtype=np.int64)
    nodes = []
    width = 1
    if boxed.any():
        ids = np.flatnonzero(boxed)
        width = _band_width(table.sig[ids], table.depth[ids], max_boxes)
        band = table.depth[ids] // width
        keys = table.sig[ids] * (int(band.max()) + 1) + band
        uniq, inverse = np.unique(keys, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        cuts = np.flatnonzero(np.r_[True, np.diff(inverse[order]) != 0, True])
        for g in range(len(uniq)):
            members = ids[order[cuts[g]:cuts[g + 1]]]
            s = int(table.sig[members[0]])
            lo, hi = int(table.depth[members].min()), int(table.depth[members].max())
            where = f"depth {lo}" if lo == hi else f"depths {lo}\u2013{hi}"
            name = table.display_names[s]
            nodes.append(SceneNode(
                key=f"g{s}_{int(table.depth[members[0]]) // width}",
                lines=(*wrap_name(name), f"\u00d7{len(members)} \u00b7 {where}"),
                signature=s, members=members, group=True, parameter=bool(table.is_param[members[0]]),
                tooltip=f"{len(members)} nodes of {table.sig_names[s]} at {where}",
                layer=int(table.depth[members[0]]) // width * width))  # the band's first depth
        note = (f"{counted(n_visible, 'node')} drawn as {counted(len(uniq), 'box')}, one per signature and "
                + ("depth" if width == 1 else f"band of {width} depths")
                + "; render(..., expand=dict(depth=(a, b))) draws a region node by node")
    for i in np.flatnonzero(single).tolist():
        nodes.append(SceneNode(key=f"n{i}", lines=table.label(i), signature=int(table.sig[i]),
                               members=np.array([i]), group=False,
                               parameter=bool(table.is_param[i]), tooltip=table.tooltip(i),
                               layer=int(table.depth[i])))
    nodes.sort(key=lambda sn: (sn.layer, sn.group, sn.signature, int(sn.members[0])))
    for k, sn in enumerate(nodes):
        index_of_node[sn.members] = k

    tail, head = index_of_node[table.arg_flat], index_of_node[table.arg_user]
    keep = (tail >= 0) & (head >= 0) & (tail != head)
    pairs, counts = np.unique(tail[keep] * max(len(nodes), 1) + head[keep], return_counts=True)
    edges = [(nodes[p // len(nodes)].key, nodes[p % len(nodes)].key, int(c))
             for p, c in zip(pairs.tolist(), counts.tolist())]

    shown = table.sig[visible]
    sigs, per_sig = np.unique(shown, return_counts=True)
    colours = signature_colours(sigs.tolist())
    by_count = [int(s) for s in sigs[np.argsort(-per_sig, kind="stable")]]
    legend = by_count[:12]
    return Scene(nodes=nodes, edges=edges, colours=colours,
                 names={s: table.display_names[s] for s in by_count}, legend=legend,
                 legend_more=len(by_count) - len(legend), collapsed=collapsed, note=note,
                 index_of_node=index_of_node)


def paint_step(scene: Scene, timeline, step: int, caption: str) -> Paint:
    """State counts of every scene node just before ``step`` runs."""
    step = timeline.check_step(step)
    codes = timeline.state_codes(step)          # per node: index into STATES
    idx = scene.index_of_node
    shown = idx >= 0
    counts = np.bincount(idx[shown] * len(STATES) + codes[shown],
                         minlength=len(scene.nodes) * len(STATES))
    return Paint(counts=counts.reshape(len(scene.nodes), len(STATES)), caption=caption)


def paint_signatures(caption: str = "") -> Paint:
    return Paint(counts=None, caption=caption, by_signature=True)
