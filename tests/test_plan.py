"""The plan (batchviz.plan): where batch outputs live and how each argument is read (§3.3).
Arguments that are consecutive rows of one block are read as a view; otherwise one gather
copies them, and backward scatters through the same index. Each kind of read is checked
against node-by-node execution."""
import gc

import numpy as np
import pytest

import batchviz as bv
from batchviz.plan import CopyFromArenas, View


def build_chain(order):
    """a_i, b_i inputs (each kind one batch, in creation order), then c_i = a_i + b_order[i]."""
    rng = np.random.default_rng(0)
    a = [bv.input(rng.normal(size=4)) for _ in order]
    b = [bv.input(rng.normal(size=4)) for _ in order]
    c = [a[i] + b[j] for i, j in enumerate(order)]
    return a, b, c


def test_consecutive_arguments_make_no_copy():
    with bv.Graph(strategy="depth"):
        a, b, c = build_chain([0, 1, 2, 3, 4])
        total = bv.sum_elems(bv.esum(c))
        total.value()
        stats = bv.last_run_stats().forward
    # the add batch reads a_0..a_4 and b_0..b_4 as views; esum reads its 5 arguments, the
    # add batch's rows in order, with one read (Op.one_gather); sum_elems reads esum's
    # output: every read is a view
    assert stats.copies == 0
    assert stats.copies_avoided == 2 + 1 + 1
    assert stats.bytes_copied == 0


def test_shuffled_arguments_are_copied_once_per_position():
    with bv.Graph(strategy="depth"):
        a, b, c = build_chain([3, 0, 4, 1, 2])
        total = bv.sum_elems(bv.esum(c))
        total.value()
        stats = bv.last_run_stats().forward
    assert stats.copies == 1                      # b_3, b_0, b_4, b_1, b_2: one gather
    assert stats.copies_avoided == 1 + 1 + 1      # a in order, esum and sum_elems as before
    assert stats.bytes_copied == 5 * 4 * 4        # 5 vectors of 4 float32


def test_gather_and_scatter_give_the_right_numbers():
    """The copied gather must pick the right rows, forward and backward."""
    model = bv.Model(seed=0)
    P = [model.add_parameters(3, init="normal") for _ in range(4)]
    order = [2, 0, 3, 1]
    with bv.Graph(strategy="depth"):
        rows = [p * 1.0 for p in P]                          # one batch: rows 0..3
        picked = [bv.tanh(rows[j]) * float(k + 1) for k, j in enumerate(order)]
        loss = bv.sum_elems(bv.esum(picked))
        value = loss.value()
        loss.backward()
        assert bv.last_run_stats().forward.copies >= 1
    expected = sum((k + 1) * np.tanh(P[j].value()).sum() for k, j in enumerate(order))
    assert value == np.float32(expected) or abs(value - expected) < 1e-5
    for k, j in enumerate(order):
        np.testing.assert_allclose(P[j].grad, (k + 1) * (1 - np.tanh(P[j].value()) ** 2), rtol=1e-5)


def test_agenda_keeps_users_in_their_arguments_order():
    """Nodes join the agenda in the order their arguments were computed, so a chain built
    in shuffled order still reads its arguments as views under agenda batching."""
    with bv.Graph(strategy="agenda"):
        a, b, c = build_chain([3, 0, 4, 1, 2])
        d = [bv.tanh(x) for x in reversed(c)]
        bv.esum(d).value()
        stats = bv.last_run_stats().forward
    # the b_order gather, and esum's one read of d (the tanh batch holds d in reverse, in
    # the order of the c it reads); tanh reads the add block as a view
    assert stats.copies == 2


def _rows_case(strategy, size, order, repeat):
    """Gather vectors of ``size`` elements in ``order`` (a node may appear twice when
    ``repeat``): values and gradients, under ``strategy``."""
    model = bv.Model(seed=1)
    P = [model.add_parameters(size, init="normal") for _ in range(5)]
    with bv.Graph(strategy=strategy):
        rows = [bv.tanh(p) for p in P]                      # one batch: consecutive rows
        users = [rows[j] * float(k + 1) for k, j in enumerate(order)]
        if repeat:
            users += [rows[order[0]] * 7.0]                 # the same row gathered twice
        loss = bv.sum_elems(bv.esum([bv.cmult(u, u) for u in users]))
        value = loss.value()
        stats = bv.last_run_stats().forward
        loss.backward()
    return value, [p.grad.copy() for p in P], stats


