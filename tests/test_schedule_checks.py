"""A strategy's mistakes are ScheduleErrors that name the strategy and the mistake, raised
the same way wherever its schedule is asked for: in a run, in a run that records its
decisions, in a trace and in the step-through widget (issue 44, item 6)."""
import numpy as np
import pytest

import batchviz as bv
from batchviz.examples import figure1
from batchviz.schedule import PendingView, validate_schedule


class NodeOutOfRange(bv.Strategy):
    name = "out-of-range"

    def schedule(self, view):
        return [[9999]]


class StringIds(bv.Strategy):
    name = "string-ids"

    def schedule(self, view):
        return [[str(node)] for node in view.nodes]


class BoolIds(bv.Strategy):
    name = "bool-ids"

    def schedule(self, view):
        return [[True] for node in view.nodes]


class KeyWithoutReturn(bv.Rule):
    """A newcomer's rule: the key is computed, and the `return` forgotten."""
    key_names = ("nodes on the agenda",)

    def key(self, signature, agenda):
        -len(agenda.ready[signature])


class KeyWithoutReturnStrategy(bv.AgendaStrategy):
    name = "no-return"

    def rule(self, view):
        return KeyWithoutReturn()


def in_a_run(strategy):
    with bv.Graph(strategy=strategy):
        loss = bv.sum_elems(bv.tanh(bv.zeros(3)) + bv.logistic(bv.zeros(3)))
        loss.value()


def in_a_recorded_run(strategy):
    with bv.Graph(strategy=strategy, record=True):
        loss = bv.sum_elems(bv.tanh(bv.zeros(3)) + bv.logistic(bv.zeros(3)))
        loss.value()


def in_a_trace(strategy):
    graph, loss, _ = figure1()
    try:
        bv.trace(loss, strategy)
    finally:
        graph.finish()


def in_the_widget(strategy):
    pytest.importorskip("ipywidgets")
    graph, loss, _ = figure1()
    try:
        bv.Stepper(loss, strategy=strategy)
    finally:
        graph.finish()


WHERE = [in_a_run, in_a_recorded_run, in_a_trace, in_the_widget]

CASES = {
    "a node id that does not exist": (
        NodeOutOfRange(), r"^strategy 'out-of-range': batch 0 contains node 9999, which is "
                          r"not pending: the nodes to schedule are view\.nodes \(ids 0 to \d+"),
    "string ids": (
        StringIds(), r"^strategy 'string-ids': batch 0 contains '\d+' \(str\), not a node id"),
    "bool ids": (
        BoolIds(), r"^strategy 'bool-ids': batch 0 contains True \(bool\), not a node id"),
    "a rule's key of None": (
        KeyWithoutReturnStrategy(),
        r"^strategy 'no-return': rule KeyWithoutReturn: key\(signature \d+, agenda\) returned "
        r"None; a rule's key must be a tuple, one value per key_names entry "
        r"\('nodes on the agenda',\).*is a `return` missing\?"),
    "a rule instead of a strategy": (
        KeyWithoutReturn(),
        r"^strategy: the rule KeyWithoutReturn\(\) \(a bv\.Rule\) was given where a strategy "
        r"is expected.*Wrap it in a bv\.AgendaStrategy.*return KeyWithoutReturn\(\)"),
    "a rule class instead of a strategy": (
        KeyWithoutReturn, r"^strategy: the rule KeyWithoutReturn \(a bv\.Rule\) was given"),
}


@pytest.mark.parametrize("where", WHERE, ids=lambda f: f.__name__)
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_strategy_is_a_schedule_error_naming_it_everywhere(case, where):
    strategy, message = CASES[case]
    with pytest.raises(bv.ScheduleError, match=message):
        where(strategy)


def test_the_raw_errors_are_gone():
    """What these cases raised before: an IndexError, a TypeError, or (for the key of None)
    nothing in a run. A ScheduleError is none of the first two."""
    for strategy, _ in CASES.values():
        with pytest.raises(bv.ScheduleError) as caught:
            in_a_run(strategy)
        assert not isinstance(caught.value, (IndexError, TypeError))


def test_numpy_ids_are_node_ids():
    """A strategy that computes its batches with NumPy may return NumPy ints."""
    class NumpyDepth(bv.Strategy):
        name = "numpy-depth"

        def schedule(self, view):
            return [np.array([node], dtype=np.int64) for node in view.nodes]

    with bv.Graph(strategy=NumpyDepth()):
        loss = bv.sum_elems(bv.tanh(bv.zeros(3)))
        assert loss.value() == pytest.approx(0.0)


def test_validate_schedule_names_the_strategy_only_when_given():
    graph, loss, _ = figure1()
    view = PendingView(graph, start=0)
    with pytest.raises(bv.ScheduleError, match=r"^batch 0 contains node 9999"):
        validate_schedule(view, [[9999]])
    with pytest.raises(bv.ScheduleError, match=r"^strategy 'out-of-range': batch 0"):
        validate_schedule(view, [[9999]], NodeOutOfRange())
    graph.finish()


def test_registering_a_rule_says_to_wrap_it():
    with pytest.raises(bv.ScheduleError, match=r"^register_strategy: the rule KeyWithoutReturn"):
        bv.register_strategy(KeyWithoutReturn)


def test_a_rule_whose_key_is_a_list_still_runs():
    """A list is read as the tuple it lists (the recording stores tuples)."""
    class ListKey(bv.Rule):
        key_names = ("nodes on the agenda",)

        def key(self, signature, agenda):
            return [-len(agenda.ready[signature])]

    class ListKeyStrategy(bv.AgendaStrategy):
        name = "list-key"

        def rule(self, view):
            return ListKey()

    graph, loss, _ = figure1()
    steps = bv.trace(loss, ListKeyStrategy()).steps
    assert steps and all(isinstance(g.key, tuple) for s in steps for g in s.agenda)
    graph.finish()
