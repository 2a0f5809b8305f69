"""The schedules and the analyses give exactly what plain Python loops give: the agenda loop
(:func:`~batchviz.schedule.run_agenda`) against an oracle written with a heap, the
lookahead's levels against a loop over users, depth batching against a dictionary of
groups, the priorities and dependencies, and ``bv.explain``'s lower bound and flop count;
and the plan's copy counts against the layout rule in plain loops - on random graphs
(hypothesis), on the tutorial graphs, and on views that start after a partial
``value()``."""
import heapq

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import batchviz as bv
from batchviz.plan.arrays import graph_arrays
from batchviz.explain.bound import chain_bounds
from batchviz.explain.flops import total_flops
from batchviz.schedule import (AgendaBatching, DepthBatching, FlatSchedule, NoBatching,
                               PendingView, Strategy, average_depths, flat_schedule, run_agenda)
from batchviz.schedule.layout import LayoutBatching
from batchviz.schedule.lookahead import LookaheadBatching, SignatureLevels
from batchviz.signature import size_of
from batchviz.trace.record import snapshot_plan

from models import TUTORIAL_GRAPHS, load_tutorial_graphs, lstm_models_loss, mixed_graph

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


G = load_tutorial_graphs()


# --- graphs -------------------------------------------------------------------------------

graph_params = st.tuples(st.integers(0, 10**6), st.integers(1, 8), st.booleans())



def tutorial_graph(name):
    graph = TUTORIAL_GRAPHS[name]()[0]
    graph.finish()
    return graph


# --- reference loops ----------------------------------------------------------------------

def reference_agenda(view, priority: dict) -> list:
    """The paper's agenda (§3.2) in the plainest Python: a signature's ready nodes in the
    order they became ready; the lowest ``(priority, signature)`` runs next."""
    sig = view.signature
    waiting = {i: len(view.pending_args(i)) for i in view.nodes}
    users = {}
    for i in view.nodes:
        for a in view.pending_args(i):
            users.setdefault(a, []).append(i)
    ready = {}
    for i in view.nodes:
        if waiting[i] == 0:
            ready.setdefault(sig[i], []).append(i)
    heap = [(priority[s], s) for s in ready]
    heapq.heapify(heap)
    batches = []
    while heap:
        _, s = heapq.heappop(heap)
        batch = ready.pop(s)
        batches.append(batch)
        for i in batch:
            for u in users.get(i, ()):
                waiting[u] -= 1
                if waiting[u] == 0:
                    if sig[u] not in ready:
                        heapq.heappush(heap, (priority[sig[u]], sig[u]))
                    ready.setdefault(sig[u], []).append(u)
    return batches


def reference_depth(view) -> list:
    groups = {}
    for i in view.nodes:
        groups.setdefault((view.depth[i], view.signature[i]), []).append(i)
    return [groups[key] for key in sorted(groups)]


def reference_average_depths(view) -> dict:
    total, count = {}, {}
    for i in view.nodes:
        s = view.signature[i]
        total[s] = total.get(s, 0) + view.depth[i]
        count[s] = count.get(s, 0) + 1
    return {s: total[s] / count[s] for s in count}


def reference_chain_bounds(graph) -> dict:
    """Longest chain of each signature's nodes, one signature at a time, node by node."""
    params = graph.param_of_node
    scheduled = [i for i in range(len(graph.ops)) if i not in params]
    bounds = {}
    for s in {graph.sigs[i] for i in scheduled}:
        chain = {}
        for i in scheduled:
            below = max((chain[a] for a in graph.args[i] if a not in params), default=0)
            chain[i] = below + (graph.sigs[i] == s)
        bounds[s] = max(chain.values())
    return bounds


def reference_levels(view) -> tuple:
    """``(chain, latest)`` of :class:`SignatureLevels`, one signature at a time: the most
    nodes of the signature on a path *starting* at each node, over its users."""
    sig = view.signature
    users = {}
    for i in view.nodes:
        for a in view.pending_args(i):
            users.setdefault(a, []).append(i)
    chain, own = {}, {}
    for s in {sig[i] for i in view.nodes}:
        below = {}
        for i in reversed(view.nodes):  # users come after their arguments
            below[i] = (sig[i] == s) + max((below[u] for u in users.get(i, ())), default=0)
        mine = [i for i in view.nodes if sig[i] == s]
        chain[s] = max(below[i] for i in mine)
        own.update((i, below[i]) for i in mine)
    return chain, {i: chain[sig[i]] - own[i] + 1 for i in view.nodes}


