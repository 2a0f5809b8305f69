"""Exercise 4: agenda-based batching (the paper's §3.2, the method it proposes).

The *agenda* holds the nodes whose arguments have all been computed. Each node keeps a
count of its unresolved arguments, initialized to its number of pending arguments; nodes
with none start on the agenda. At each step, choose one signature present on the agenda and
run *all* agenda nodes of that signature as one batch; then decrement the counts of their
users, and users that reach zero join the agenda. Repeat until the agenda is empty.

Which signature first? The one with the lowest *priority*, a tuple compared element by
element:

1. the **average depth** of all pending nodes of that signature (over the whole pending
   graph, not only those on the agenda): signatures that typically come late, like the
   losses of sequences of different lengths, wait until all their nodes are ready;
2. on a tie, **cheap before heavy**: element-wise ops (``view.is_cheap(sig)``) before matrix
   products (the paper's footnote);
3. on a further tie, the smaller signature id.

Your schedule must be *exactly* the runtime's ``AgendaBatching`` schedule: the same batches
in the same order. Depths are ``view.depth[i]``; ``view.pending_args(i)`` gives the
arguments still to run (the rest are done); ``view.users()`` maps a node to its pending
users. Run ``pytest tutorials/04_agenda``; watch your scheduler with
``bv.Stepper(loss, strategy=AgendaStrategy())`` in Jupyter.
"""
import batchviz as bv


def average_depths(view):
    """``{signature: average depth of the pending nodes with that signature}``."""
    raise NotImplementedError(
        "Exercise 4: for every signature in view.signature[i] over i in view.nodes, average "
        "view.depth[i] over those nodes; return a dict signature -> average depth")


def priority(view, sig, average_depth):
    """The sort key of signature ``sig`` on the agenda (lower runs first)."""
    raise NotImplementedError(
        "Exercise 4: return the tuple (average depth, heavy-after-cheap flag, signature id); "
        "note that False < True")


class AgendaStrategy(bv.Strategy):
    """The paper's agenda-based batching."""

    name = "student-agenda"

    def schedule(self, view):
        raise NotImplementedError(
            "Exercise 4: count each node's pending arguments, put the nodes with none on the "
            "agenda (grouped by signature), then repeatedly run all agenda nodes of the signature "
            "with the lowest priority(...) and release their users")