def test_whole_row_gathers_and_scatters_match_unbatched_execution(float64):
    """Vectors of 16+ elements are gathered and scattered back as whole rows (memory.rows_view):
    the numbers must equal node-by-node execution, with and without repeated rows, and the
    bytes copied are still counted."""
    for size in (3, 16, 300):
        for repeat in (False, True):
            want, want_grads, _ = _rows_case("none", size, [3, 0, 4, 1, 2], repeat)
            got, grads, stats = _rows_case("depth", size, [3, 0, 4, 1, 2], repeat)
            assert stats.copies >= 1 and stats.bytes_copied >= 5 * size * 8
            np.testing.assert_allclose(got, want, rtol=1e-12)
            for g, w in zip(grads, want_grads):
                np.testing.assert_allclose(g, w, rtol=1e-12)


def test_finished_graphs_give_their_arenas_back(monkeypatch):
    """A finished graph's arena is handed to the next graph (no fresh pages to fault in),
    and the next graph's values are its own."""
    from batchviz.execute.memory import POOL

    # graphs of earlier tests in this process, freed by the collector in the middle of this
    # test, would give their arenas back too: free them first, then start from an empty pool
    gc.collect()
    monkeypatch.setattr(POOL, "spare", {})
    with bv.Graph() as g1:
        x = bv.input(np.arange(100_000.0))
        (x * 2.0).value()
        first = g1.arenas[0]
        whole = first.base if first.base is not None else first
    assert any(a is whole for spare in POOL.spare.values() for a in spare)
    with bv.Graph() as g2:
        y = bv.input(np.ones(100_000))
        value = (y * 3.0).value()
        again = g2.arenas[0]
        assert np.shares_memory(again, whole)
    np.testing.assert_array_equal(value, np.full(100_000, 3.0))


def test_evenly_spaced_arguments_are_a_strided_view(float64):
    """Every second row of one batch: a matmul (a kernel with a batch axis) reads them as a
    strided view, no copy, and its gradient lands in the right rows; an element-wise op
    (flat blocks) still gathers them."""
    model = bv.Model(seed=0)
    W = model.add_parameters((2, 3), init="normal")
    P = [model.add_parameters(3, init="normal") for _ in range(6)]
    with bv.Graph(strategy="depth") as g:
        rows = [p * 1.0 for p in P]                           # one batch: rows 0..5
        picked = [bv.tanh(W @ rows[j]) for j in (0, 2, 4)]    # every second row
        doubled = [bv.tanh(rows[j]) for j in (1, 3, 5)]
        loss = bv.sum_elems(bv.esum(picked)) + bv.sum_elems(bv.esum(doubled))
        value = loss.value()
        loss.backward()
        reads = {}
        for rec in g.layout.batches:
            reads.setdefault(rec.op.name, []).append([type(r).__name__ for r in rec.reads])
    assert reads["matmul"] == [["Shared", "Strided"]]
    assert ["Copy"] in reads["tanh"]                          # rows 1, 3, 5: gathered
    x = [P[j].value() for j in range(6)]
    expected = sum(np.tanh(W.value() @ x[j]).sum() for j in (0, 2, 4)) + sum(np.tanh(x[j]).sum() for j in (1, 3, 5))
    assert abs(value - expected) < 1e-12
    for j in (0, 2, 4):
        t = np.tanh(W.value() @ x[j])
        np.testing.assert_allclose(P[j].grad, W.value().T @ (1 - t ** 2), rtol=1e-12)
    for j in (1, 3, 5):
        np.testing.assert_allclose(P[j].grad, 1 - np.tanh(x[j]) ** 2, rtol=1e-12)


def test_strided_view_slices_or_strides_at_the_end_of_the_arena():
    """strided_view reads n blocks ``step`` apart without a copy, whether or not the arena
    reaches past the last block (then it falls back to as_strided)."""
    from batchviz.execute.memory import strided_view

    flat = np.arange(20.0)
    inside = strided_view(np, flat, 1, 3, 2, 5)        # 1:3, 6:8, 11:13 (the arena goes on)
    at_end = strided_view(np, flat, 8, 3, 2, 5)        # 8:10, 13:15, 18:20 (ends at the end)
    np.testing.assert_array_equal(inside, [[1, 2], [6, 7], [11, 12]])
    np.testing.assert_array_equal(at_end, [[8, 9], [13, 14], [18, 19]])
    for view in (inside, at_end):
        assert np.shares_memory(view, flat)
    at_end += 100.0                                     # writes go where the blocks live
    assert flat[18] == 118.0 and flat[10] == 10.0