def reference_copies(graph, batches) -> tuple:
    """``(copies, views, elements copied)`` of ``batches`` by the layout rule, in plain
    loops: outputs batch after batch, each batch's values back to back; a run of
    consecutive batches whose nodes keep further blocks (lstm_step) has all its values,
    then each further block of them all, one run's values apart; an argument position is
    read in place when its nodes lie back to back, or evenly spaced further apart for a
    kernel with a batch axis or for scalars, and copied otherwise (also when a parameter
    is among them)."""
    shapes, args, params = graph.shapes, graph.args, graph.param_of_node
    address, stride, next_free = {}, {}, 0
    run = []  # the batches of the current run of batches keeping further blocks

    def end_run():
        nonlocal next_free
        values = sum(size_of(shapes[i]) for batch in run for i in batch)
        for batch in run:
            for i in batch:
                stride[i] = values
        next_free += (max(graph.sigtab[graph.sigs[b[0]]].blocks for b in run) - 1) * values
        run.clear()

    for batch in batches:
        blocks = graph.sigtab[graph.sigs[batch[0]]].blocks
        if blocks == 1 and run:
            end_run()
        for i in batch:
            address[i] = next_free
            next_free += size_of(shapes[i])
        if blocks > 1:
            run.append(batch)
    if run:
        end_run()

    def location(a, block=0):
        return -1 if a in params else address[a] + (block * stride[a] if block else 0)

    def in_place(locs, sizes, batch_axis):
        if min(locs) < 0:
            return False
        if not isinstance(sizes, int):
            return all(b == a + n for a, b, n in zip(locs, locs[1:], sizes))
        step = locs[1] - locs[0] if len(locs) > 1 else sizes
        evenly = all(b - a == step for a, b in zip(locs, locs[1:]))
        return evenly and (step == sizes or (step > sizes and (batch_axis or sizes == 1)))

    copies = views = elements = 0
    for batch in batches:
        info = graph.sigtab[graph.sigs[batch[0]]]
        values = [size_of(shapes[i]) for i in batch]
        if info.op.one_gather and values.count(values[0]) == len(values):
            positions = [([a for i in batch for a in args[i]], values[0], False, 0)]
        else:
            positions = []
            for j in range(len(args[batch[0]])):
                if j in info.shared:
                    continue
                nodes = [args[i][j] for i in batch]
                if info.op.elementwise:  # the batch's output sizes: one int when all equal
                    sizes = values[0] if values.count(values[0]) == len(values) else values
                    positions.append((nodes, sizes, False, info.reads.get(j, 0)))
                else:
                    positions.append((nodes, size_of(shapes[nodes[0]]), True, info.reads.get(j, 0)))
        for nodes, sizes, batch_axis, block in positions:
            if in_place([location(a, block) for a in nodes], sizes, batch_axis):
                views += 1
            else:
                copies += 1
                elements += len(nodes) * sizes if isinstance(sizes, int) else sum(sizes)
    return copies, views, elements


