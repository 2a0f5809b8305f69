"""The paper's Figure 1: RNN regression over three sequences of different lengths (2, 3, 4).

Counted by hand from the graph (per sequence: a zero state; per step an input, a
concatenation, W @ ., + b, tanh; then U @ h, + c, the target input and the squared
distance; one esum over the three losses - 61 computed nodes):

* none: 61 batches, one per node.
* depth: the three kinds of leaves (x inputs, y inputs, zero states) are at depth 0: 3
  batches; each of the 4 time steps is 4 batches (concatenate, matmul, add, tanh) at depths
  shared by all sequences still running: 16; the output layer of each sequence (U @ h, + c,
  squared distance) sits at a depth set by that sequence's length: 3 x 3 = 9; esum: 1.
  Total 29.
* agenda: the longest chain of each signature, summed (the lower bound): tanh 4, concatenate
  4, matmul-W 4, add 5 (4 hidden + 1 output), and 1 each for zeros, x inputs, y inputs,
  matmul-U, squared distance and esum: 23. Agenda reaches it: the three losses wait for each
  other and run as one batch.
"""
import pytest

from batchviz.examples import figure1
from batchviz.schedule import PendingView, resolve_strategy


def schedule_of(strategy):
    graph, loss, _ = figure1(strategy)
    view = PendingView(graph)
    return graph, resolve_strategy(strategy).schedule(view)


def loss_batches(graph, batches):
    return [b for b in batches if graph.ops[b[0]].name == "squared_distance"]


@pytest.mark.parametrize("strategy,expected", [("none", 61), ("depth", 29), ("agenda", 23)])
def test_batch_counts(strategy, expected):
    graph, batches = schedule_of(strategy)
    assert len(batches) == expected
    graph.finish()


def test_agenda_batches_the_three_losses_depth_cannot():
    graph, batches = schedule_of("agenda")
    assert [len(b) for b in loss_batches(graph, batches)] == [3]
    graph, batches = schedule_of("depth")
    assert [len(b) for b in loss_batches(graph, batches)] == [1, 1, 1]


def test_executed_counts_match_schedule_and_values_agree():
    values = {}
    for strategy, expected in (("none", 61), ("depth", 29), ("agenda", 23)):
        graph, loss, _ = figure1(strategy)
        values[strategy] = loss.value()
        assert graph.last_stats.forward.batches == expected
        assert graph.last_stats.forward.nodes == 61
    assert values["depth"] == pytest.approx(values["none"], rel=1e-6)
    assert values["agenda"] == pytest.approx(values["none"], rel=1e-6)