def test_evenly_spaced_scalars_are_a_strided_view_for_element_wise_ops(float64):
    """Scalars evenly spaced in one batch (every second loss, as a per-sentence esum reads
    the losses of sentences of one length) are a flat block with a step: an element-wise
    op reads them in place too, and the gradients land on the right scalars."""
    model = bv.Model(seed=1)
    P = [model.add_parameters(3, init="normal") for _ in range(6)]
    with bv.Graph(strategy="depth") as g:
        sums = [bv.sum_elems(p * 1.0) for p in P]             # one batch of six scalars
        loss = bv.esum([bv.tanh(sums[j]) for j in (0, 2, 4)] + [sums[j] * 3.0 for j in (1, 3, 5)])
        value = loss.value()
        loss.backward()
        tanh = [rec for rec in g.layout.batches if rec.op.name == "tanh"]
    assert [type(r).__name__ for r in tanh[0].reads] == ["Strided"]
    x = [P[j].value() for j in range(6)]
    expected = sum(np.tanh(x[j].sum()) for j in (0, 2, 4)) + 3 * sum(x[j].sum() for j in (1, 3, 5))
    assert abs(value - expected) < 1e-12
    for j in (0, 2, 4):
        np.testing.assert_allclose(P[j].grad, np.full(3, 1 - np.tanh(x[j].sum()) ** 2), rtol=1e-12)
    for j in (1, 3, 5):
        np.testing.assert_allclose(P[j].grad, np.full(3, 3.0), rtol=1e-12)


def test_nodes_keep_their_blocks_and_readers_see_their_value(float64):
    """An lstm_step node keeps the blocks [h, c, i, f, o, u] (Op.storage_blocks), laid out
    block by block per batch: the batch's values h lie back to back (its readers see h, as a
    view), every block is a batch's values apart, the next step's batch reads the cells,
    block 1, in place (a view)."""
    model = bv.Model(seed=0)
    b, Wx, Wh = (model.add_parameters((8,)), model.add_parameters((8, 3)),
                 model.add_parameters((8, 2)))
    with bv.Graph(strategy="agenda") as g:
        x = [bv.input(np.full(3, k, dtype=float)) for k in range(3)]
        first = [bv.lstm_unit(b, [Wx, Wh], [xk, bv.zeros(2)], [bv.zeros(2)], 2) for xk in x]
        second = [bv.lstm_unit(b, [Wx, Wh], [xk, s], [s], 2) for xk, s in zip(x, first)]
        cells = [bv.lstm_step_cell(s) for s in first]
        bv.esum([bv.sum_elems(s) for s in second + cells]).value()
        assert g.sigtab[g.sigs[first[0].node]].blocks == 6 and first[0].shape == (2,)
        layout = g.layout
        addresses = [layout.address[s.node] for s in first]
        assert np.diff(addresses).tolist() == [2, 2]              # the values back to back
        first_rec = layout.batches[layout.batch_of[first[0].node]]
        assert first_rec.out_shape == (6, 3, 2) and first_rec.block_stride == 6
        assert g.batch_runs[first_rec.index].out.shape == (6, 3, 2)
        assert layout.address_of(first[1].node, 1) == addresses[1] + 6
        rec = layout.batches[layout.batch_of[second[0].node]]
        h_read, cell_read = rec.reads[-2], rec.reads[-1]
        assert type(h_read) is View and type(cell_read) is View
        assert cell_read.start == h_read.start + 6                # block 1: 6 further on
        for s, c in zip(first, cells):
            np.testing.assert_array_equal(s.value(), g.value_of(s.node))
            np.testing.assert_array_equal(c.value(), g.value_of(s.node, 1))




