"""``bv.explain``: schedule one graph with several strategies and compare them.

Nothing runs and nothing is traced node by node. The graph's own strategy, when the whole
graph ran with it, is shown as it ran: its runs' batches and plans. Every other strategy
schedules a snapshot of the graph (as if nothing had run: a dry run) and plans it on an
empty layout, as a run of the whole graph would be planned: its copies are the plan's own
(:meth:`~batchviz.plan.Plan.copy_counts`), never a second statement of the read rule. The
other numbers of the report - kernel launches, the lower bound, per-signature batch counts
- come from NumPy over the whole graph at once.
"""
from __future__ import annotations

import time

import numpy as np

from ..backend import state
from ..schedule import FlatSchedule, PendingView, Strategy, resolve_strategy, schedule
from ..plan.arrays import graph_arrays
from ..signature_names import display_names
from ..trace.record import graph_of, ran_with, snapshot_plan
from .bound import chain_bounds
from .costmodel import cost_model
from .diagnose import small_batch_reason, verdict
from .flops import total_flops
from .optimum import explain_optimum
from .report import BatchNote, Explanation, SignatureRow, SmallBatchNote, StrategyResult
from .sources import split_notes

DEFAULT_STRATEGIES = ("none", "depth", "agenda")
TOP_SIGNATURES, TOP_BATCHES, TOP_SMALL = 10, 3, 5


