"""Signatures (§3.2, App. A): what decides that two nodes may share a kernel, interned per
graph to small integers, and the rules a signature table enforces on the ops that make
them."""
import numpy as np
import pytest

import batchviz as bv
from batchviz.ops.base import FIXED_SIGNATURES, Op
from batchviz.signature import SignatureTable


def test_equal_keys_are_one_integer_and_element_wise_ops_keep_theirs_in_every_graph():
    model = bv.Model(seed=0)
    W = model.add_parameters((3, 3), name="W")
    graphs = []
    for _ in range(2):
        with bv.Graph() as g:
            x, y = bv.input(np.ones(3)), bv.input(np.ones(3))
            a, b = W @ x, W @ y
            t = bv.tanh(a)
            graphs.append((g, a, b, t))
    (g1, a1, b1, t1), (g2, _, _, t2) = graphs
    assert g1.sigs[a1.node] == g1.sigs[b1.node]         # one key, one integer
    assert g1.signature_name(g1.sigs[a1.node]) == f"matmul-W#{g1.param_node[W]}-3x1"
    # element-wise signatures are reserved in every table, in registration order
    assert g1.sigs[t1.node] == g2.sigs[t2.node] == bv.ops.REGISTRY["tanh"].fixed_signature
    assert g1.sigtab[g1.sigs[t1.node]] is FIXED_SIGNATURES[g1.sigs[t1.node]]


def test_a_signature_table_refuses_ops_that_break_the_layout_rules():
    """Only an op that is not element-wise and writes its output may keep more than its
    value (Op.storage_blocks), the number must be a positive int, and only an element-wise
    op may read all its arguments with one gather."""

    class KeepsMore(Op):
        name, elementwise, writes_output = "keeps_more", True, True

        def storage_blocks(self, shape, attrs):
            return 2

    with pytest.raises(TypeError, match="only an op that is not element-wise"):
        SignatureTable([]).intern(("keeps_more",), KeepsMore(), (), (3,), None)

    class KeepsNothing(Op):
        name, writes_output = "keeps_nothing", True

        def storage_blocks(self, shape, attrs):
            return 0

    with pytest.raises(TypeError, match="must be a positive int"):
        SignatureTable([]).intern(("keeps_nothing",), KeepsNothing(), (), (3,), None)

    class GathersOnce(Op):  # one gather for every argument needs flat, same-size values
        name, one_gather = "gathers_once", True

    with pytest.raises(TypeError, match="only an element-wise op may read all its arguments"):
        SignatureTable([]).intern(("gathers_once",), GathersOnce(), (), (3,), None)


def test_signatures_are_interned_without_collisions():
    model = bv.Model()
    W = model.add_parameters((3, 3), name="W")
    V = model.add_parameters((3, 3), name="V")
    with bv.Graph() as g:
        x = bv.zeros(3)
        a, b, c = W @ x, W @ x, V @ x
        assert g.sigs[a.node] == g.sigs[b.node] != g.sigs[c.node]
        assert g.signature_name(g.sigs[a.node]) == f"matmul-W#{g.param_node[W]}-3x1"
        keys = [info.key for info in g.sigtab.infos]
        assert len(keys) == len(set(keys))
        ops_per_sig = {}
        for i in range(len(g)):
            ops_per_sig.setdefault(g.sigs[i], set()).add(g.ops[i].name)
        assert all(len(names) == 1 for names in ops_per_sig.values())


def test_ops_dynet_leaves_unbatched_are_batched_here():
    """pick, log_softmax, dot_product and sum_elems of many instances run as one batch each."""
    rng = np.random.default_rng(0)
    with bv.Graph(strategy="agenda") as g:
        xs = [bv.input(rng.normal(size=5)) for _ in range(6)]
        terms = [bv.pick(x, k % 5) + bv.pick(bv.log_softmax(x), 1) + bv.dot_product(x, x)
                 + bv.sum_elems(x) for k, x in enumerate(xs)]
        bv.esum(terms).value()
        batches = {}
        for r in g.layout.batches:
            batches.setdefault(g.ops[r.nodes[0]].name, []).append(len(r.nodes))
    expected = {"pick": [12], "log_softmax": [6], "dot_product": [6], "sum_elems": [6]}
    for name, sizes in expected.items():
        assert batches[name] == sizes, name