class _StepsTogether(bv.Strategy):
    """The inputs, then the given batches of steps one after another, then the rest level
    by level after the steps (so every ``tanh`` of a step is one batch), signature by
    signature."""

    def __init__(self, steps):
        self.steps = steps

    def schedule(self, view):
        taken = {n for batch in self.steps for n in batch}
        level = {n: 0 for n in taken}
        inputs, after = [], {}
        for node in view.nodes:
            if node in taken:
                continue
            args = [level[a] for a in view.pending_args(node) if a in level]
            if not args:
                inputs.append(node)
                continue
            level[node] = 1 + max(args)
            after.setdefault((level[node], view.signature[node]), []).append(node)
        by_signature: dict = {}
        for node in inputs:
            by_signature.setdefault(view.signature[node], []).append(node)
        return list(by_signature.values()) + self.steps + [after[k] for k in sorted(after)]


def _steps_in_a_run(strategy: str, inspect=None):
    """Three batches of LSTM steps back to back in the schedule (sequence steps, then steps
    that read them, then tree steps with two cells: 6, 6 and 7 blocks), and a ``tanh`` of
    every step's ``h``, created in that order. Returns the loss, every block each step
    keeps and the parameters' gradients; ``inspect(graph, steps)`` runs after the forward
    pass."""
    model = bv.Model(seed=0)
    b, Wx, Wh = (model.add_parameters((8,)), model.add_parameters((8, 3)),
                 model.add_parameters((8, 2)))
    b2, Wl, Wr = (model.add_parameters((10,)), model.add_parameters((10, 2)),
                  model.add_parameters((10, 2)))
    with bv.Graph(strategy=strategy if strategy != "given" else "none") as g:
        x = [bv.input(np.linspace(-1, 1, 3) * (k + 1)) for k in range(3)]
        first = [bv.lstm_unit(b, [Wx, Wh], [xk, bv.zeros(2)], [bv.zeros(2)], 2) for xk in x]
        second = [bv.lstm_unit(b, [Wx, Wh], [xk, s], [s], 2) for xk, s in zip(x, first)]
        tree = [bv.lstm_unit(b2, [Wl, Wr], [s, t], [s, t], 2) for s, t in zip(first, second)]
        steps = first + second + tree
        loss = bv.esum([bv.sum_elems(bv.tanh(s)) * float(k + 1) for k, s in enumerate(steps)])
        if strategy == "given":
            g.strategy = _StepsTogether([[s.node for s in part] for part in (first, second, tree)])
        value = loss.value()
        if inspect is not None:
            inspect(g, steps)
        blocks = [[g.value_of(s.node, k) for k in range(6 if s in first + second else 7)]
                  for s in steps]
        loss.backward()
        grads = [p.grad.copy() for p in (b, Wx, Wh, b2, Wl, Wr)]
    return value, blocks, grads


def test_a_run_of_batches_keeping_blocks_is_laid_out_plane_by_plane(float64):
    """Consecutive batches whose nodes keep several blocks share one region: all their
    values back to back, then each further block of every node its run's values (18
    elements) further on. A later batch reading the values of all of them reads one view;
    values, blocks and gradients are those of unbatched execution."""

    def inspect(g, steps):
        layout = g.layout
        records = [layout.batches[layout.batch_of[s.node]] for s in steps[::3]]
        assert [r.out_shape for r in records] == [(6, 3, 2), (6, 3, 2), (7, 3, 2)]
        assert [r.index for r in records] == list(range(records[0].index, records[0].index + 3))
        assert {r.block_stride for r in records} == {18}
        addresses = [layout.address[s.node] for s in steps]
        assert np.diff(addresses).tolist() == [2] * 8              # values back to back
        for s in steps:
            assert layout.address_of(s.node, 3) == layout.address[s.node] + 3 * 18
            run = g.batch_runs[layout.batch_of[s.node]]
            assert np.shares_memory(run.out, g.arenas[records[0].arena])
        tanh = next(r for r in layout.batches if r.op.name == "tanh")
        assert len(tanh.nodes) == 9 and type(tanh.reads[0]) is View

    value, blocks, grads = _steps_in_a_run("given", inspect)
    value0, blocks0, grads0 = _steps_in_a_run("none")
    assert value == pytest.approx(value0, rel=1e-12)
    for kept, kept0 in zip(blocks, blocks0):
        for block, block0 in zip(kept, kept0):
            np.testing.assert_allclose(block, block0, rtol=1e-12)
    for grad, grad0 in zip(grads, grads0):
        np.testing.assert_allclose(grad, grad0, rtol=1e-10)


