"""The few per-node facts a picture needs, as arrays: from a Trace or straight from a graph.

``bv.render`` draws traces (:func:`table_from_trace`); ``explain``'s HTML draws a thumbnail
of a graph it never traced (tracing a 100k-node graph would take longer than explaining
it) from the graph's arrays. Both go through this one table, so both pictures are built by
the same code.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

from ..signature import shape_text
from ..signature_names import SEPARATOR


@dataclass
class DrawTable:
    sig: np.ndarray        # per node
    depth: np.ndarray
    is_param: np.ndarray
    arg_flat: np.ndarray   # edges: arg_flat[e] -> arg_user[e]
    arg_user: np.ndarray
    label: object          # callable node id -> (first line, second line) of its label
    tooltip: object        # callable node id -> hover text
    sig_names: dict        # signature -> its full description (``matmul-W#3-7x1``)
    display_names: dict = None  # signature -> its short name (``matmul·W``); default: full

    def __post_init__(self):
        if self.display_names is None:
            self.display_names = dict(self.sig_names)

    @property
    def n(self) -> int:
        return len(self.sig)


def _edges(args: list) -> tuple:
    lens = np.fromiter(map(len, args), dtype=np.int64, count=len(args))
    flat = np.fromiter(chain.from_iterable(args), dtype=np.int64, count=int(lens.sum()))
    return flat, np.repeat(np.arange(len(args), dtype=np.int64), lens)


def table_from_trace(trace) -> DrawTable:
    nodes = trace.nodes
    flat, user = _edges([n.args for n in nodes])

    def label(i):  # two short lines: a box as narrow as its op's name
        n = nodes[i]
        if n.parameter is not None:
            return n.parameter, shape_text(n.shape)
        # the op as the signature's short name says it: ``matmul`` of ``matmul·W``, and in a
        # DyNet program as the program wrote it (``V * x``, not batchviz's ``matmul``)
        op = trace.display_name(n.signature).split(SEPARATOR)[0]
        return op, f"#{n.id} \u00b7 {shape_text(n.shape)}"

    def tooltip(i):
        n = nodes[i]
        text = f"node {n.id}: {n.signature_name}, depth {n.depth}"
        return text + (f" ({n.source})" if n.source else "")

    return DrawTable(
        sig=np.fromiter((n.signature for n in nodes), dtype=np.int64, count=len(nodes)),
        depth=np.fromiter((n.depth for n in nodes), dtype=np.int64, count=len(nodes)),
        is_param=np.fromiter((n.parameter is not None for n in nodes), dtype=bool, count=len(nodes)),
        arg_flat=flat, arg_user=user, label=label, tooltip=tooltip,
        sig_names={n.signature: n.signature_name for n in nodes},
        display_names={n.signature: trace.display_name(n.signature) for n in nodes})
