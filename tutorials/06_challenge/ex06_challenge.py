"""Exercise 6 (open challenge): beat the agenda.

The paper's agenda heuristic is good, not optimal: finding the schedule with the fewest
batches is NP-hard in general (§3.2). Design your own strategy and make it need *fewer
batches than AgendaBatching* on two hard graphs: a Tree-LSTM over 64 random trees of 5-50
leaves, and a transition parser (a BiLSTM encoder per sentence, then MLP scoring steps that
pick encoder states, with arcs composing head and dependent; several parsers advanced in
parallel). Both are built in ``tutorials/_graphs.py`` (``tree_lstm``, ``parser``).

Ideas to measure (the tests print a leaderboard with the agenda's count and a lower bound):

* look at *where* the agenda wastes batches: count batches per signature
  (``view.signature_name(s)``) for your schedule and for ``AgendaBatching``;
* the agenda's priority is the average depth over *all* pending nodes of a signature; what
  about the nodes that remain, or only the nodes that could still join the batch?
* two nodes of one signature on one dependency path can never share a batch: the longest
  such chain is a lower bound on that signature's batches. Can you run a signature only
  when running it now cannot cost an extra batch later?

Your strategy must return valid schedules (the runtime checks them) and compute exactly
what unbatched execution computes. Run ``pytest tutorials/06_challenge`` (or
``python -m batchviz.grade tutorials`` for every exercise), and watch your strategy with
``bv.Stepper(loss, strategy=MyStrategy())``.
"""
import batchviz as bv


class MyStrategy(bv.Strategy):
    """Your strategy. Explain in this docstring why it should beat the agenda."""

    name = "my-strategy"

    def schedule(self, view):
        raise NotImplementedError(
            "Exercise 6: return a valid schedule (list of batches of node ids sharing a "
            "signature, arguments first) with fewer batches than the agenda on the Tree-LSTM and "
            "parser graphs")