class _RowsThenReaders(bv.Strategy):
    """Rows 0-1, a batch in between, rows 2-4, the readers of the rows in one batch, then
    everything else by depth: the readers' argument is whole batches, not back to back."""

    def __init__(self, rows, between, readers):
        self.first = [[rows[0], rows[1]], [between], rows[2:], readers]

    def schedule(self, view):
        from batchviz.schedule import DepthBatching

        done = {n for batch in self.first for n in batch}
        rest = [[n for n in batch if n not in done] for batch in DepthBatching().schedule(view)]
        return self.first + [batch for batch in rest if batch]


def _whole_batches_case(strategy, size, reads):
    """``tanh`` of the rows ``reads`` in one batch (``strategy`` "given": as
    :class:`_RowsThenReaders` schedules it): value, gradients, and how each batch of the
    readers read its argument."""
    model = bv.Model(seed=2)
    P = [model.add_parameters(size, init="normal") for _ in range(5)]
    with bv.Graph(strategy=strategy if strategy != "given" else "none") as g:
        rows = [p * 1.0 for p in P]
        between = bv.tanh(P[0])
        readers = [bv.tanh(rows[j]) for j in reads]
        loss = bv.sum_elems(bv.esum([r * float(k + 1) for k, r in enumerate(readers)]))
        if strategy == "given":
            g.strategy = _RowsThenReaders([r.node for r in rows], between.node,
                                          [r.node for r in readers])
        value = loss.value()
        reader_nodes = {r.node for r in readers}
        kinds = [type(rec.reads[0]).__name__ for rec in g.layout.batches
                 if rec.nodes[0] in reader_nodes]
        loss.backward()
    return value, [p.grad.copy() for p in P], kinds


@pytest.mark.parametrize("size", [3, 20])
@pytest.mark.parametrize("reads", [[0, 1, 2, 3, 4], [0, 1, 0, 1]],
                         ids=["two-batches", "one-batch-twice"])
def test_an_argument_made_of_whole_batches_is_one_copy(size, reads, float64):
    """An argument position that is several whole earlier batches, each in its own order,
    is copied by concatenating their segments (``plan.reads.Concat``): one copy, with
    the values and gradients of node-by-node execution, also when one batch is read twice
    (its gradient then adds up at the same rows)."""
    want, want_grads, _ = _whole_batches_case("none", size, reads)
    got, grads, kinds = _whole_batches_case("given", size, reads)
    assert kinds == ["Concat"]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def _several_runs_case(strategy: str, size: int, reads: list, runs: bool):
    """Values made in three forward runs (three arenas), then one batch reading them in the
    order ``reads`` (repeats allowed): ``runs=False`` builds the same graph in one run."""
    model = bv.Model(seed=0)
    P = [model.add_parameters(size, init="normal") for _ in range(6)]
    with bv.Graph(strategy=strategy) as g:
        made = []
        for run in range(3):
            made += [bv.tanh(P[2 * run]), bv.tanh(P[2 * run + 1]) * 2.0]
            if runs:
                made[-1].value()
        readers = bv.esum([made[j] * float(k + 1) for k, j in enumerate(reads)])
        loss = bv.sum_elems(readers)
        value = loss.value()
        sources = [read for rec in g.layout.batches for read in rec.reads]
        loss.backward()
    return value, [p.grad.copy() for p in P], sources


@pytest.mark.parametrize("size", [1, 5])
@pytest.mark.parametrize("reads", [[5, 0, 3, 1, 4, 2], [4, 0, 4, 2, 0]],
                         ids=["each-once", "repeated"])
@pytest.mark.parametrize("strategy", ["depth", "agenda"])
def test_arguments_from_several_runs_are_gathered_arena_by_arena(strategy, size, reads, float64):
    """A graph run forward several times (``value()`` between additions, as a parser does)
    keeps each run's values in an arena of its own; a later batch that reads values of
    every run gathers them with one copy per arena (``plan.reads.CopyFromArenas``), forward,
    and adds the gradients back per arena, with the values and gradients of the same graph
    run at once, also when a node is read twice."""
    want, want_grads, _ = _several_runs_case(strategy, size, reads, runs=False)
    got, grads, sources = _several_runs_case(strategy, size, reads, runs=True)
    across = [read.groups for read in sources if type(read) is CopyFromArenas]
    assert across and all(len(groups) == 3 for groups in across)  # the scale batches
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-12)
