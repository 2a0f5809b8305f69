"""Assertions that teach: every failed check says which nodes went wrong and why.

The grading tests compare a student's answer with the runtime's own behaviour (its
signatures, its strategies, its executor). A bare ``assert a == b`` would print two long
lists; these helpers find the *first* thing that differs and explain it in the paper's
terms (signature, depth, agenda, batch), naming node ids and their signatures so that the
student can look the nodes up with ``graph.ops[i]``, ``graph.args[i]`` or the widget.
"""
from __future__ import annotations

from collections import defaultdict

from batchviz.schedule import PendingView
from batchviz.schedule.agenda import average_depths

__all__ = ["describe", "assert_valid_schedule", "assert_same_batches", "assert_same_schedule",
           "assert_same_partition", "agenda_after", "as_batches"]


class GradingError(AssertionError):
    """A failed check; its message is the lesson."""


def fail(message: str):
    __tracebackhide__ = True
    raise GradingError(message)


def describe(graph, node: int) -> str:
    """``node 15 (matmul-W#3-4x1)``: the node id and its signature, or what kind of leaf."""
    if not isinstance(node, int) or not 0 <= node < len(graph.ops):
        return f"node {node!r} (not a node of this graph, which has {len(graph.ops)} nodes)"
    param = graph.param_of_node.get(node)
    if param is not None:
        return f"node {node} (parameter {param.name})"
    return f"node {node} ({graph.signature_name(graph.sigs[node])})"


def as_batches(schedule, who: str) -> list:
    """``schedule`` as a list of lists of ints, or a clear failure saying what it was."""
    __tracebackhide__ = True
    if schedule is None:
        fail(f"{who} returned None: schedule(view) must *return* the list of batches")
    try:
        batches = [list(batch) for batch in schedule]
    except TypeError:
        fail(f"{who} must return a list of batches (each a list of node ids), got "
             f"{type(schedule).__name__}")
    for k, batch in enumerate(batches):
        for node in batch:
            if isinstance(node, bool) or not isinstance(node, int):
                fail(f"batch {k} of {who} contains {node!r} ({type(node).__name__}); batches hold "
                     "node ids (ints), e.g. the entries of view.nodes")
    return batches


# --- schedules -------------------------------------------------------------------------------

def assert_valid_schedule(view: PendingView, schedule, who: str = "your schedule") -> list:
    """Every pending node exactly once, one signature per batch, arguments in earlier
    batches. Returns the schedule as a list of lists."""
    __tracebackhide__ = True
    graph = view.graph
    batches = as_batches(schedule, who)
    sig = view.signature
    position: dict[int, int] = {}
    for k, batch in enumerate(batches):
        if not batch:
            fail(f"batch {k} of {who} is empty: every batch runs at least one node")
        for node in batch:
            if not 0 <= node < len(graph.ops):
                fail(f"batch {k} of {who} contains node {node}, but the graph has nodes "
                     f"0..{len(graph.ops) - 1}")
            if node in graph.param_of_node:
                fail(f"batch {k} of {who} contains {describe(graph, node)}: parameters are never "
                     "scheduled, their values exist from the start (they are not in view.nodes)")
            if node < view.start:
                fail(f"batch {k} of {who} contains {describe(graph, node)}, which an earlier "
                     f"value() already computed (graph.n_evaluated = {view.start}): schedule only "
                     "view.nodes, the delta (§3.1)")
            if node in position:
                fail(f"{describe(graph, node)} is scheduled twice, in batches {position[node]} and "
                     f"{k}: every node runs exactly once")
            position[node] = k
        first = batch[0]
        for node in batch[1:]:
            if sig[node] != sig[first]:
                fail(f"batch {k} mixes {describe(graph, first)} and {describe(graph, node)}: a batch "
                     "must share one signature (one kernel computes the whole batch)")
    missing = [n for n in view.nodes if n not in position]
    if missing:
        fail(f"{len(missing)} pending nodes are never scheduled by {who}, e.g. "
             f"{describe(graph, missing[0])}: every node of view.nodes must run")
    for node, k in position.items():
        for a in view.pending_args(node):
            if position[a] == k:
                fail(f"{describe(graph, node)} runs in batch {k} together with its own argument "
                     f"{describe(graph, a)}: a node can only run after its arguments, so they "
                     "never share a batch")
            if position[a] > k:
                fail(f"{describe(graph, node)} runs in batch {k} but its argument "
                     f"{describe(graph, a)} runs in batch {position[a]}: arguments must run in an "
                     "earlier batch")
    return batches


def assert_same_batches(view: PendingView, expected, actual, what: str) -> None:
    """Same grouping of nodes into batches (the order of batches may differ)."""
    __tracebackhide__ = True
    graph = view.graph
    expected = as_batches(expected, "the runtime")
    actual = as_batches(actual, "your strategy")
    batch_of = {n: frozenset(b) for b in expected for n in b}
    mine = {n: frozenset(b) for b in actual for n in b}
    for node in view.nodes:
        want, got = batch_of[node], mine.get(node, frozenset())
        if want != got:
            extra = sorted(got - want)[:5]
            lacking = sorted(want - got)[:5]
            detail = []
            if lacking:
                detail.append("it should run together with " + ", ".join(
                    f"{describe(graph, n)} at depth {view.depth[n]}" for n in lacking))
            if extra:
                detail.append("it should not run together with " + ", ".join(
                    f"{describe(graph, n)} at depth {view.depth[n]}" for n in extra))
            fail(f"{what}: {describe(graph, node)} at depth {view.depth[node]} runs in a batch of "
                 f"{len(got)} nodes, but the runtime's batch for it has {len(want)}; "
                 + "; ".join(detail))
    if len(expected) != len(actual):
        fail(f"{what}: the runtime needs {len(expected)} batches, yours {len(actual)}")


