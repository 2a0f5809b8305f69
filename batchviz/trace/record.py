"""``bv.trace``: a strategy's decisions and the plan of its batches, on a snapshot of a graph.

The trace never runs the graph and never touches its memory. The strategy schedules a
:class:`~batchviz.schedule.PendingView` of *all* the graph's nodes (``start=0``, as if
nothing had run) and records its decisions as it makes them
(:func:`~batchviz.schedule.record_decisions`); the batches are planned by the runtime's own
:func:`~batchviz.plan.plan` on an empty layout. So a trace shows the decisions the
strategy took and the reads the executor makes on a run from scratch, and tracing before or
after ``value()`` gives the same trace and changes no result.
"""
from __future__ import annotations

from ..backend import state
from ..graph import ExpressionBase, LazyGraph
from ..plan import Layout, Shared, Stack, Strided, View, elements_copied, is_copy, plan
from ..schedule import PendingView, average_depths, record_decisions, resolve_strategy
from ..signature_names import display_names
from .data import AgendaGroup, ArgumentRead, NodeInfo, SignatureSummary, Step, Trace


def graph_of(target) -> tuple:
    """``(graph, node or None)`` for an expression or a graph; a clear TypeError otherwise."""
    if isinstance(target, ExpressionBase):
        return target.graph, target.node
    if isinstance(target, LazyGraph):
        return target, None
    raise TypeError(
        f"expected an expression (e.g. the loss) or a bv.Graph, got {type(target).__name__}")


def snapshot_plan(graph, batches: list):
    """The plan of ``batches`` (a schedule of every node of ``graph``) on an empty layout:
    what the executor reads on a run of the whole graph from scratch."""
    return plan(graph, batches, Layout(), 0)


def trace(loss, strategy="agenda") -> Trace:
    """Record how ``strategy`` (a name or any Strategy object) schedules the graph of ``loss``.

    Returns a :class:`~batchviz.trace.Trace`: the graph's nodes, and one
    :class:`~batchviz.trace.Step` per batch with the agenda at that moment (grouped by
    signature, each group with the strategy's key and its words for it), the batch, and how
    its arguments were read (views or copies). The graph's own results and state are left
    untouched."""
    graph, loss_node = graph_of(loss)
    strategy = resolve_strategy(strategy)
    view = PendingView(graph, start=0)
    batches, log = record_decisions(strategy, view)
    names = {s: graph.signature_name(s) for s in set(graph.sigs)}
    itemsize = int(state.dtype.itemsize)
    batch_plans = snapshot_plan(graph, batches).batches
    steps, done = [], 0
    for index, (decision, batch) in enumerate(zip(log.decisions, batch_plans)):
        groups = [AgendaGroup(c.signature, names[c.signature], c.key, c.size, c.note)
                  for c in decision.candidates]
        chosen = next(c for c in decision.candidates if c.signature == decision.chosen)
        steps.append(Step(index=index, agenda=groups, signature=decision.chosen,
                          signature_name=names[decision.chosen], reason=chosen.note,
                          batch=list(batch.nodes), done=done,
                          on_agenda=sum(c.size for c in decision.candidates),
                          waiting=decision.waiting,
                          arguments=argument_reads(graph, batch, itemsize)))
        done += len(batch.nodes)
    return Trace(strategy=strategy.name, nodes=_snapshot_nodes(graph, names),
                 signatures=_signature_summaries(graph, view, average_depths(view), names),
                 steps=steps, loss=loss_node, itemsize=itemsize, key_names=log.key_names,
                 display_names=display_names(graph, names))


def argument_reads(graph, batch, itemsize: int) -> list:
    """The :class:`ArgumentRead` of each read of a :class:`~batchviz.plan.BatchPlan`."""
    positions = 1
    if batch.together:  # one read of every position
        positions = max(batch.counts) if batch.counts is not None else batch.in_shapes[0][1]
    out = []
    for position, read in enumerate(batch.reads):
        kind, detail = _in_words(graph, read)
        out.append(ArgumentRead(position, kind, elements_copied(read) * itemsize, detail,
                                positions, type(read).__name__))
    return out


def _in_words(graph, read) -> tuple:
    """``(kind, detail)`` of a plan's read, for people."""
    if type(read) is Shared:
        return "shared", f"{_name(graph, read.node)} read once"
    if type(read) is View:
        return "view", ""
    if type(read) is Strided:
        return "view", "strided: evenly spaced, no copy"
    assert is_copy(read)
    if type(read) is Stack:
        params = sorted({_name(graph, node) for arena, node, _ in read.pieces if arena is None})
        return "copy", ("stacked node by node: parameter " + ", ".join(params)
                        + " among the arguments") if params else "stacked node by node"
    return "copy", "gather"


def _name(graph, node: int) -> str:
    param = graph.param_of_node.get(node)
    if param is not None and getattr(param, "name", None):
        return f"{param.name}#{node}"
    return f"node {node}"


def _snapshot_nodes(graph, names: dict) -> list:
    ops, shapes, sigs, depths, args = graph.ops, graph.shapes, graph.sigs, graph.depths, graph.args
    sources = graph.sources
    params = graph.param_of_node
    nodes = []
    for i in range(len(ops)):
        param = params.get(i)
        nodes.append(NodeInfo(
            id=i, op=ops[i].name, shape=tuple(shapes[i]), signature=sigs[i],
            signature_name=names[sigs[i]], depth=depths[i], args=tuple(args[i]),
            source=sources[i] if sources is not None and i < len(sources) else None,
            parameter=(param.name or f"parameter{i}") if param is not None else None))
    return nodes


def _signature_summaries(graph, view, average: dict, names: dict) -> list:
    count: dict[int, int] = {}
    for i in view.nodes:
        s = view.signature[i]
        count[s] = count.get(s, 0) + 1
    out = []
    for s in sorted(count):
        info = graph.sigtab[s]
        out.append(SignatureSummary(id=s, name=names[s], op=info.op.name, cheap=bool(info.cheap),
                                    nodes=count[s], average_depth=average[s],
                                    shared=tuple(info.shared)))
    return out
