"""``bv.trace``: a strategy's decisions and the plan of its batches, as plain data.

Given a graph that ran, with the strategy it ran with (the default), a trace reads the run:
the batches of every forward run (a graph whose values were asked for in parts ran more
than once) and the plans the executor carried out, ``graph.plans``; the agenda of each
step is the strategy's own record (``bv.Graph(record=True)``) or, without it, rebuilt by
walking the agenda through the batches that ran (:func:`~batchviz.schedule.replayed`).
Nodes built after the last run have not run: their steps are a dry run, labelled as such
(``Step.run`` is None).

For another strategy, or a graph that has not run, the trace is a *dry run*: the strategy
schedules a :class:`~batchviz.schedule.PendingView` of all the graph's nodes (as if
nothing had run) and records its decisions as it makes them
(:func:`~batchviz.schedule.record_decisions`); the batches are planned by the runtime's own
:func:`~batchviz.plan.plan` on an empty layout (``Trace.dry_run``). A trace never runs the
graph and never touches its memory or results.
"""
from __future__ import annotations

from ..backend import state
from ..graph import ExpressionBase, LazyGraph
from ..plan import Layout, Shared, Stack, Strided, View, elements_copied, is_copy, plan
from ..schedule import (PendingView, average_depths, record_decisions, replayed,
                        resolve_strategy)
from ..signature_names import display_names
from .data import AgendaGroup, ArgumentRead, NodeInfo, SignatureSummary, Step, Trace


def graph_of(target) -> tuple:
    """``(graph, node or None)`` for an expression or a graph; a clear TypeError otherwise.
    A DyNet expression (``batchviz.dynet``) is taken for the node it holds (its ``x``), so
    that ``bv.explain(loss)`` works on a DyNet program's loss as written."""
    inner = getattr(target, "x", None) if not isinstance(target, ExpressionBase) else None
    if isinstance(inner, ExpressionBase):
        target = inner
    if isinstance(target, ExpressionBase):
        return target.graph, target.node
    if isinstance(target, LazyGraph):
        return target, None
    raise TypeError(
        f"expected an expression (e.g. the loss) or a bv.Graph, got {type(target).__name__}")


def ran_with(graph, strategy) -> bool:
    """Whether ``graph`` has run, with ``strategy`` (a Strategy object): its runs then show
    what that strategy did, and a trace or an explanation reads them instead of a dry run."""
    own = getattr(graph, "strategy", None)
    return (bool(getattr(graph, "plans", None)) and own is not None
            and (strategy is own or strategy.name == own.name))


def snapshot_plan(graph, batches: list):
    """The plan of ``batches`` (a schedule of every node of ``graph``) on an empty layout:
    what the executor reads on a run of the whole graph from scratch."""
    return plan(graph, batches, Layout(), 0)


def trace(loss, strategy=None) -> Trace:
    """Record how ``strategy`` (a name or any Strategy object; by default the graph's own)
    schedules the graph of ``loss``.

    Returns a :class:`~batchviz.trace.Trace`: the graph's nodes, and one
    :class:`~batchviz.trace.Step` per batch with the agenda at that moment (grouped by
    signature, each group with the strategy's key and its words for it), the batch, and how
    its arguments were read (views or copies). For a graph that ran, with the strategy it
    ran with, those are the batches and reads of its runs; otherwise a dry run
    (``trace.dry_run``, see the module's docstring). The graph's own results and state are
    left untouched."""
    graph, loss_node = graph_of(loss)
    own = getattr(graph, "strategy", None)
    if strategy is None:
        strategy = own if own is not None else "agenda"
    strategy = resolve_strategy(strategy)
    names = {s: graph.signature_name(s) for s in set(graph.sigs)}
    itemsize = int(state.dtype.itemsize)
    steps: list = []
    key_names = ()
    if ran_with(graph, strategy):
        key_names = _steps_of_runs(graph, own, names, itemsize, steps)
        start = graph.n_evaluated  # what was built after the last run: a dry run
        layout = graph.layout.copy()
    else:
        start, layout = 0, Layout()
    if start < len(graph.ops):
        view = PendingView(graph, start=start)
        batches, log = record_decisions(strategy, view)
        dry = plan(graph, batches, layout, start).batches
        _add_steps(steps, graph, log.decisions, dry, None, names, itemsize)
        key_names = key_names or log.key_names
    everything = PendingView(graph, start=0)
    return Trace(strategy=strategy.name, nodes=_snapshot_nodes(graph, names),
                 signatures=_signature_summaries(graph, everything, average_depths(everything),
                                                 names),
                 steps=steps, loss=loss_node, itemsize=itemsize, key_names=key_names,
                 display_names=display_names(graph, names))


def _steps_of_runs(graph, strategy, names: dict, itemsize: int, steps: list) -> tuple:
    """Append the steps of every forward run of ``graph``: its batches and plans, and the
    agenda at each step (the run's decision log, or the agenda rebuilt from its batches).
    Returns the names of the strategy's key."""
    starts = [0] + graph.run_ends[:-1]
    logs = getattr(graph, "decision_logs", None) or [None] * len(graph.plans)
    key_names = ()
    for run, (run_plan, start, end) in enumerate(zip(graph.plans, starts, graph.run_ends)):
        log = logs[run]
        if log is None:
            view = PendingView(graph, start=start, end=end)
            log = replayed(view, [list(b.nodes) for b in run_plan.batches], strategy)
        _add_steps(steps, graph, log.decisions, run_plan.batches, run, names, itemsize)
        key_names = key_names or log.key_names
    return key_names


def _add_steps(steps: list, graph, decisions: list, batch_plans, run, names: dict,
               itemsize: int) -> None:
    """Append one :class:`Step` per decision and its batch's plan (``run``: the forward run
    that ran them, None for a dry run)."""
    done = sum(len(step.batch) for step in steps)
    for decision, batch in zip(decisions, batch_plans):
        groups = [AgendaGroup(c.signature, names[c.signature], c.key, c.size, c.note)
                  for c in decision.candidates]
        chosen = next(c for c in decision.candidates if c.signature == decision.chosen)
        steps.append(Step(index=len(steps), agenda=groups, signature=decision.chosen,
                          signature_name=names[decision.chosen], reason=chosen.note,
                          batch=list(batch.nodes), done=done,
                          on_agenda=sum(c.size for c in decision.candidates),
                          waiting=decision.waiting,
                          arguments=argument_reads(graph, batch, itemsize), run=run))
        done += len(batch.nodes)


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
