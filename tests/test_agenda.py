"""The agenda (batchviz.schedule.agenda and decisions): the Agenda data structure, the loop
that runs a Rule over it, and the decisions it records - checked against a plain oracle
of what is ready at every step."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import batchviz as bv
from batchviz.errors import ScheduleError
from batchviz.examples import figure1
from batchviz.schedule import (Agenda, AgendaBatching, DepthBatching, LookaheadBatching,
                               NoBatching, PendingView, average_depths, record_decisions,
                               run_agenda, schedule)


from helpers import STRATEGIES
from models import Params, load_tutorial_graphs, random_dag_losses, rnn_loss

SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def random_graph(seed: int):
    rng = np.random.default_rng(seed)
    P = Params(bv.Model(seed=seed))
    graph = bv.Graph()
    with graph:
        losses = [rnn_loss(P, list(rng.integers(0, 7, size=int(n))), rng.normal(size=2))
                  for n in rng.integers(1, 5, size=3)]
        losses += random_dag_losses(P, rng, int(rng.integers(3, 15)))
        bv.esum(losses)
    return graph


def ready_oracle(view, done: set) -> dict:
    """{signature: count} of the pending nodes not done whose pending arguments are done."""
    ready = {}
    for i in view.nodes:
        if i not in done and all(a in done for a in view.pending_args(i)):
            ready[view.signature[i]] = ready.get(view.signature[i], 0) + 1
    return ready


def test_the_agenda_holds_the_ready_nodes_and_counts_users_down():
    graph, _, _ = figure1()
    view = PendingView(graph, start=0)
    agenda = Agenda(view)
    assert {s: len(n) for s, n in agenda.ready.items()} == ready_oracle(view, set())
    assert agenda.waiting == len(view.nodes) - sum(map(len, agenda.ready.values()))
    zeros = next(s for s in agenda.ready if graph.signature_name(s) == "zeros-4x1")
    batch, ready = agenda.run(zeros)
    assert batch == [0, 19, 39] and zeros not in agenda.ready
    assert ready == []  # each concatenate waits for its input too
    inputs = next(s for s in agenda.ready if graph.signature_name(s) == "input-3x1")
    batch, ready = agenda.run(inputs, [1])  # a rule may take fewer nodes than the group
    assert batch == [1] and len(agenda.ready[inputs]) == 8
    assert ready == [2]  # the first concatenate now has both arguments
    assert agenda.waiting == len(view.nodes) - 3 - 1 - sum(map(len, agenda.ready.values()))


@SETTINGS
@given(seed=st.integers(0, 10**6), strategy=st.sampled_from(STRATEGIES))
def test_decisions_show_the_agenda_at_every_step(seed, strategy):
    """Every decision lists exactly the signature groups on the agenda (an oracle computes
    them), the chosen group first, and the batch is among its nodes; recording changes no
    batch."""
    graph = random_graph(seed)
    batches, log = record_decisions(bv.schedule.resolve_strategy(strategy),
                                    PendingView(graph, start=0))
    assert batches == schedule(bv.schedule.resolve_strategy(strategy), PendingView(graph, start=0))
    view, done = PendingView(graph, start=0), set()
    assert len(log.decisions) == len(batches)
    for decision, batch in zip(log.decisions, batches):
        assert {c.signature: c.size for c in decision.candidates} == ready_oracle(view, done)
        assert decision.candidates[0].signature == decision.chosen == view.signature[batch[0]]
        assert list(decision.batch) == batch
        assert all(len(c.key) == len(log.key_names) for c in decision.candidates)
        done.update(batch)
        assert decision.waiting == len(view.nodes) - len(done) + len(batch) - sum(
            c.size for c in decision.candidates)


def test_the_agenda_rule_runs_the_lowest_key_and_says_why():
    graph, _, _ = figure1()
    view = PendingView(graph, start=0)
    batches, log = record_decisions(AgendaBatching(), view)
    assert len(batches) == 23 and log.key_names == ("average depth", "cost")
    average = average_depths(view)
    for d in log.decisions:
        keys = [(c.key, c.signature) for c in d.candidates]
        assert keys[0] == min(keys)  # the chosen group has the lowest key
        assert all(c.key[0] == average[c.signature] for c in d.candidates)
        for c in d.candidates[1:]:
            assert c.note.startswith("waits:")
    notes = [d.candidates[0].note for d in log.decisions]
    assert notes[0] == "tie on average depth and cost broken by the lower signature id"
    step11 = log.decisions[11].candidates
    assert step11[1].note == (f"waits: higher average depth ({step11[1].key[0]:.2f} > "
                              f"{step11[0].key[0]:.2f})")


@pytest.mark.parametrize("strategy, key_names, reason", [
    (DepthBatching(), ("depth",), "depth"),
    (NoBatching(), ("first node",), "creation order"),
])
def test_strategies_without_the_loop_are_described_by_their_own_key(strategy, key_names, reason):
    """Depth and no batching schedule without the agenda; their batches are walked through
    it, and their own key (describe) says why each one ran."""
    graph, _, _ = figure1()
    view = PendingView(graph, start=0)
    batches, log = record_decisions(strategy, view)
    assert log.key_names == key_names
    for d, batch in zip(log.decisions, batches):
        assert d.candidates[0].note.startswith(reason)
        if isinstance(strategy, DepthBatching):
            assert d.candidates[0].key == (graph.depths[batch[0]],)
            assert all(c.key >= d.candidates[0].key for c in d.candidates)
        else:
            assert d.candidates[0].key == (batch[0],) and len(batch) == 1


def test_a_users_rule_is_its_own_strategy_with_its_own_words():
    class OneAtATime(bv.Rule):
        """No batching, written as a rule that takes one node of a group."""
        key_names = ("first node",)

        def key(self, signature, agenda):
            return (min(agenda.ready[signature]),)

        def nodes(self, signature, agenda):
            return [min(agenda.ready[signature])]

    class Mine(bv.AgendaStrategy):
        name = "one-at-a-time"

        def rule(self, view):
            return OneAtATime()

    graph, loss, _ = figure1(Mine())
    view = PendingView(graph, start=0)
    assert schedule(Mine(), view) == NoBatching().schedule(view)
    _, log = record_decisions(Mine(), PendingView(graph, start=0))
    assert log.decisions[0].candidates[0].note == "lowest first node"
    assert loss.value() == pytest.approx(figure1("none")[1].value(), rel=1e-6)


def test_a_rule_that_forgets_its_key_says_so():
    class NoKey(bv.AgendaStrategy):
        name = "no-key"

        def rule(self, view):
            return bv.Rule()

    graph, _, _ = figure1()
    with pytest.raises(NotImplementedError, match="must define key"):
        schedule(NoKey(), PendingView(graph, start=0))


def test_recording_changes_no_batch_on_a_large_graph():
    """A run and a trace go through the same loop: recording the decisions of a graph with
    large batches gives the batches of the run, one decision per batch."""
    graph = load_tutorial_graphs().tree_lstm(n_trees=64)[0]
    plain = AgendaBatching().schedule(PendingView(graph, start=0))
    recorded, log = record_decisions(AgendaBatching(), PendingView(graph, start=0))
    assert recorded == plain and len(log.decisions) == len(plain)


def test_a_strategy_returning_nothing_is_told_what_to_return():
    class Forgetful(bv.Strategy):
        name = "forgetful"

        def schedule(self, view):
            batches = [[i] for i in view.nodes]  # noqa: F841  (the return is missing)

    graph, _, _ = figure1()
    with pytest.raises(ScheduleError, match="must return a list of batches.*return` missing"):
        schedule(Forgetful(), PendingView(graph, start=0))
    with pytest.raises(ScheduleError, match="batch 0 is 0, not a list of node ids"):
        class Flat(bv.Strategy):
            name = "flat"

            def schedule(self, view):
                return list(view.nodes)
        schedule(Flat(), PendingView(graph, start=0))


def test_lookahead_records_its_safety():
    graph, _, _ = figure1()
    batches, log = record_decisions(LookaheadBatching(), PendingView(graph, start=0))
    assert log.key_names == ("safe", "average depth", "cost")
    assert len(batches) == 23
    assert {c.key[0] for d in log.decisions for c in d.candidates} <= {"yes", "no"}
    assert run_agenda(PendingView(graph, start=0),
                      LookaheadBatching().rule(PendingView(graph, start=0))) == batches


@pytest.mark.parametrize("seed", range(4))
def test_users_has_a_list_for_every_pending_node(seed):
    """``view.users()`` is ``{node: [pending users]}`` for *every* pending node, an empty list
    where none uses it (the loss): ``users[node]`` never raises KeyError for a node of
    ``view.nodes``. Checked against the arguments, after a first run (so that done nodes and
    parameters are left out)."""
    rng = np.random.default_rng(seed)
    P = Params(bv.Model(seed=seed))
    graph = bv.Graph()
    with graph:
        first = rnn_loss(P, list(rng.integers(0, 7, size=3)), rng.normal(size=2))
        first.value()  # a first run: the view below is what is still pending
        losses = [first] + random_dag_losses(P, rng, int(rng.integers(3, 15)))
        total = bv.esum(losses)
    view = PendingView(graph)
    users = view.users()
    assert list(users) == list(view.nodes)
    expected = {node: [] for node in view.nodes}
    for node in view.nodes:
        for a in view.pending_args(node):
            expected[a].append(node)
    assert users == expected
    assert users[total.node] == []
    graph.finish()