def agenda_after(view: PendingView, done_batches) -> dict:
    """``{signature: ready nodes}``: the agenda once ``done_batches`` have run."""
    done = {n for b in done_batches for n in b}
    ready = defaultdict(list)
    for node in view.nodes:
        if node not in done and all(a in done for a in view.pending_args(node)):
            ready[view.signature[node]].append(node)
    return dict(ready)


def assert_same_schedule(view: PendingView, expected, actual, what: str) -> None:
    """The very same batches in the very same order (nodes inside a batch in any order).
    On the first difference, show the agenda at that step with each signature's priority."""
    __tracebackhide__ = True
    expected = as_batches(expected, "the runtime")
    actual = as_batches(actual, "your strategy")
    avg = average_depths(view)
    for k, (want, got) in enumerate(zip(expected, actual)):
        if sorted(want) == sorted(got):
            continue
        agenda = agenda_after(view, expected[:k])
        lines = []
        for s, nodes in sorted(agenda.items(), key=lambda kv: (avg[kv[0]], not view.is_cheap(kv[0]), kv[0])):
            kind = "cheap" if view.is_cheap(s) else "heavy"
            lines.append(f"    {view.signature_name(s)} (signature {s}, average depth {avg[s]:.3f}, "
                         f"{kind}): nodes {sorted(nodes)[:8]}{' ...' if len(nodes) > 8 else ''}")
        want_sig, got_sig = view.signature[want[0]], view.signature[got[0]] if got else None
        if got_sig == want_sig:
            reason = (f"both pick signature {view.signature_name(want_sig)}, but the runtime's batch "
                      f"has nodes {sorted(want)[:10]} and yours {sorted(got)[:10]}: run *all* the "
                      "agenda's nodes of the chosen signature, and only those")
        else:
            got_name = view.signature_name(got_sig) if got else "nothing"
            reason = (f"the runtime runs {view.signature_name(want_sig)} but yours runs {got_name}")
        fail(f"{what}: batch {k} differs: {reason}. The agenda before batch {k} "
             "(lowest priority first: average depth, then cheap before heavy, then signature id):\n"
             + "\n".join(lines))
    if len(expected) != len(actual):
        fail(f"{what}: the runtime's schedule has {len(expected)} batches, yours {len(actual)} "
             f"(the first {min(len(expected), len(actual))} agree)")


# --- signatures ------------------------------------------------------------------------------

def _why_not_batchable(graph, a: int, b: int) -> str:
    """What differs between two nodes that the runtime keeps apart."""
    op_a, op_b = graph.ops[a].name, graph.ops[b].name
    if op_a != op_b:
        return f"they are different operations ({op_a} vs {op_b})"
    if len(graph.args[a]) != len(graph.args[b]):
        return f"they have {len(graph.args[a])} and {len(graph.args[b])} arguments"
    shapes_a = [graph.shapes[x] for x in graph.args[a]]
    shapes_b = [graph.shapes[x] for x in graph.args[b]]
    if shapes_a != shapes_b or graph.shapes[a] != graph.shapes[b]:
        return (f"{op_a} is dimension-sensitive and the shapes differ: arguments {shapes_a} -> "
                f"{graph.shapes[a]} vs {shapes_b} -> {graph.shapes[b]}")
    info = graph.sigtab[graph.sigs[a]]
    for pos in info.shared:
        if graph.args[a][pos] != graph.args[b][pos]:
            return (f"argument {pos} is shared by every node of a batch (it is a parameter: "
                    f"{describe(graph, graph.args[a][pos])} vs {describe(graph, graph.args[b][pos])})")
    if graph.attrs[a] != graph.attrs[b]:
        return f"their attributes differ ({graph.attrs[a]!r} vs {graph.attrs[b]!r})"
    return "their runtime signatures differ"


def assert_same_partition(graph, nodes, key_of, what: str) -> None:
    """``key_of(node)`` (the student's signature) must group ``nodes`` exactly as the runtime's
    signatures do: equal keys if and only if equal runtime signatures."""
    __tracebackhide__ = True
    keys = {}
    for node in nodes:
        try:
            key = key_of(node)
            hash(key)
        except NotImplementedError:
            raise
        except TypeError as e:
            fail(f"{what}: the signature of {describe(graph, node)} must be hashable (a tuple of "
                 f"strings, ints and tuples), got an error: {e}")
        keys[node] = key
    first_of_sig: dict = {}
    first_of_key: dict = {}
    for node in nodes:
        s, key = graph.sigs[node], keys[node]
        if s in first_of_sig:
            other = first_of_sig[s]
            if keys[other] != key:
                fail(f"{what}: {describe(graph, other)} and {describe(graph, node)} have the same "
                     f"signature in the runtime, so they may run in one batch, but your signatures "
                     f"differ: {keys[other]!r} vs {key!r}")
        else:
            first_of_sig[s] = node
        if key in first_of_key:
            other = first_of_key[key]
            if graph.sigs[other] != s:
                fail(f"{what}: your signature {key!r} puts {describe(graph, other)} and "
                     f"{describe(graph, node)} in one group, but they cannot be batched: "
                     f"{_why_not_batchable(graph, other, node)}")
        else:
            first_of_key[key] = node
