"""Grading tests of exercise 5: gathers, views, scatters and one batch's execution."""
import numpy as np
import pytest

import _graphs
from _grading import fail

EXERCISE = "ex05_execute"
pytestmark = pytest.mark.ex5

CASES = [  # (addresses, size)
    ([0, 4, 8], 4), ([8, 4, 0], 4), ([0, 8], 4), ([5], 3), ([0, 4, 4], 4), ([0, 2, 4], 4),
    ([3, 6, 9, 12], 3), ([12, 15, 18, 0], 3), ([2, 3, 4, 5, 6], 1), ([10, 13], 2),
]


def oracle_contiguous(addresses, size):
    return all(addresses[k + 1] == addresses[k] + size for k in range(len(addresses) - 1))


def oracle_block(arena, addresses, size):
    return np.stack([arena[a:a + size] for a in addresses])


@pytest.mark.points(2)
def test_is_contiguous(student):
    for addresses, size in CASES:
        got, want = student.is_contiguous(addresses, size), oracle_contiguous(addresses, size)
        if bool(got) != want:
            why = ("node k + 1 starts where node k ends, every time" if want else
                   "some node does not start where the previous one ends (a gap, a repeat, an "
                   "overlap or the wrong order): the block would not be rows of the arena in "
                   "batch order")
            fail(f"is_contiguous({addresses}, size={size}) should be {want}: {why}")


@pytest.mark.points(2)
def test_gather_values_and_views(student):
    arena = np.arange(40.0) * 1.5
    for addresses, size in CASES:
        result = student.gather(arena, addresses, size)
        if not (isinstance(result, tuple) and len(result) == 2):
            fail("gather must return a pair (block, is_view)")
        block, is_view = result
        want = oracle_block(arena, addresses, size)
        if np.shape(block) != want.shape:
            fail(f"gather(arena, {addresses}, {size}) should have shape {want.shape}, got {np.shape(block)}")
        np.testing.assert_array_equal(block, want, err_msg=f"gather(arena, {addresses}, {size})")
        contiguous = oracle_contiguous(addresses, size)
        if bool(is_view) != contiguous:
            fail(f"gather(arena, {addresses}, {size}) reports is_view={is_view}, but the rows are "
                 f"{'' if contiguous else 'not '}contiguous")
        if contiguous and not np.shares_memory(block, arena):
            fail(f"gather(arena, {addresses}, {size}): the rows lie back to back, yet your block "
                 "is a copy. Slice the arena and reshape: that is a view, no copy (§3.3)")
        if not contiguous and np.shares_memory(block, arena):
            fail(f"gather(arena, {addresses}, {size}) returned memory of the arena although the rows "
                 "are not contiguous")


#: the runtime's reads (batchviz.plan.reads) that this exercise's gather covers
AS_GATHER = {"View": "view", "Copy": "copy", "Concat": "copy"}


def executed_positions(graph):
    """``(batch, position, kind, addresses, size)`` for every argument position that the
    runtime read from the arena of a one-run graph as a view or with a copy (the plan of
    each batch, ``graph.layout.batches``, says how it read each position)."""
    layout = graph.layout
    base, arena = layout.bases[0], graph.arenas[0]
    out = []
    for rec in layout.batches:
        for j, read in enumerate(rec.reads):
            kind = AS_GATHER.get(type(read).__name__)
            if kind is None:
                continue
            if rec.together:  # one read of every argument, node after node (Op.one_gather)
                nodes = [a for i in rec.nodes for a in graph.args[i]]
            else:
                nodes = [graph.args[i][j] for i in rec.nodes]
            sizes = {int(np.prod(graph.shapes[a], dtype=int)) for a in nodes}
            if len(sizes) == 1:
                out.append((rec, j, kind, [layout.address[a] - base for a in nodes], sizes.pop()))
    return arena, out


def ran(build, **kwargs):
    graph, loss, model = build(**kwargs)
    loss.value()
    return graph


