"""Layout batching (batchviz/schedule/layout.py): valid schedules made of the lookahead's
batches (or the agenda's, where they are one batch per signature), on any valid schedule
the walk is given; a read the layout promises as a view is a view in the plan; the batch counts (at the lower bound) and the
elements copied (no more than the agenda's) pinned on small versions of the benchmark
graphs; and the decisions a trace shows. Values and gradients equal to unbatched execution
are checked with every other strategy (tests/helpers.py STRATEGIES)."""
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import batchviz as bv
from batchviz.data import Vocab, synthetic_trees
from batchviz.examples import figure1
from batchviz.plan import View
from batchviz.plan.reads import is_copy
from batchviz.schedule import (BUILT_IN, AgendaBatching, LayoutBatching, PendingView,
                               resolve_strategy, run_agenda, validate_schedule)
from batchviz.schedule.layout import followers, lay_out, walk_backward
from batchviz.schedule.lookahead import LookaheadBatching, batch_lower_bound
from batchviz.trace.record import snapshot_plan

from models import TUTORIAL_GRAPHS, load_tutorial_graphs, lstm_models_loss, mixed_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks package

from benchmarks import bilstm, overhead, treelstm  # noqa: E402
from benchmarks.taggers import Tagger  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
graph_params = st.tuples(st.integers(0, 10**6), st.integers(1, 8), st.booleans())
G = load_tutorial_graphs()


def lookahead_batches(view) -> list:
    return run_agenda(view, LookaheadBatching().rule(view))


# --- the strategy ---------------------------------------------------------------------------

def test_layout_is_a_built_in_trusted_strategy():
    strategy = resolve_strategy("layout")
    assert isinstance(strategy, LayoutBatching) and strategy.trusted and "layout" in BUILT_IN
    g, loss, _ = figure1("layout")
    loss.value()
    assert g.last_stats.strategy == "layout"
    assert g.last_stats.forward.batches == 23


def batch_sets(batches) -> list:
    return sorted(map(sorted, batches))


@SETTINGS
@given(params=graph_params)
def test_schedules_are_valid_and_made_of_the_lookaheads_or_optimal_agenda_batches(params):
    view = PendingView(mixed_graph(*params))
    batches = LayoutBatching().schedule(view)
    validate_schedule(view, batches)
    agenda = AgendaBatching().schedule(view)
    signatures = {view.signature[i] for i in view.nodes}
    if view.end - view.start < LayoutBatching.AGENDA_FIRST_BELOW and len(agenda) == len(signatures):
        assert batch_sets(batches) == batch_sets(agenda)  # the fewest possible, cheaply
    else:
        assert batch_sets(batches) == batch_sets(lookahead_batches(view))


def test_one_batch_per_signature_is_taken_from_the_agenda():
    """A minibatch of one-layer MLPs: the agenda runs each signature once, which no schedule
    can beat, so those are the batches (laid out for their readers)."""
    model = bv.Model(seed=0)
    W, b = model.add_parameters((4, 3)), model.add_parameters(4)
    with bv.Graph("layout") as g:
        losses = [bv.sum_elems(bv.tanh(W @ bv.input(np.full(3, k)) + b)) for k in range(20)]
        loss = bv.esum(losses)
        view = PendingView(g)
        batches = LayoutBatching().schedule(view)
        assert len(batches) == len({view.signature[i] for i in view.nodes}) == 6
        assert batch_sets(batches) == batch_sets(AgendaBatching().schedule(view))
        assert loss.value() == pytest.approx(sum(float(x.value()) for x in losses))
        assert g.last_stats.forward.batches == 6


# --- the walk on any schedule ------------------------------------------------------------

def assert_laid_out(view):
    """The walk reorders any valid schedule (the lookahead's, the agenda's) into a valid
    schedule of the same batches."""
    for batches in (lookahead_batches(view), run_agenda(view, AgendaBatching().rule(view))):
        laid_out = lay_out(view, batches)
        validate_schedule(view, laid_out)
        assert batch_sets(laid_out) == batch_sets(batches)


@SETTINGS
@given(params=graph_params)
def test_the_walk_lays_out_any_valid_schedule(params):
    assert_laid_out(PendingView(mixed_graph(*params)))


@pytest.mark.parametrize("name", sorted(TUTORIAL_GRAPHS))
def test_the_walk_lays_out_the_tutorial_graphs(name):
    graph = TUTORIAL_GRAPHS[name]()[0]
    graph.finish()
    assert_laid_out(PendingView(graph))


