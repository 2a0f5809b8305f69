"""``bv.trace``: record every scheduling decision of a strategy on a snapshot of a graph.

The trace never runs the graph and never touches its memory: the strategy schedules a
:class:`~batchviz.schedule.PendingView` of *all* the graph's nodes (``start=0``, as if
nothing had run), the schedule is replayed node by node to recover the agenda at every
step, and the executor's memory layout is simulated to know which arguments are copied.
So tracing before or after ``value()`` gives the same trace and changes no result.
"""
from __future__ import annotations

from ..backend import state
from ..expression import Expression
from ..graph import LazyGraph
from ..schedule import PendingView, average_depths, resolve_strategy, validate_schedule
from .data import AgendaGroup, NodeInfo, SignatureSummary, Step, Trace
from .layout import argument_reads
from .reasons import Reasons


def graph_of(target) -> tuple:
    """``(graph, node or None)`` for an Expression or a Graph; a clear TypeError otherwise."""
    if isinstance(target, Expression):
        return target.graph, target.node
    if isinstance(target, LazyGraph):
        return target, None
    raise TypeError(
        f"expected an expression (e.g. the loss) or a bv.Graph, got {type(target).__name__}")


def schedule_snapshot(graph, strategy, view=None) -> tuple:
    """``(view, batches)``: ``strategy``'s schedule of every node of ``graph`` (``view``: a
    ``PendingView(graph, start=0)`` to reuse), checked when the strategy is not a trusted
    built-in one."""
    if view is None:
        view = PendingView(graph, start=0)
    batches = strategy.schedule(view)
    if not getattr(strategy, "trusted", False):
        batches = validate_schedule(view, batches)  # also turns every batch into a list
    return view, batches


def trace(loss, strategy="agenda") -> Trace:
    """Record how ``strategy`` (a name or any Strategy object) schedules the graph of ``loss``.

    Returns a :class:`~batchviz.trace.Trace`: the graph's nodes, and one
    :class:`~batchviz.trace.Step` per batch with the agenda at that moment (grouped by
    signature, with each group's priority and size), the signature chosen and why, the
    batch, and which arguments were copied or read as views.
    The graph's own results and state are left untouched."""
    graph, loss_node = graph_of(loss)
    strategy = resolve_strategy(strategy)
    view, batches = schedule_snapshot(graph, strategy)
    priority = average_depths(view)
    names = {s: graph.signature_name(s) for s in set(graph.sigs)}
    itemsize = int(state.dtype.itemsize)
    reads = argument_reads(graph, batches, itemsize)
    steps = _replay(view, batches, priority, names, Reasons(strategy, view, priority), reads)
    return Trace(strategy=strategy.name, nodes=_snapshot_nodes(graph, names),
                 signatures=_signature_summaries(graph, view, priority, names),
                 steps=steps, loss=loss_node, itemsize=itemsize)


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


def _signature_summaries(graph, view, priority: dict, names: dict) -> list:
    count: dict[int, int] = {}
    for i in view.nodes:
        s = view.signature[i]
        count[s] = count.get(s, 0) + 1
    out = []
    for s in sorted(count):
        info = graph.sigtab[s]
        out.append(SignatureSummary(id=s, name=names[s], op=info.op.name, cheap=bool(info.cheap),
                                    nodes=count[s], average_depth=priority[s],
                                    shared=tuple(info.shared)))
    return out


def _replay(view, batches, priority, names, reasons, reads) -> list:
    """Walk the schedule, keeping the agenda (nodes whose arguments are all computed)."""
    sig = view.signature
    users = view.users()
    unresolved: dict[int, int] = {}
    on_agenda: dict[int, int] = {}  # signature -> agenda nodes of that signature
    for i in view.nodes:
        k = len(view.pending_args(i))  # one count per argument slot, as users() lists them
        if k:
            unresolved[i] = k
        else:
            on_agenda[sig[i]] = on_agenda.get(sig[i], 0) + 1
    total = len(view.nodes)
    done = 0
    cheap = reasons.cheap
    steps = []
    for index, batch in enumerate(batches):
        agenda = {s: c for s, c in on_agenda.items() if c}
        s = sig[batch[0]]
        n_agenda = sum(agenda.values())
        groups = [AgendaGroup(g, names[g], priority[g], agenda[g])
                  for g in sorted(agenda, key=lambda g: (priority[g], not cheap[g], g))]
        steps.append(Step(index=index, agenda=groups, signature=s, signature_name=names[s],
                          reason=reasons(agenda, s, batch), batch=list(batch), done=done,
                          on_agenda=n_agenda, waiting=total - done - n_agenda,
                          arguments=reads[index]))
        for i in batch:
            on_agenda[sig[i]] -= 1
            for u in users.get(i, ()):
                left = unresolved[u] - 1
                unresolved[u] = left
                if left == 0:
                    on_agenda[sig[u]] = on_agenda.get(sig[u], 0) + 1
        done += len(batch)
    return steps