@pytest.mark.points(2)
def test_gather_agrees_with_the_runtime(student):
    for what, graph in (("Figure 1", ran(_graphs.figure1)),
                        ("Tree-LSTM (8 trees)", ran(_graphs.tree_lstm, n_trees=8))):
        arena, positions = executed_positions(graph)
        assert {kind for *_, kind, _, _ in positions} == {"view", "copy"}
        for rec, j, kind, addresses, size in positions:
            block, is_view = student.gather(arena, addresses, size)
            if bool(is_view) != (kind == "view"):
                fail(f"{what}, batch {rec.index} ({rec.op.name} x{len(rec.nodes)}), argument {j}: "
                     f"the nodes at addresses {addresses[:6]} (size {size}) were read by the runtime "
                     f"as a {kind}, but your gather says is_view={is_view}")
            np.testing.assert_array_equal(block, oracle_block(arena, addresses, size))
        graph.finish()


@pytest.mark.points(2)
def test_scatter_add(student):
    rng = np.random.default_rng(5)
    for addresses, size in CASES + [([4, 4, 4], 2), ([0, 6, 0, 6], 3)]:
        grads = rng.normal(size=(len(addresses), size))
        target = rng.normal(size=40)
        want = target.copy()
        for a, g in zip(addresses, grads):
            want[a:a + size] += g
        student.scatter_add(target, addresses, size, grads)
        if not np.allclose(target, want):
            repeated = len(set(addresses)) < len(addresses)
            fail(f"scatter_add(grad_arena, {addresses}, {size}, grads) added the wrong amounts"
                 + (": an address repeats, and grad_arena[index] += values adds only one of the "
                    "gradients of a repeated index; np.add.at adds all of them" if repeated else ""))


@pytest.mark.points(3)
def test_execute_batch(student):
    arena = np.zeros(30)
    arena[:12] = np.arange(1.0, 13.0)
    copies = student.execute_batch(arena, [[0, 3, 6], [9, 6, 3]], 3, np.add, 18)
    want = oracle_block(arena, [0, 3, 6], 3) + oracle_block(arena, [9, 6, 3], 3)
    np.testing.assert_allclose(arena[18:27], want.reshape(-1),
                               err_msg="the outputs go to arena[out_start:out_start + n*size]")
    if copies != 1:
        fail(f"one argument position was contiguous ([0, 3, 6]) and one was not ([9, 6, 3]): one "
             f"copy, but execute_batch returned {copies}")
    if arena[27:].any() or not np.array_equal(arena[:12], np.arange(1.0, 13.0)):
        fail("execute_batch wrote outside the batch's output segment")

    # replay element-wise batches of a real run: same outputs, same number of copies
    graph = ran(_graphs.tree_lstm, n_trees=8)
    arena, positions = executed_positions(graph)
    by_record = {}
    for rec, j, kind, addresses, size in positions:
        by_record.setdefault(rec.index, (rec, {}))[1][j] = (kind, addresses, size)
    replayed = 0
    for rec, args in by_record.values():
        if not rec.op.elementwise or rec.together or len(args) != len(rec.reads):
            continue  # (an esum batch reads all its arguments at once, not position by position)
        sizes = {size for _, _, size in args.values()}
        if len(sizes) != 1:
            continue
        size, n = sizes.pop(), len(rec.nodes)
        work = arena.copy()
        work[rec.start:rec.start + rec.length] = np.nan

        def kernel(*blocks, op=rec.op, attrs=rec.attrs, n=n):
            return op.forward(np, [b.reshape(-1) for b in blocks], attrs, n).reshape(n, -1)

        copies = student.execute_batch(work, [args[j][1] for j in range(len(args))], size, kernel,
                                       rec.start)
        np.testing.assert_allclose(work[rec.start:rec.start + rec.length],
                                   arena[rec.start:rec.start + rec.length], rtol=1e-6,
                                   err_msg=f"batch {rec.index} ({rec.op.name} x{n}) replayed")
        runtime_copies = sum(kind == "copy" for kind, _, _ in args.values())
        if copies != runtime_copies:
            fail(f"batch {rec.index} ({rec.op.name} x{n}): the runtime copied {runtime_copies} "
                 f"argument positions, your execute_batch reports {copies}")
        replayed += 1
    assert replayed > 20
    graph.finish()