def test_large_views_are_laid_out_by_the_same_walk():
    view = PendingView(G.tree_lstm(n_trees=64)[0])
    assert view.end - view.start >= LayoutBatching.AGENDA_FIRST_BELOW
    assert LayoutBatching().schedule(view) == lay_out(view, lookahead_batches(view))


# --- what the layout promises ---------------------------------------------------------------

def first_reads(view, batches: list) -> dict:
    """Per node, its first read in ``batches``: (reader batch, position, reader's place), or
    (reader batch, place, position) for a reader that reads node after node."""
    together = {s for s, info in enumerate(view.graph.sigtab.infos) if info.op.one_gather}
    reads: dict = {}
    for k, batch in enumerate(batches):
        node_major = view.signature[batch[0]] in together
        for index, node in enumerate(batch):
            for position, a in enumerate(view.args[node]):
                if view.is_pending(a):
                    read = (k, index, position) if node_major else (k, position, index)
                    reads[a] = min(reads.get(a, read), read)
    return reads


def promised_views(view, batches: list):
    """``(batch, read index)`` of every read whose arguments all lie in one earlier batch
    and are read there first, each by the node that reads it here: the layout puts them
    back to back in this batch's order, so the plan must read them in place. (Not the
    reads of or by a batch that follows its arguments: it is sorted after the walk.)"""
    first = first_reads(view, batches)
    batch_of = {node: k for k, batch in enumerate(batches) for node in batch}
    together = {s for s, info in enumerate(view.graph.sigtab.infos) if info.op.one_gather}
    follows = followers(view, batches)
    for k, batch in enumerate(batches):
        if k in follows:
            continue
        node_major = view.signature[batch[0]] in together
        positions = ([None] if node_major else range(len(view.args[batch[0]])))
        for r, position in enumerate(positions):
            wanted = [(a, (k, i, p) if node_major else (k, p, i))
                      for i, node in enumerate(batch)
                      for p, a in enumerate(view.args[node]) if position in (None, p)]
            if (all(view.is_pending(a) for a, _ in wanted)
                    and len({batch_of[a] for a, _ in wanted}) == 1
                    and batch_of[wanted[0][0]] not in follows
                    and all(first[a] == read for a, read in wanted)):
                yield k, r


@SETTINGS
@given(params=graph_params)
def test_reads_laid_out_back_to_back_are_views(params):
    graph = mixed_graph(*params)
    view = PendingView(graph, start=0)
    batches = LayoutBatching().schedule(view)
    plan = snapshot_plan(graph, batches)
    promised = list(promised_views(view, batches))
    for k, r in promised:
        assert not is_copy(plan.batches[k].reads[r]), (k, r, plan.batches[k].reads[r])


def test_the_promise_covers_most_reads_of_a_bilstm():
    graph = bv.Graph("layout")
    with graph:
        lstm_models_loss()
    view = PendingView(graph, start=0)
    batches = LayoutBatching().schedule(view)
    promised = list(promised_views(view, batches))
    reads = sum(len(b.reads) for b in snapshot_plan(graph, batches).batches)
    assert len(promised) > reads / 3


# --- what it buys: batches at the lower bound, fewer elements copied ------------------------

def overhead_graph():
    """The overhead benchmark's naive 2-layer BiLSTM tagger, at its quick sizes."""
    s = overhead.QUICK
    rng = np.random.default_rng(0)
    data = [(rng.integers(0, s["vocab"], size=s["length"]),
             rng.integers(0, s["labels"], size=s["length"])) for _ in range(s["instances"])]
    return overhead.build(overhead.Tagger(s), data, "agenda")[0]


def treelstm_graph():
    """Table 1's Tree-LSTM minibatch, at its quick sizes."""
    s = treelstm.QUICK
    trees = synthetic_trees(s["trees"], min_leaves=s["min_leaves"], max_leaves=s["max_leaves"],
                            n_labels=s["labels"], vocab_size=s["vocab"], seed=0)
    vocab = Vocab.from_corpus([t.words() for t in trees])
    classifier = treelstm.TreeClassifier(bv.Model(seed=0), len(vocab), s["embed"], s["hidden"],
                                         s["labels"])
    with bv.Graph("agenda") as g:
        bv.esum([classifier.loss(t, vocab) for t in trees])
    return g


def bilstm_graph():
    """Table 1's BiLSTM tagger minibatch (sentences of varied lengths), at its quick sizes."""
    s = bilstm.QUICK
    _, words, _, picked = bilstm.tagging_corpus(s)
    tagger = Tagger(bv.Model(seed=0), len(words), s["tags"], s["embed"], s["hidden"], layers=1)
    with bv.Graph("agenda") as g:
        bv.esum([tagger.loss(words.indices(x.words), [int(t[1:]) for t in x.tags])
                 for x in picked])
    return g