def reference_flops(graph) -> float:
    params = graph.param_of_node
    total = 0
    for i in range(len(graph.ops)):
        if i in params:
            continue
        name, args = graph.ops[i].name, graph.args[i]
        if name in ("matmul", "affine"):
            first = 0 if name == "matmul" else 1
            for p in range(first, len(args) - 1, 1 if name == "matmul" else 2):
                w, x = graph.shapes[args[p]], graph.shapes[args[p + 1]]
                total += 2 * size_of(w) * (size_of(x) // max(x[0] if x else 1, 1))
        else:
            total += size_of(graph.shapes[i]) + sum(size_of(graph.shapes[a]) for a in args)
    return float(total)


class Deepest(AgendaBatching):
    """The agenda with its priority reversed: the loop must follow any ``priority`` a
    subclass defines."""

    def priority(self, view):
        return {s: (-p[0],) + p[1:] for s, p in super().priority(view).items()}


# --- the agenda ---------------------------------------------------------------------------

def readable(strategy, view) -> list:
    return run_agenda(view, strategy.rule(view))


def check_agenda(view):
    for strategy in (AgendaBatching(), Deepest()):
        expected = reference_agenda(view, strategy.priority(view))
        assert readable(strategy, view) == expected
        assert strategy.schedule(view) == expected


# --- the lookahead ------------------------------------------------------------------------

def check_lookahead(view):
    levels = SignatureLevels(view)
    assert (levels.chain, levels.latest) == reference_levels(view)
    assert LookaheadBatching().schedule(view) == readable(LookaheadBatching(), view)


CHECKS = {"agenda": check_agenda, "lookahead": check_lookahead}


@SETTINGS
@given(params=graph_params)
@pytest.mark.parametrize("strategy", sorted(CHECKS))
def test_schedules_equal_plain_loops(strategy, params):
    CHECKS[strategy](PendingView(mixed_graph(*params)))


@pytest.mark.parametrize("name", sorted(TUTORIAL_GRAPHS))
@pytest.mark.parametrize("strategy", sorted(CHECKS))
def test_schedules_of_tutorial_graphs(strategy, name):
    CHECKS[strategy](PendingView(tutorial_graph(name)))


def test_schedules_of_wide_and_deep_graphs():
    """Large batches (~140 nodes per batch) and a batch per node (one long sequence)."""
    check_agenda(PendingView(G.tree_lstm(n_trees=64)[0]))
    model = bv.Model(seed=0)
    W, b = model.add_parameters((3, 3)), model.add_parameters(3)
    with bv.Graph() as long_rnn:
        h = bv.zeros(3)
        for _ in range(1000):
            h = bv.tanh(W @ h + b)
    check_agenda(PendingView(long_rnn))
    check_lookahead(PendingView(long_rnn))


def test_empty_view():
    g = bv.Graph()
    view = PendingView(g)
    for strategy in (NoBatching(), DepthBatching(), AgendaBatching()):
        assert strategy.schedule(view) == []
        assert len(strategy.schedule_flat(view)) == 0
    assert average_depths(view) == {}


# --- depth, priorities, dependencies ------------------------------------------------------

@SETTINGS
@given(params=graph_params)
def test_depth_priorities_and_dependencies_equal_plain_loops(params):
    graph = mixed_graph(*params)
    view = PendingView(graph)
    assert DepthBatching().schedule(view) == reference_depth(view)
    assert view.nodes == plain_pending_nodes(graph)
    avg = average_depths(view)
    expected = reference_average_depths(view)
    assert avg == expected and list(avg) == list(expected)  # same floats, same order
    unresolved, user_start, users = view.dependencies()
    start = view.start
    for i in view.nodes:
        assert unresolved[i - start] == len(view.pending_args(i))
        assert list(users[user_start[i - start]:user_start[i - start + 1]]) == [
            u for u in view.nodes for a in view.pending_args(u) if a == i]
        assert view.users()[i] == [u for u in view.nodes for a in view.pending_args(u) if a == i]


def plain_pending_nodes(graph) -> list:
    """The nodes a view of ``graph`` schedules: those not run yet, parameters left out."""
    return [i for i in range(graph.n_evaluated, len(graph.ops)) if i not in graph.param_of_node]


def test_a_parameter_first_used_after_a_run_is_not_pending():
    """A parameter whose node is made after a ``value()`` sits among the new nodes; every
    way of listing the pending nodes leaves it out (they look only at the new nodes, not
    the whole graph)."""
    model = bv.Model(seed=0)
    W, U = model.add_parameters((3, 3)), model.add_parameters((3, 3))
    with bv.Graph() as graph:
        h = bv.tanh(W @ bv.zeros(3))
        h.value()
        for _ in range(100):  # U's node is made here, after the run
            h = bv.tanh(U @ h)
        late = graph.param_node[U]
        assert late >= graph.n_evaluated
        expected = plain_pending_nodes(graph)
        assert late not in expected and len(expected) == 200
        assert PendingView(graph).nodes == expected
        assert PendingView(graph).arrays().nodes.tolist() == expected
        view = PendingView(graph)
        assert readable(AgendaBatching(), view) == reference_agenda(
            view, AgendaBatching().priority(view))


# --- the flat form ------------------------------------------------------------------------

def test_flat_schedule_round_trip():
    batches = [[3, 1], [0], [2, 5, 4]]
    flat = FlatSchedule.of(batches)
    assert flat.batches() == batches and len(flat) == 3
    assert flat.starts().tolist() == [0, 2, 3]
    assert FlatSchedule.of([]).batches() == []


def test_flat_schedule_follows_an_overridden_schedule():
    class Flat(DepthBatching):  # a flat form of its own
        def schedule_flat(self, view):
            return FlatSchedule.of(self.schedule(view))

    class Reversed(Flat):  # inherits Flat.schedule_flat, not its schedule
        def schedule(self, view):
            return super().schedule(view)[::-1]

    view = PendingView(tutorial_graph("figure1-extended"))
    assert flat_schedule(Reversed(), view).batches() == Reversed().schedule(view)
    assert flat_schedule(DepthBatching(), view).batches() == DepthBatching().schedule(view)

    class Plain(Strategy):
        def schedule(self, view):
            return [[i] for i in reversed(view.nodes)]

    assert flat_schedule(Plain(), view).batches() == Plain().schedule(view)


# --- explain's analyses -------------------------------------------------------------------

def check_analyses(graph):
    a = graph_arrays(graph)
    view = PendingView(graph, start=0)
    for strategy in (NoBatching(), DepthBatching(), AgendaBatching(), LookaheadBatching(),
                     LayoutBatching()):
        batches = strategy.schedule(view)
        assert flat_schedule(strategy, view).batches() == batches
        planned = snapshot_plan(graph, batches).copy_counts()
        assert planned == reference_copies(graph, batches)
    assert total_flops(graph, a) == reference_flops(graph)
    assert chain_bounds(a) == reference_chain_bounds(graph)


@SETTINGS
@given(params=graph_params)
def test_copies_flops_and_bound_equal_plain_loops(params):
    check_analyses(mixed_graph(*params))


@pytest.mark.parametrize("name", sorted(TUTORIAL_GRAPHS))
def test_copies_flops_and_bound_on_tutorial_graphs(name):
    check_analyses(tutorial_graph(name))


def test_copies_flops_and_bound_on_lstm_models():
    """Block reads (the cell of a step node), nodes that keep more than their value (lstm_step)
    and strided views."""
    graph = bv.Graph()
    with graph:
        lstm_models_loss(seed=3)
    check_analyses(graph)


def test_copies_on_runs_of_lstm_step_batches():
    """A Tree-LSTM with a loss at every node: the layout strategy runs its levels' steps
    back to back, laid out plane by plane, and its output layer reads their ``h`` as one
    view; the plan's copies equal the layout rule's in plain loops."""
    from batchviz.data import Vocab, synthetic_trees
    from batchviz.nn import TreeLSTMCell

    trees = synthetic_trees(6, min_leaves=2, max_leaves=7, n_labels=3, vocab_size=30, seed=2)
    vocab = Vocab.from_corpus([t.words() for t in trees])
    model = bv.Model(seed=0)
    E = model.add_lookup_parameters((len(vocab), 4))
    cell = TreeLSTMCell(model, 4, 6)
    W, b = model.add_parameters((3, 6)), model.add_parameters((3,))
    graph = bv.Graph()
    with graph:
        losses = []
        for tree in trees:
            states = cell.encode(tree, lambda word: E[vocab.index(word)])
            losses += [bv.pickneglogsoftmax(bv.affine_transform([b, W, h]), int(node.label))
                       for node, h in states]
        bv.esum(losses)
    check_analyses(graph)
    plan = snapshot_plan(graph, LayoutBatching().schedule(PendingView(graph, start=0)))
    assert any(batch.block_stride > batch.length for batch in plan.batches)  # a run
