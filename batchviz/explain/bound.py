"""The lower bound on the number of batches of any schedule.

Two nodes of one signature can share a batch only if neither depends on the other. So for
each signature, the longest dependency chain counted in nodes *of that signature* (other
nodes may sit between them) needs that many batches, whatever the strategy; nodes of
different signatures never share a batch, so the bound is the sum over signatures. (By
Mirsky's theorem the chain length is also enough for one signature alone; together the
signatures can interfere, so the bound may be out of reach.)

The chain length of signature ``s`` ending at node ``i`` is
``[sig(i) == s] + max over arguments a of chain_s(a)``, counted for all signatures at once,
depth level after depth level, by :func:`batchviz.schedule.chains.signature_chains` (which
the lookahead strategy runs the other way, over users).
"""
from __future__ import annotations

from ..schedule.chains import signature_chains
from ..plan.arrays import GraphArrays


def chain_bounds(a: GraphArrays) -> dict:
    """``{signature: longest dependency chain of its nodes}`` over the scheduled nodes."""
    return signature_chains(a.scheduled, a.sig, a.depth, a.edge_ptr, a.edge_arg).longest
