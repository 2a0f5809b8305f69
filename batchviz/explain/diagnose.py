"""Why nodes stayed in small batches, and the one-line verdict.

Nodes of two signatures never share a batch, so "why is this signature in many small
batches?" has two possible answers: its nodes depend on each other (a dependency chain
of that signature: no strategy can do better), or nodes that *look* similar have a different
signature - and then comparing the two signature keys part by part names the difference:
the op, a shape, or the shared argument (``W#3`` vs ``W#9``).
"""
from __future__ import annotations

from ..signature import shape_text
from ..words import bytes_text, counted


def _is_shape(part) -> bool:
    return isinstance(part, tuple) and all(isinstance(d, int) for d in part)


def _is_node(part) -> bool:
    return isinstance(part, tuple) and len(part) == 2 and part[0] == "node"


def _part_text(part, graph) -> str:
    if _is_node(part):
        param = graph.param_of_node.get(part[1])
        return f"{param.name}#{part[1]}" if param is not None else f"node {part[1]}"
    if _is_shape(part):
        return shape_text(part)
    return str(part)


def key_differences(graph, key_a: tuple, key_b: tuple) -> list:
    """``[(what, a, b)]``: the parts in which two signature keys differ, in words."""
    if key_a[0] != key_b[0]:
        return [("op", str(key_a[0]), str(key_b[0]))]
    if len(key_a) != len(key_b):
        return [("number of arguments", str(len(key_a) - 1), str(len(key_b) - 1))]
    op = graph.sigtab.infos[graph.sigtab.ids[key_a]].op if key_a in graph.sigtab.ids else None
    out = []
    for pa, pb in zip(key_a[1:], key_b[1:]):
        if pa == pb:
            continue
        if _is_node(pa) or _is_node(pb):
            what = "shared argument"
        elif _is_shape(pa) and _is_shape(pb):
            what = "shape"
        elif isinstance(pa, int) and isinstance(pb, int) and op is not None and op.arity is None:
            what = "number of arguments"
        else:
            what = "attribute"
        out.append((what, _part_text(pa, graph), _part_text(pb, graph)))
    return out


def nearest_neighbour(graph, sig: int, node_counts: dict):
    """The signature of the same op whose key differs from ``sig``'s in the fewest parts
    (ties: the one with more nodes), with the differences; None if the op has no other."""
    key = graph.sigtab[sig].key
    best = None
    for other, count in node_counts.items():
        if other == sig:
            continue
        other_key = graph.sigtab[other].key
        if other_key[0] != key[0] or (len(other_key) > 1 and other_key[1] == "unbatchable"):
            continue
        diffs = key_differences(graph, key, other_key)
        rank = (len(diffs), -count)
        if best is None or rank < best[0]:
            best = (rank, other, diffs)
    return None if best is None else (best[1], best[2])


def small_batch_reason(graph, sig: int, batches: int, bound: int, node_counts: dict,
                       names: dict | None = None) -> str:
    """Why ``sig``'s nodes took ``batches`` batches, in words (``names``: the signatures'
    short names, :mod:`batchviz.signature_names`; default: their full descriptions)."""
    key = graph.sigtab[sig].key
    if len(key) > 1 and key[1] == "unbatchable":
        return f"{key[0]} is unbatchable: each of its nodes has a signature of its own (App. A)"
    parts = []
    if batches <= bound:
        parts.append(f"its nodes form a dependency chain of {bound}: no strategy needs fewer batches")
    elif bound > 1:
        parts.append(f"{counted(batches - bound, 'batch')} more than its longest dependency chain ({bound})")
    found = nearest_neighbour(graph, sig, node_counts)
    if found is not None:
        other, diffs = found
        what = "; ".join(f"{w} {a} vs {b}" for w, a, b in diffs[:2])
        parts.append(f"cannot join the {counted(node_counts[other], 'node')} of "
                     f"{(names or {}).get(other) or graph.signature_name(other)}: {what}")
    elif not parts:
        parts.append(f"no other node computes {key[0]} with this signature")
    return "; ".join(parts)


def verdict(results: dict, winners: dict) -> str:
    """One line: how agenda and depth compare, and what makes the difference
    (``winners[strategy]``: the signature that strategy batches best compared to the other).

    A launch is a batch's kernel or a copy's, so the strategy with fewer launches may run
    more batches and copy less: then the line says so, rather than name a signature that
    both strategies batch alike."""
    if all(r.batches == 0 for r in results.values()):
        return "nothing to schedule: the graph has no nodes to compute"
    if "agenda" not in results or "depth" not in results:
        best = min(results.values(), key=lambda r: r.kernels)
        return f"{best.name} needs the fewest kernel launches ({best.kernels})"
    a, d = results["agenda"].kernels, results["depth"].kernels
    if a == d:
        if results["agenda"].batches == results["depth"].batches:
            return (f"agenda and depth need the same number of launches ({a}): depth batching "
                    "already finds every batch the agenda finds on this graph")
        return (f"agenda and depth need the same number of launches ({a}): "
                + _batches_and_copies(results["agenda"], results["depth"]))
    winner, loser = ("agenda", "depth") if a < d else ("depth", "agenda")
    pct = round(100 * (max(a, d) - min(a, d)) / max(a, d))
    won, lost = results[winner], results[loser]
    gain = winners[winner]
    if gain.batches[winner] >= gain.batches[loser]:  # no signature takes fewer batches
        return (f"{winner} needs {pct}% fewer launches than {loser} ({won.kernels} against "
                f"{lost.kernels}): " + _batches_and_copies(won, lost))
    where = (f"depth {gain.min_depth}" if gain.min_depth == gain.max_depth
             else f"depths {gain.min_depth}\u2013{gain.max_depth}")
    return (f"{winner} needs {pct}% fewer launches than {loser}: the {gain.nodes} "
            f"{gain.display_name or gain.name} nodes sit at {where} ({gain.batches[loser]} batches with {loser}, "
            f"{gain.batches[winner]} with {winner})")


def _batches_and_copies(first, second) -> str:
    """Where two strategies' launches come from when no signature explains the difference:
    their batches and their copies, ``first`` before ``second``."""
    if first.batches == second.batches:
        batches = f"the same {counted(first.batches, 'batch')}"
    else:
        batches = (f"{counted(first.batches, 'batch')} against {second.batches}")
    return (f"{first.name} runs {batches} and copies {first.copies} argument blocks "
            f"against {second.copies} ({bytes_text(first.bytes_copied)} against "
            f"{bytes_text(second.bytes_copied)})")