def whole_graph(build):
    def make():
        graph = build()[0]
        graph.finish()
        return graph
    return make


#: graph -> (the layout's batches, its elements copied, the agenda's elements copied); the
#: lower bound is the layout's batch count on every one of them
PINNED = {
    "figure1": (whole_graph(lambda: figure1("agenda")), 23, 54, 72),
    "tutorial parser": (whole_graph(lambda: G.parser()), 491, 51536, 51776),
    "overhead BiLSTM (quick)": (overhead_graph, 232, 12288, 22848),
    "Table 1 BiLSTM (quick)": (bilstm_graph, 142, 10800, 33225),
    "Table 1 Tree-LSTM (quick)": (treelstm_graph, 13, 4280, 6680),
}


def elements_copied(graph, strategy) -> tuple:
    batches = resolve_strategy(strategy).schedule(PendingView(graph, start=0))
    return len(batches), snapshot_plan(graph, batches).copy_counts()[2]


@pytest.mark.parametrize("name", sorted(PINNED))
def test_batches_at_the_lower_bound_and_no_more_copied_than_the_agenda(name):
    build, batches, copied, agenda_copied = PINNED[name]
    graph = build()
    assert batch_lower_bound(PendingView(graph, start=0)) == batches
    assert elements_copied(graph, "layout") == (batches, copied)
    assert elements_copied(graph, "agenda")[1] == agenda_copied
    assert copied <= agenda_copied


def test_the_tree_lstm_output_layer_follows_the_steps_it_gathers():
    """The output layer reads the ``h`` of every level's LSTM step: laid out in the order
    those lie (one run of step batches, back to back), it reads them as one view, and its
    reader copies its scores instead (5 per node, not 16); a trace says why."""
    graph = treelstm_graph()
    view = PendingView(graph, start=0)
    batches = LayoutBatching().schedule(view)
    walk = walk_backward(view, lookahead_batches(view))
    assert walk.placed == batches
    (slot, position), = walk.follows.items()
    follower = batches[slot]
    assert view.graph.ops[follower[0]].name == "affine" and position == 2
    plan = snapshot_plan(graph, batches)
    reads = plan.batches[slot].reads
    assert type(reads[position]) is View and not any(is_copy(r) for r in reads)
    assert elements_copied(graph, "layout")[1] < elements_copied(graph, "agenda")[1]


def test_a_trace_says_which_argument_a_batch_follows():
    s = treelstm.QUICK
    trees = synthetic_trees(8, min_leaves=2, max_leaves=6, n_labels=s["labels"],
                            vocab_size=s["vocab"], seed=1)
    vocab = Vocab.from_corpus([t.words() for t in trees])
    classifier = treelstm.TreeClassifier(bv.Model(seed=0), len(vocab), 4, 8, s["labels"])
    with bv.Graph("layout"):
        loss = bv.esum([classifier.loss(t, vocab) for t in trees])
        t = bv.trace(loss, "layout")
    notes = [step.agenda[0].note for step in t.steps]
    following = [n for n in notes if "laid out in the order of its argument 2" in n]
    assert len(following) == 1 and following[0].startswith("planned now, safe")


def test_on_the_tutorial_tree_lstm_the_agenda_buys_its_views_with_batches():
    """The tutorial's Tree-LSTM, written with one node per gate: at the bound one ``cmult``
    batch holds ``i*u``, ``f_l*c_l`` and ``f_r*c_r``, whose second arguments come from
    different batches - a copy the agenda avoids by running them apart, in 65 more
    batches. The layout still copies half of what the lookahead copies."""
    graph = whole_graph(lambda: G.tree_lstm())()
    assert elements_copied(graph, "layout") == (195, 40720)
    assert elements_copied(graph, "agenda") == (260, 37824)
    assert elements_copied(graph, "lookahead") == (195, 75200)


# --- what a trace shows ---------------------------------------------------------------------

def test_traces_show_the_plan_and_why():
    g, loss, _ = figure1("layout")
    t = bv.trace(loss, "layout")
    assert t.key_names == ("planned batch", "safe")
    assert t.batches == [list(b) for b in LayoutBatching().schedule(PendingView(g, start=0))]
    for k, step in enumerate(t.steps):
        chosen, *others = step.agenda
        assert chosen.signature == step.signature and chosen.key == (k, "yes")
        assert chosen.note.startswith("planned now, safe")
        for group in others:
            assert group.key[0] > k and group.note.startswith("waits: ")
    reader_notes = [s.agenda[0].note for s in t.steps if "reads it first" in s.agenda[0].note]
    assert len(reader_notes) == len(t.steps) - 1  # all but the loss are read by a later batch