def explain(loss, strategies=DEFAULT_STRATEGIES, optimum=None) -> Explanation:
    """Explain how the graph of ``loss`` batches under each of ``strategies`` (names or
    Strategy objects, or just one of them; the graph's own strategy is added when it is not
    among them).

    ``optimum``: the fewest batches possible, next to the lower bound. By default it is
    shown only where it costs nothing (a strategy meets the lower bound, so it is optimal);
    ``optimum=True`` solves for it exactly (``bv.optimal_schedule``: OR-Tools, graphs of up
    to a thousand nodes, 10 seconds at most; a number sets the seconds); ``False`` leaves
    it out.

    Works before or after ``loss.value()`` and changes nothing: results, gradients and the
    graph's state are untouched. ``print()`` the result for the terminal report; in Jupyter
    it shows as an HTML table; ``.to_dict()`` gives the numbers.

    When the graph recorded where its nodes were built (``bv.Graph(record_source=True)``,
    ``with bv.recording_sources():``, or ``batchviz explain script.py``), the report names,
    for every strategy, the lines of the user's code whose nodes took more batches than the
    dependency chain of those nodes needs, and what they waited on (``explanation.split``);
    without them it says how to record them."""
    t0 = time.perf_counter()
    graph, _ = graph_of(loss)
    chosen = [resolve_strategy(s) for s in _as_list(strategies)]
    if not chosen:
        raise ValueError("explain: give at least one strategy")
    if graph.strategy.name not in {s.name for s in chosen}:
        chosen.append(graph.strategy)
    view = PendingView(graph, start=0)  # one snapshot serves every strategy (they only read it)
    a = graph_arrays(graph, view)
    bounds = chain_bounds(a)
    lower = sum(bounds.values())
    flops = total_flops(graph, a)
    model = cost_model()
    itemsize = int(state.dtype.itemsize)

    results, per_sig, strips, schedules = {}, {}, {}, {}
    top_sig = int(a.sig.max()) + 1 if a.n else 1
    for strategy in chosen:
        ran = _ran_whole(graph, strategy)
        if ran:  # the batches and plans of the graph's runs
            flat = schedules[strategy.name] = FlatSchedule.of(
                [list(b.nodes) for run in graph.plans for b in run.batches])
            copies, avoided, elements = (sum(c) for c in zip(*(run.copy_counts()
                                                               for run in graph.plans)))
        else:    # a dry run: its schedule planned as a run of the whole graph would be
            batches = schedule(strategy, view)  # (checked, unless built in)
            flat = schedules[strategy.name] = FlatSchedule.of(batches)
            copies, avoided, elements = snapshot_plan(graph, batches).copy_counts()
        kernels = len(flat) + copies
        results[strategy.name] = StrategyResult(
            name=strategy.name, batches=len(flat), kernels=kernels, copies=copies,
            copies_avoided=avoided, bytes_copied=elements * itemsize,
            estimated_seconds=model.estimate(kernels, flops + elements),
            above_lower_bound=len(flat) - lower, ran=ran)
        first_sigs = a.sig[flat.order[flat.starts()]]  # each batch's signature
        per_sig[strategy.name] = np.bincount(first_sigs, minlength=top_sig)
        strips[strategy.name] = (flat.sizes, first_sigs)

    optimal, optimal_note = explain_optimum(view, schedules, lower, optimum)
    names = list(results)
    reference = "agenda" if "agenda" in results else min(results.values(), key=lambda r: r.kernels).name
    scheduled = a.scheduled
    node_sig, node_depth = a.sig[scheduled], a.depth[scheduled]
    all_counts = np.bincount(node_sig, minlength=top_sig)
    sigs = np.flatnonzero(all_counts)
    node_counts = all_counts[sigs]
    lo = np.full(top_sig, np.iinfo(np.int64).max)
    hi = np.full(top_sig, -1)
    np.minimum.at(lo, node_sig, node_depth)
    np.maximum.at(hi, node_sig, node_depth)
    depth_sum = np.bincount(node_sig, weights=node_depth, minlength=top_sig)
    count_of = dict(zip(sigs.tolist(), node_counts.tolist()))
    short = display_names(graph, set(graph.sigs))  # the names every view of the graph uses

    def row(s: int) -> SignatureRow:
        return SignatureRow(id=s, name=graph.signature_name(s), op=graph.sigtab[s].op.name,
                            nodes=count_of[s], min_depth=int(lo[s]), max_depth=int(hi[s]),
                            average_depth=float(depth_sum[s] / count_of[s]),
                            chain_bound=bounds[s],
                            batches={n: int(per_sig[n][s]) for n in names},
                            display_name=short[s])

    by_size = sigs[np.argsort(-node_counts, kind="stable")].tolist()
    rows = [row(s) for s in by_size[:TOP_SIGNATURES]]
    winners = {}  # strategy -> the signature that gains most from it, for the verdict
    if "agenda" in results and "depth" in results and len(sigs):
        d, g = per_sig["depth"][sigs], per_sig["agenda"][sigs]
        average = depth_sum[sigs] / node_counts
        for name, gain, base in (("agenda", d - g, d), ("depth", g - d, g)):
            # most batches saved; then the largest share saved; then the latest (loss-like)
            best = np.lexsort((average, gain / np.maximum(base, 1), gain))[-1]
            winners[name] = row(int(sigs[best]))

    ref_batches = per_sig[reference][sigs]
    small = (ref_batches >= 2) & (node_counts <= 2 * ref_batches)
    flagged = sigs[small][np.argsort(-ref_batches[small], kind="stable")].tolist()
    notes = []
    for s in flagged[:TOP_SMALL]:
        notes.append(SmallBatchNote(
            name=short[s], nodes=count_of[s], batches=int(per_sig[reference][s]),
            reason=small_batch_reason(graph, s, int(per_sig[reference][s]), bounds[s], count_of,
                                      short)))

    lens, batch_sigs = strips[reference]
    largest = [BatchNote(name=short[int(batch_sigs[k])], size=int(lens[k]), step=int(k))
               for k in np.argsort(-lens, kind="stable")[:TOP_BATCHES].tolist()]

    unbatchable = sum(count_of[s] for s in count_of
                      if len(graph.sigtab[s].key) > 1 and graph.sigtab[s].key[1] == "unbatchable")
    return Explanation(
        nodes=int(len(scheduled)), parameters=int(a.is_param.sum()), signatures=int(len(sigs)),
        lower_bound=lower, strategies=results, reference=reference, rows=rows,
        more_signatures=max(0, len(sigs) - len(rows)),
        more_signature_nodes=int(node_counts.sum() - sum(r.nodes for r in rows)),
        largest=largest, small=notes, more_small=max(0, len(flagged) - len(notes)),
        unbatchable=unbatchable, verdict=verdict(results, winners),
        launch_seconds=model.launch_seconds, flops_per_second=model.flops_per_second,
        flops=flops, seconds=time.perf_counter() - t0, optimum=optimal, optimum_note=optimal_note,
        sources_recorded=graph.sources is not None,
        split={n: split_notes(graph, a, schedules[n], bounds, per_sig[n], short)
               for n in names if n != "none"},  # no batching splits everything
        _arrays=a, _graph=graph, _strips=strips)


def _ran_whole(graph, strategy) -> bool:
    """Whether every node of ``graph`` ran, with ``strategy``: its runs are then what the
    report shows for ``strategy`` (not a dry run)."""
    return ran_with(graph, strategy) and graph.n_evaluated == len(graph.ops)


def _as_list(strategies) -> list:
    """``strategies`` as a list: one name (``"depth"``) or one Strategy is one strategy, not
    a sequence to iterate (a string would give its letters)."""
    if isinstance(strategies, (str, Strategy, type)) or hasattr(strategies, "schedule"):
        return [strategies]
    return list(strategies)