def test_unbatchable_ops_get_a_signature_of_their_own():
    """App. A's last class: an op marked unbatchable never shares a batch."""
    from batchviz.ops._build import build

    class Print(Op):  # an op whose per-node side effect must happen once per node
        name = "test_print_identity"
        batchable = False

        def infer_shape(self, shapes, attrs):
            return shapes[0]

        def forward(self, xp, ins, attrs, n):
            assert n == 1
            return ins[0]

        def backward(self, xp, ins, out, g, attrs, n, needs):
            return [g]

    op = Print()
    with bv.Graph(strategy="agenda") as g:
        ys = [build(op, (bv.input(np.ones(2) * k),)) for k in range(4)]
        assert len({g.sigs[y.node] for y in ys}) == 4
        np.testing.assert_allclose(bv.esum(ys).value(), [6.0, 6.0])
        assert sum(1 for r in g.layout.batches if r.op is op) == 4


def test_a_signature_records_how_many_arguments_its_nodes_have():
    """A batch reads its nodes' arguments position by position, so every node of a
    signature has as many; the signature records it, and the schedulers read the argument
    counts from there (one array lookup, not one Python call per node)."""
    from batchviz.schedule import PendingView

    with bv.Graph(strategy="agenda") as g:
        model = bv.Model(seed=0)
        W, b = model.add_parameters((3, 3)), model.add_parameters(3)
        hs = [bv.tanh(W @ bv.input(np.ones(3) * k) + b) for k in range(3)]
        bv.esum([bv.sum_elems(h) for h in hs] + [bv.sum_elems(hs[0] * hs[1])])
        for node, args in enumerate(g.args):
            assert g.sigtab[g.sigs[node]].arity in (-1, len(args)), g.ops[node].name
        arrays = PendingView(g, start=0).arrays()
        np.testing.assert_array_equal(arrays.arity, [len(a) for a in g.args])


def test_a_signature_for_nodes_of_different_argument_counts_is_refused():
    """An op whose signature() gives nodes with different numbers of arguments the same
    key would have a batch drop arguments; the second node is refused at the user's line,
    and a node appended around the checks is refused when the graph's arguments are read
    as arrays (as the schedulers of large graphs and ``bv.explain`` read them)."""
    from batchviz.errors import ScheduleError
    from batchviz.schedule import PendingView
    from batchviz.ops._build import build
    class Total(Op):
        name = "test_total_without_arity_in_signature"
        arity = None

        def infer_shape(self, shapes, attrs):
            return shapes[0]

        def signature(self, graph, args, attrs, shape):
            return (self.name, shape), ()  # the number of arguments is missing

        def forward(self, xp, ins, attrs, n):
            return sum(ins)

        def backward(self, xp, ins, out, g, attrs, n, needs):
            return [g] * len(ins)

    op = Total()
    with bv.Graph(strategy="agenda") as g:
        x = bv.input(np.ones(2))
        build(op, (x, x))
        with pytest.raises(TypeError, match="nodes of 2 and of 3 arguments the same key"):
            build(op, (x, x, x))
    with bv.Graph(strategy="agenda") as g:
        x = bv.input(np.ones(2))
        y = build(op, (x, x))
        z = g.push(op, (x.node,), None, (2,), g.sigs[y.node], 2)  # around the checks
        with pytest.raises(ScheduleError, match=rf"node {z.node} \(test_total.*\) has 1 argument"):
            PendingView(g).arrays().arg_flat


def test_any_arity_needs_one_gather():
    class Loose(Op):
        name = "test_loose_any_arity"
        elementwise = True
        any_arity = True

    with pytest.raises(TypeError, match="only an op that reads all its arguments with one gather"):
        SignatureTable([]).intern(("test_loose_any_arity",), Loose())


def test_convolutions_batch_by_image_size_and_say_their_strides_and_padding():
    """Images of one size share a signature (the filter and bias, parameters, are shared
    arguments); another size, stride or padding is another signature, named so."""
    model = bv.Model(seed=0)
    f, b = model.add_parameters((3, 2, 2, 3), name="F"), model.add_parameters(3, name="b")
    with bv.Graph("agenda") as g:
        same = [bv.conv2d(bv.input(np.ones((4, 5, 2))), f, stride=(1, 2), valid=False, b=b)
                for _ in range(2)]
        other = bv.conv2d(bv.input(np.ones((6, 5, 2))), f, stride=(1, 2), valid=False, b=b)
        pooled = bv.maxpool2d(same[0], (2, 2))
        sigs = [g.sigs[e.node] for e in same + [other]]
        assert sigs[0] == sigs[1] != sigs[2]
        assert g.signature_name(sigs[0]) == "conv2d-4x5x2-F#1-b#2-stride1x2-same"
        assert g.signature_name(g.sigs[pooled.node]) == "maxpool2d-4x3x3-window2x2-stride2x2-valid"
