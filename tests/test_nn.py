"""batchviz.nn builders and the fused LSTM / manual-batching ops, against NumPy references.

The references are written out in plain NumPy, gate by gate, so the fused kernels
(``bv.lstm_gates``, ``bv.lstm_c``, ``bv.lstm_h``; ``bv.lstm_step``, ``bv.lstm_step_cell``),
the builders and the column (manual batching) ops are each checked against an independent
computation in float64."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import batchviz as bv
from batchviz.backend import to_numpy
from batchviz.data import Tree
from batchviz.nn import MLP, BiLSTMBuilder, CharBiLSTMEmbedder, LSTMBuilder, TreeLSTMCell

from helpers import STRATEGIES, assert_central_differences

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the benchmarks package


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_lstm(xs, Wxs, Wh, b):
    """Reference vanilla LSTM over ``xs`` (each a list of input pieces); gates [i, f, o, g]."""
    H = Wh.shape[1]
    h, c, out = np.zeros(H), np.zeros(H), []
    for pieces in xs:
        a = b + Wh @ h + sum(W @ x for W, x in zip(Wxs, pieces))
        i, f, o, g = sigmoid(a[:H]), sigmoid(a[H:2 * H]), sigmoid(a[2 * H:3 * H]), np.tanh(a[3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        out.append(h)
    return out


def values(p):
    return p.value().astype(np.float64)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_two_layer_lstm_matches_numpy(strategy, float64):
    rng = np.random.default_rng(0)
    model = bv.Model(seed=1)
    lstm = LSTMBuilder(2, 3, 4, model)
    seqs = [[rng.normal(size=3) for _ in range(n)] for n in (1, 3, 5)]
    with bv.Graph(strategy=strategy):
        outs = [lstm.initial_state().transduce([bv.input(x) for x in xs]) for xs in seqs]
        got = [[h.value() for h in hs] for hs in outs]
    for xs, hs in zip(seqs, got):
        layer1 = np_lstm([[x] for x in xs], [values(lstm.Wx[0][0])], values(lstm.Wh[0]), values(lstm.b[0]))
        layer2 = np_lstm([[h] for h in layer1], [values(lstm.Wx[1][0])], values(lstm.Wh[1]), values(lstm.b[1]))
        np.testing.assert_allclose(hs, layer2, rtol=1e-12, atol=1e-12)


def test_lstm_state_api(float64):
    model = bv.Model(seed=0)
    lstm = LSTMBuilder(2, (2, 3), 4, model)
    with bv.Graph():
        s0 = lstm.initial_state()
        assert s0.output() is None and s0.h() == [] and s0.s() == []
        s1 = s0.add_input([bv.input(np.ones(2)), bv.input(np.ones(3))])
        assert s1.output().shape == (4,)
        assert len(s1.h()) == 2 and len(s1.s()) == 4
        assert s0.output() is None  # states are immutable
        with pytest.raises(ValueError, match="2 input piece"):
            s1.add_input(bv.input(np.ones(2)))
        # DyNet's initial_state(vecs): continuing from s1's full state gives the same step
        x = [bv.input(np.full(2, 0.5)), bv.input(np.full(3, -0.5))]
        again = lstm.initial_state(s1.s()).add_input(x).output().value()
        # equal up to rounding: one step starts from plain vectors, the other from the step
        # node, and on the GPU the two paths' kernels may round differently (1e-18 was seen)
        np.testing.assert_allclose(again, s1.add_input(x).output().value(), rtol=1e-12, atol=1e-15)
        with pytest.raises(ValueError, match="2 \\* layers"):
            lstm.initial_state([s1.output()])
    assert len(lstm.param_list()) == 2 + 1 + 1 + 1 + 1 + 1  # Wx0 x2, Wh0, b0, Wx1, Wh1, b1
    assert lstm.b[0].value()[4:8].tolist() == [1.0] * 4  # forget-gate bias starts at 1


def test_lstm_unit_fast_path_builds_the_same_nodes(float64):
    """lstm_unit memoizes shapes and signatures; its nodes must equal the checked ones
    (lstm_step), and its values DyNet's three ops (vanilla_lstm_*)."""
    model = bv.Model(seed=0)
    b, Wx, Wh = (model.add_parameters((8,), init="normal"), model.add_parameters((8, 3)),
                 model.add_parameters((8, 2)))
    with bv.Graph() as g:
        x, h, c = bv.input(np.arange(3.0)), bv.zeros(2), bv.zeros(2)
        s1 = bv.lstm_unit(b, [Wx, Wh], [x, h], [c], 2)    # first: built the checked way
        s2 = bv.lstm_unit(b, [Wx, Wh], [x, s1], [s1], 2)  # reads a step node: checked too
        s3 = bv.lstm_unit(b, [Wx, Wh], [x, s2], [s2], 2)  # memoized
        s4 = bv.lstm_step([b, Wx, x, Wh, s2], [s2], 2)
        assert g.sigs[s1.node] != g.sigs[s2.node]          # a plain cell, then a step node's cell block
        assert g.sigs[s3.node] == g.sigs[s4.node] and g.attrs[s3.node] == g.attrs[s4.node]
        assert g.shapes[s3.node] == g.shapes[s4.node] == (2,)
        assert g.depths[s3.node] == g.depths[s4.node] == g.depths[s2.node] + 1
        np.testing.assert_array_equal(s3.value(), s4.value())
        # DyNet's three nodes per step, from the same parameters
        gates1 = bv.vanilla_lstm_gates(x, h, Wx, Wh, b)
        c1 = bv.vanilla_lstm_c(c, gates1)
        gates2 = bv.vanilla_lstm_gates(x, bv.vanilla_lstm_h(c1, gates1), Wx, Wh, b)
        c2 = bv.vanilla_lstm_c(c1, gates2)
        np.testing.assert_allclose(s2.value(), bv.vanilla_lstm_h(c2, gates2).value(), rtol=1e-14)
        # the step's value is h; it keeps [h, c, i, f, o, u], and lstm_step_cell cuts out c
        np.testing.assert_allclose(bv.lstm_step_cell(s2).value(), c2.value(), rtol=1e-14)
        assert g.sigtab[g.sigs[s2.node]].blocks == 6
        g.forward()
        kept = np.concatenate([g.value_of(s2.node, k).reshape(-1) for k in range(6)])
        np.testing.assert_allclose(kept, np.concatenate([s2.value(), c2.value(), gates2.value()]),
                                   rtol=1e-14)
        assert bv.lstm_step_cell(c) is c


def test_lstm_step_checks_its_cells():
    """A previous cell is a cell of ``hidden`` rows or an lstm_step node of that hidden;
    anything else is refused at the user's line."""
    model = bv.Model(seed=0)
    b, Wx, Wh = (model.add_parameters((8,)), model.add_parameters((8, 3)),
                 model.add_parameters((8, 2)))
    with bv.Graph():
        x, h = bv.input(np.ones(3)), bv.zeros(2)
        s = bv.lstm_step([b, Wx, x, Wh, h], [bv.zeros(2)], 2)
        assert s.shape == (2,)
        with pytest.raises(bv.ShapeError, match="neither a cell of 2 rows nor an lstm_step"):
            bv.lstm_step([b, Wx, x, Wh, h], [bv.zeros(12)], 2)   # what a step node keeps
        with pytest.raises(bv.ShapeError, match="neither a cell of 2 rows nor an lstm_step"):
            bv.lstm_unit(b, [Wx, Wh], [x, h], [bv.zeros(12)], 2)
        with pytest.raises(bv.ShapeError, match="neither a cell nor an lstm_step node of shape"):
            bv.lstm_step([b, Wx, x, Wh, h], [bv.zeros((2, 3))], 2)   # columns the inputs lack
        with pytest.raises(bv.ShapeError, match="need 5 blocks"):
            bv.lstm_step([b, Wx, x, Wh, h], [s, s], 2)            # two cells: 5 gate blocks
        with pytest.raises(ValueError, match="hidden must be positive"):
            bv.lstm_step([b, Wx, x], [], 0)
        assert bv.lstm_step_cell(x) is x                          # not a step: as it is


def _graph_of(build):
    """Everything the graph holds about its nodes, after ``build()`` inside a new graph."""
    with bv.Graph() as g:
        build()
        return [list(g.ops), list(g.args), list(g.attrs), list(g.shapes), list(g.sigs),
                list(g.depths)]


def test_unit_builders_build_exactly_the_per_step_nodes(monkeypatch):
    """LSTMState.transduce (through lstm_sequence) and TreeLSTMCell.encode (through
    UnitBuilder) skip the per-unit bookkeeping; the graph must be node for node the one the
    per-step add_input / leaf / node calls build (ops, arguments, shapes, signatures, depths)."""
    from batchviz.data import synthetic_trees
    from batchviz.nn.lstm import LSTMState

    model = bv.Model(seed=0)
    bilstm = BiLSTMBuilder(2, 5, 4, model)           # steps of one and of two input pieces
    three = LSTMBuilder(1, (5, 5, 5), 4, model)      # three pieces: the general case
    single = LSTMBuilder(1, 5, 4, model, name="single")  # started from given states
    cell = TreeLSTMCell(model, 5, 4)
    E = model.add_lookup_parameters((30, 5))
    trees = synthetic_trees(3, min_leaves=2, max_leaves=7, vocab_size=30, seed=1)
    rows = {}

    def build():
        for n in (1, 2, 6):
            bilstm.transduce([E[i] for i in range(n)])
            three.initial_state().transduce([[E[i], E[i + 1], E[i + 2]] for i in range(n)])
            outs = single.initial_state().transduce([E[i] for i in range(n)])
            # [c, h]: a step node's cell, or a plain cell, and a step node's h
            single.initial_state([outs[-1], outs[0]]).transduce([E[i] for i in range(n)])
            single.initial_state([bv.zeros(4), outs[-1]]).transduce([E[3]] * n)
        for tree in trees:
            cell.encode(tree, lambda word: E[rows.setdefault(word, len(rows) % 30)])

    fast = _graph_of(build)

    def per_step_transduce(self, xs):
        state, outputs = self, []
        for x in xs:
            state = state.add_input(x)
            outputs.append(state.output())
        return outputs

    def per_node_encode(self, tree, leaf_input):
        states, out = {}, []
        for node in tree.nodes():
            if node.is_leaf:
                state = self.leaf(leaf_input(node.word))
            else:
                state = self.node(*(states[id(child)] for child in node.children))
            states[id(node)] = state
            out.append((node, state))
        return out

    monkeypatch.setattr(LSTMState, "transduce", per_step_transduce)
    monkeypatch.setattr(TreeLSTMCell, "encode", per_node_encode)
    assert fast == _graph_of(build)


def test_a_multi_layer_transduce_builds_the_per_step_nodes_layer_by_layer():
    """A multi-layer LSTM's transduce builds each layer's sequence at once, so its nodes are
    numbered layer by layer, where add_input numbers them step by step: the same nodes
    (op, signature, shape, depth, and arguments up to that numbering) and the same values."""
    model = bv.Model(seed=2)
    lstm = LSTMBuilder(3, 5, 4, model)
    E = model.add_lookup_parameters((30, 5))

    def graph_of(build):
        with bv.Graph() as g:
            outputs = build()
            node_key = {}
            for i in range(len(g.ops)):   # a node by what it is, not by its number
                name = re.sub(r"#\d+", "", g.signature_name(g.sigs[i]))  # no node ids
                node_key[i] = hash((g.ops[i].name, name, g.shapes[i], g.depths[i],
                                    tuple(node_key[a] for a in g.args[i])))
            return sorted(node_key.values()), [o.value() for o in outputs]

    def per_step():
        state, outputs = lstm.initial_state(), []
        for i in range(6):
            state = state.add_input(E[i])
            outputs.append(state.output())
        return outputs

    fast_nodes, fast_values = graph_of(lambda: lstm.initial_state().transduce(
        [E[i] for i in range(6)]))
    slow_nodes, slow_values = graph_of(per_step)
    assert fast_nodes == slow_nodes
    np.testing.assert_array_equal(fast_values, slow_values)


def test_unit_builder_falls_back_to_the_checked_path():
    """A step whose input has another shape, or weights that are expressions, go through
    lstm_unit: the mistake is reported, the expression weights are used as given."""
    model = bv.Model(seed=0)
    b, Wx, Wh = (model.add_parameters((8,)), model.add_parameters((8, 3)),
                 model.add_parameters((8, 2)))
    with bv.Graph():
        unit = bv.UnitBuilder(b, [Wx, Wh], 2)
        s = unit([bv.input(np.ones(3)), bv.zeros(2)], [bv.zeros(2)])
        with pytest.raises(bv.ShapeError, match="lstm_step"):
            unit([bv.input(np.ones(4)), s], [s])
        scaled = unit.weights[0] * 2.0                     # an expression, not a parameter
        twice = bv.UnitBuilder(b, [scaled, Wh], 2)
        s1 = twice([bv.input(np.ones(3)), s], [s])
        s2 = twice([bv.input(np.ones(3)), s1], [s1])
        assert twice.graph is None                         # nothing learnt: no shortcut
        want = bv.lstm_unit(b, [scaled, Wh], [bv.input(np.ones(3)), s1], [s1], 2)
        np.testing.assert_array_equal(s2.value(), want.value())


def test_lstm_sequence_checks_every_step_and_records_sources():
    """lstm_sequence appends the steps whose inputs pass its checks in one push_many: a
    later step with a wrong input shape still raises, the steps before it are the ones the
    per-step path builds, and a recording graph gets the user's line for every node."""
    model = bv.Model(seed=0)
    lstm = LSTMBuilder(1, 3, 2, model)
    with bv.Graph(record_source=True) as g:
        xs = [bv.input(np.ones(3)) for _ in range(5)]
        outputs = lstm.initial_state().transduce(xs)
        assert len(outputs) == 5 and len(g.sources) == len(g.ops)
        built = g.sources[outputs[2].node - 1:]             # the bulk-appended steps
        assert len(built) == 3 * 2 and all("test_nn.py" in s for s in built)
        n = len(g.ops)
        with pytest.raises(bv.ShapeError, match=r"inputs of size 3, but input 4 has shape \(4,\)"):
            lstm.initial_state().transduce(xs[:3] + [bv.input(np.ones(4))])
        # zeros x2, the first two steps (checked), one bulk step, the wrong input's node;
        # a step is two nodes (its input projection, then the step node)
        assert len(g.ops) - n == 2 + 2 * 2 + 2 * 1 + 1


def test_builders_relearn_their_units_when_the_graph_changes(float64):
    """LSTMBuilder and TreeLSTMCell keep their unit builders between calls. Built in a
    graph, then in a second graph while the first is alive, then in the first again, then
    in a new graph, the sequences and trees have the same values every time."""
    from batchviz.data import synthetic_trees

    model = bv.Model(seed=5)
    lstm = LSTMBuilder(1, 3, 2, model)
    cell = TreeLSTMCell(model, 3, 2)
    tree = synthetic_trees(1, min_leaves=4, max_leaves=4, vocab_size=5, seed=2)[0]
    xs = [np.random.default_rng(0).normal(size=3) for _ in range(4)]

    def outputs():
        seq = lstm.initial_state().transduce([bv.input(x) for x in xs])
        states = cell.encode(tree, lambda word: bv.input(np.full(3, len(word), dtype=float)))
        return np.concatenate([h.value() for h in seq] + [h.value() for _, h in states])

    with bv.Graph() as first:
        before = outputs()
        with bv.Graph() as second:
            inside = outputs()
            assert lstm._steps[0].graph is second and cell._inner_unit.graph is second
        again = outputs()
        assert lstm._steps[0].graph is first
    with bv.Graph():
        after = outputs()
    for values in (inside, again, after):
        np.testing.assert_array_equal(values, before)


@pytest.mark.parametrize("strategy", ["depth", "agenda"])
def test_a_minibatchs_input_projections_run_as_one_batch_per_direction(strategy):
    """A sequence step is two nodes: its input projection b + W_x x does not wait for the
    recurrence, so both strategies run the projections of every word of every sentence as
    one batch per direction (one large product), while the step nodes batch per time step."""
    from batchviz.schedule import PendingView, resolve_strategy

    model = bv.Model(seed=0)
    bilstm = BiLSTMBuilder(1, 5, 4, model)
    E = model.add_lookup_parameters((30, 5))
    lengths = (1, 3, 6)
    with bv.Graph(strategy=strategy) as g:
        for n in lengths:
            bilstm.transduce_pieces([E[i] for i in range(n)])
        batches = resolve_strategy(strategy).schedule(PendingView(g))
        projections = [b for b in batches if g.ops[b[0]].name == "affine"]
        steps = [b for b in batches if g.ops[b[0]].name == "lstm_step"]
        assert sorted(map(len, projections)) == [sum(lengths)] * 2
        assert sum(map(len, steps)) == 2 * sum(lengths)
        # per direction: the first steps (reading zeros), then one batch per later step
        assert len(steps) == 2 * max(lengths)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_bilstm_matches_numpy(strategy, float64):
    rng = np.random.default_rng(2)
    model = bv.Model(seed=3)
    bilstm = BiLSTMBuilder(2, 3, 2, model)
    xs = [rng.normal(size=3) for _ in range(4)]
    with bv.Graph(strategy=strategy):
        inputs = [bv.input(x) for x in xs]
        pieces = bilstm.transduce_pieces(inputs)
        got = [np.concatenate([f.value(), b.value()]) for f, b in pieces]
        concatenated = [v.value() for v in bilstm.transduce(inputs)]
    F, B = bilstm.forward, bilstm.backward
    f1 = np_lstm([[x] for x in xs], [values(F[0].Wx[0][0])], values(F[0].Wh[0]), values(F[0].b[0]))
    b1 = np_lstm([[x] for x in xs[::-1]], [values(B[0].Wx[0][0])], values(B[0].Wh[0]), values(B[0].b[0]))[::-1]
    layer1 = list(zip(f1, b1))
    f2 = np_lstm(layer1, [values(W) for W in F[1].Wx[0]], values(F[1].Wh[0]), values(F[1].b[0]))
    b2 = np_lstm(layer1[::-1], [values(W) for W in B[1].Wx[0]], values(B[1].Wh[0]), values(B[1].b[0]))[::-1]
    expected = [np.concatenate([f, b]) for f, b in zip(f2, b2)]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(concatenated, expected, rtol=1e-12, atol=1e-12)
    assert bilstm.output_dim == 4


def test_char_embedder_matches_numpy(float64):
    model = bv.Model(seed=4)
    chars = CharBiLSTMEmbedder(model, n_chars=5, char_dim=3, hidden_dim=2)
    word = [1, 4, 4, 0]
    with bv.Graph():
        got = chars(word).value()
    E = values(chars.C)
    xs = [[E[c]] for c in word]
    f, b = chars.forward, chars.backward
    fwd = np_lstm(xs, [values(f.Wx[0][0])], values(f.Wh[0]), values(f.b[0]))[-1]
    bwd = np_lstm(xs[::-1], [values(b.Wx[0][0])], values(b.Wh[0]), values(b.b[0]))[-1]
    np.testing.assert_allclose(got, np.concatenate([fwd, bwd]), rtol=1e-12, atol=1e-12)
    assert chars.output_dim == 4
    with pytest.raises(ValueError, match="at least one character"):
        chars([])


def np_tree(cell, tree, embed):
    """Reference binary Tree-LSTM (Tai et al.): returns {id(node): h} for every node."""
    H = cell.hidden_dim
    W, bl, UL, UR, b = (values(p) for p in (cell.W, cell.b_leaf, cell.U_L, cell.U_R, cell.b))
    state = {}
    for node in tree.nodes():
        if node.is_leaf:
            a = bl + W @ embed[node.word]
            i, o, u = sigmoid(a[:H]), sigmoid(a[H:2 * H]), np.tanh(a[2 * H:])
            c = i * u
        else:
            (hl, cl), (hr, cr) = state[id(node.children[0])], state[id(node.children[1])]
            a = b + UL @ hl + UR @ hr
            i, fl, fr, o = (sigmoid(a[k * H:(k + 1) * H]) for k in range(4))
            c = i * np.tanh(a[4 * H:]) + fl * cl + fr * cr
        state[id(node)] = (o * np.tanh(c), c)
    return {k: h for k, (h, _) in state.items()}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tree_lstm_matches_numpy(strategy, float64):
    rng = np.random.default_rng(5)
    model = bv.Model(seed=6)
    cell = TreeLSTMCell(model, input_dim=3, hidden_dim=2)
    leaf = lambda w: Tree(0, word=w)  # noqa: E731
    tree = Tree(1, [Tree(1, [leaf("a"), leaf("b")]), Tree(2, [leaf("c"), Tree(0, [leaf("a"), leaf("d")])])])
    embed = {w: rng.normal(size=3) for w in "abcd"}
    with bv.Graph(strategy=strategy):
        states = cell.encode(tree, lambda w: bv.input(embed[w]))
        got = {id(node): h.value() for node, h in states}
    assert [node for node, _ in states] == tree.nodes()
    expected = np_tree(cell, tree, embed)
    for key, h in expected.items():
        np.testing.assert_allclose(got[key], h, rtol=1e-12, atol=1e-12)
    with bv.Graph():
        with pytest.raises(ValueError, match="binarize"):
            cell.encode(Tree(0, [leaf("a"), leaf("b"), leaf("c")]), lambda w: bv.input(embed[w]))


def test_mlp_matches_numpy(float64):
    rng = np.random.default_rng(7)
    model = bv.Model(seed=8)
    mlp = MLP(model, [(2, 3), 4, 5], activation="tanh")
    x1, x2 = rng.normal(size=2), rng.normal(size=3)
    with bv.Graph():
        got = mlp([bv.input(x1), bv.input(x2)]).value()
    (W1, b1), (W2, b2) = mlp.layers
    hidden = np.tanh(values(b1) + values(W1[0]) @ x1 + values(W1[1]) @ x2)
    np.testing.assert_allclose(got, values(b2) + values(W2[0]) @ hidden, rtol=1e-12)
    with pytest.raises(ValueError, match="unknown activation"):
        MLP(model, [2, 3], activation="swish")
    with bv.Graph(), pytest.raises(ValueError, match="2 input piece"):
        mlp(bv.input(x1))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_manual_batching_equals_per_instance_code(strategy, float64):
    """The paper's Train-Batch-Manual tagger (matrices of 64 columns, here 5) computes the same
    loss and gradients as the naive per-sentence tagger with the same parameters."""
    from benchmarks.taggers import ManualTagger, Tagger

    rng = np.random.default_rng(9)
    model = bv.Model(seed=10)
    tagger = Tagger(model, n_words=11, n_tags=6, embed=4, hidden=3, layers=2)
    batch = [(rng.integers(0, 11, size=7).tolist(), rng.integers(0, 6, size=7).tolist()) for _ in range(5)]

    def loss_and_grads(build):
        model.zero_grad()
        with bv.Graph(strategy=strategy):
            loss = build()
            value = loss.value()
            loss.backward()
        return value, [p.grad for p in model.parameters()]

    naive, naive_grads = loss_and_grads(lambda: bv.esum([tagger.loss(w, t) for w, t in batch]))
    manual, manual_grads = loss_and_grads(lambda: ManualTagger(tagger).loss(batch))
    assert manual == pytest.approx(naive, rel=1e-12)
    for a, b in zip(naive_grads, manual_grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_lookup_batch_gradient(strategy, float64):
    """Finite differences through lookup_batch (a repeated row must accumulate)."""
    rng = np.random.default_rng(11)
    model = bv.Model(seed=12)
    E = model.add_lookup_parameters((5, 3))
    weights = rng.normal(size=(2, 3, 4))
    ids = [[1, 3, 1, 0], [4, 4, 2, 1]]

    def loss_value(strat):
        with bv.Graph(strategy=strat):
            loss = bv.esum([bv.sum_elems(bv.cmult(bv.lookup_batch(E, r), bv.input(w)))
                            for r, w in zip(ids, weights)])
            value = loss.value()
            loss.backward()
        return value

    model.zero_grad()
    loss_value(strategy)
    analytic = E.grad
    model.zero_grad()
    assert_central_differences(E, lambda: loss_value("none"), analytic, np.ndindex(E.shape),
                               rel=1e-6, abs=1e-9)
    model.zero_grad()


def test_column_ops_check_their_input():
    model = bv.Model(seed=0)
    E = model.add_lookup_parameters((4, 2), name="E")
    W, b = model.add_parameters((3, 2)), model.add_parameters((3,))
    with bv.Graph():
        with pytest.raises(IndexError, match="index 4 is out of range for E"):
            bv.lookup_batch(E, [0, 4])
        X = bv.lookup_batch(E, [0, 1, 2])
        assert X.shape == (2, 3)
        scores = bv.affine_batch([b, W, X])
        assert scores.shape == (3, 3)
        with pytest.raises(bv.ShapeError, match="2 labels for a matrix of 3 columns"):
            bv.pickneglogsoftmax_batch(scores, [0, 1])
        with pytest.raises(IndexError, match="class 3 is out of range"):
            bv.pickneglogsoftmax_batch(scores, [0, 1, 3])
        with pytest.raises(bv.ShapeError, match="must be a matrix"):
            bv.affine_batch([b, W, bv.input(np.ones(2))])


def test_lstm_ops_check_shapes():
    model = bv.Model(seed=0)
    b, W = model.add_parameters((8,)), model.add_parameters((8, 3))
    with bv.Graph():
        x = bv.input(np.ones(3))
        with pytest.raises(bv.ShapeError, match="not 3 or more blocks of hidden=3"):
            bv.lstm_gates([b, W, x], 3)
        with pytest.raises(bv.ShapeError, match="inner dimensions"):
            bv.lstm_gates([b, W, bv.input(np.ones(2))], 2)
        gates = bv.lstm_gates([b, W, x], 2)
        with pytest.raises(bv.ShapeError, match="do not split into 5"):
            bv.lstm_c([bv.zeros(2), bv.zeros(2)], gates)
        with pytest.raises(bv.ShapeError, match="does not match gates"):
            bv.vanilla_lstm_c(bv.zeros(3), gates)
        with pytest.raises(ValueError, match="one matrix per piece"):
            bv.vanilla_lstm_gates([x, x], None, W, W, b)


def test_lstm_signatures_batch_across_instances():
    """One batch per LSTM op and time step: the shared W/b make every sentence's gates at a
    step one matrix-matrix product (agenda), and sequences of equal length line up."""
    model = bv.Model(seed=0)
    lstm = LSTMBuilder(1, 3, 4, model)
    with bv.Graph(strategy="agenda") as g:
        outs = [lstm.initial_state().transduce([bv.input(np.ones(3))] * 5) for _ in range(6)]
        loss = bv.esum([bv.sum_elems(hs[-1]) for hs in outs])
        loss.value()
        names = sorted(g.signature_name(s) for s in set(g.sigs[n] for n in range(len(g))
                                                         if g.ops[n].name == "lstm_step"))
        # the parameters' node ids are in them; the first step reads a plain zero cell
        # (4 rows), the later ones the cell block of the step before
        assert len(names) == 2 and all("#" in name for name in names)
        assert names[0].endswith("-4x1") and names[1].endswith("-cell")
        forward = g.last_stats.forward
        records = g.layout.batches
    # 6 x 5 steps, one node each = 30 nodes in 5 batches (plus inputs, zeros, sums)
    per_op = {}
    for rec in records:
        per_op.setdefault(rec.op.name, []).append(len(rec.nodes))
    assert per_op["lstm_step"] == [6] * 5
    assert forward.batches == len(records)


def _lstm_h_case(strategy, order):
    """lstm_h reading its gates in ``order`` (a copy under batching) and from a parameter
    (stacked node by node): loss and gradients."""
    model = bv.Model(seed=3)
    H = 3
    P = [model.add_parameters((4 * H,), init="normal") for _ in order]
    C = [model.add_parameters((H,), init="normal") for _ in order]
    G = model.add_parameters((4 * H,), init="normal")
    with bv.Graph(strategy=strategy):
        gates = [bv.tanh(p) for p in P]                     # one batch, in creation order
        hs = [bv.lstm_h(bv.tanh(C[k]), gates[j]) for k, j in enumerate(order)]
        hs.append(bv.lstm_h(bv.tanh(C[0]), G))              # the gates are a parameter
        loss = bv.sum_elems(bv.esum([bv.cmult(h, h) for h in hs]))
        value = loss.value()
        loss.backward()
    return value, [p.grad.copy() for p in P + C + [G]]


def test_lstm_h_block_gradient_reaches_gathered_and_stacked_gates(float64):
    """lstm_h's gradient covers only the o block of its gates (a BlockGradient); where the
    gates were gathered or stacked instead of read as a view, the executor makes it dense.
    Either way the gradients equal node-by-node execution."""
    want, want_grads = _lstm_h_case("none", [2, 0, 1])
    for strategy in ("depth", "agenda"):
        got, grads = _lstm_h_case(strategy, [2, 0, 1])
        np.testing.assert_allclose(got, want, rtol=1e-12)
        for g, w in zip(grads, want_grads):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_lstm_steps_read_cells_across_runs(strategy, float64):
    """Sequences evaluated half-way and then continued: the later steps read their previous
    cells from step nodes in an earlier run's arena (views or stacked copies of their cell
    blocks). Values and gradients equal those of one run."""
    rng = np.random.default_rng(3)
    model = bv.Model(seed=4)
    lstm = LSTMBuilder(1, 3, 2, model)
    xs = [[rng.normal(size=3) for _ in range(6)] for _ in range(3)]

    def run(split):
        model.zero_grad()
        with bv.Graph(strategy=strategy):
            states = [lstm.initial_state() for _ in xs]
            hs = []
            for t in range(6):
                if t == split:
                    bv.esum([s.output() for s in states]).value()   # a run ends here
                states = [s.add_input(bv.input(x[t])) for s, x in zip(states, xs)]
                hs += [s.output() for s in states]
            loss = bv.sum_elems(bv.esum([bv.cmult(h, h) for h in hs]))
            value = loss.value()
            loss.backward()
        return value, [p.grad for p in model.parameters()]

    want, want_grads = run(split=None)
    got, grads = run(split=3)
    assert got == pytest.approx(want, rel=1e-12)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-14)

    def staggered():
        """Sequence 0 runs three steps first; then sequence 1 starts: a later step of it
        (reading a step node of this run) and one of sequence 0 (reading a step node of
        the first run) share a batch, which stacks the two runs' cell blocks."""
        model.zero_grad()
        with bv.Graph(strategy=strategy) as g:
            s0 = lstm.initial_state()
            for t in range(3):
                s0 = s0.add_input(bv.input(xs[0][t]))
            s0.output().value()
            s1 = lstm.initial_state()
            hs = []
            for t in range(6):
                s1 = s1.add_input(bv.input(xs[1][t]))
                hs.append(s1.output())
                if t < 3:
                    s0 = s0.add_input(bv.input(xs[0][t + 3]))
                    hs.append(s0.output())
            loss = bv.sum_elems(bv.esum([bv.cmult(h, h) for h in hs]))
            value = loss.value()
            loss.backward()
            kinds = {type(read).__name__ for rec in g.layout.batches
                     if rec.op.name == "lstm_step" for read in rec.reads}
        return value, [p.grad for p in model.parameters()], kinds

    def one_run():
        model.zero_grad()
        with bv.Graph(strategy="none"):
            hs = []
            for k in (0, 1):
                s = lstm.initial_state()
                for t in range(6):
                    s = s.add_input(bv.input(xs[k][t]))
                    if k == 1 or t >= 3:
                        hs.append(s.output())
            loss = bv.sum_elems(bv.esum([bv.cmult(h, h) for h in hs]))
            value = loss.value()
            loss.backward()
        return value, [p.grad for p in model.parameters()]

    got, grads, kinds = staggered()
    want, want_grads = one_run()
    assert got == pytest.approx(want, rel=1e-12)
    for g, w in zip(grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-14)
    if strategy != "none":
        assert "CopyFromArenas" in kinds   # the two runs' cells, read side by side


def build_two_of_each(model):
    """Two of every builder, none named: an encoder and a decoder, two taggers' parts."""
    return [LSTMBuilder(1, 3, 4, model), LSTMBuilder(2, 3, 4, model),
            BiLSTMBuilder(1, 3, 2, model), BiLSTMBuilder(1, 3, 2, model),
            MLP(model, [3, 5, 2]), MLP(model, [3, 2]),
            TreeLSTMCell(model, 3, 4), TreeLSTMCell(model, 3, 4),
            CharBiLSTMEmbedder(model, 10, 3, 2), CharBiLSTMEmbedder(model, 10, 3, 2)]


def test_builders_without_names_get_names_of_their_own(tmp_path):
    model = bv.Model(seed=0)
    build_two_of_each(model)
    names = [p.name for p in model.parameters()]
    assert len(set(names)) == len(names)
    prefixes = {n.split(".", 1)[0] for n in names}
    assert {"lstm", "lstm_2", "bilstm", "bilstm_2", "mlp", "mlp_2", "tree", "tree_2",
            "char", "char_2"} <= prefixes
    # the same code builds the same names again: a saved model loads into it
    model.save(tmp_path / "m.npz")
    again = bv.Model(seed=1)
    build_two_of_each(again)
    again.load(tmp_path / "m.npz")
    for p, q in zip(model.parameters(), again.parameters()):
        assert p.name == q.name
        np.testing.assert_array_equal(p.value(), q.value())


def test_a_name_given_twice_is_refused_and_numbered_names_step_aside():
    model = bv.Model(seed=0)
    LSTMBuilder(1, 3, 4, model, name="enc")
    with pytest.raises(ValueError, match="a parameter named 'enc.l0.Wx0' already exists"):
        LSTMBuilder(1, 3, 4, model, name="enc")
    named = bv.Model(seed=0)
    named.add_parameters(2, name="p1")   # looks like the name the next one would get
    assert [named.add_parameters(2).name for _ in range(2)] == ["p2", "p3"]  # not "p1" again


@pytest.mark.parametrize("read, message", [
    (lambda: LSTMBuilder(2, 3, 4, bv.Model()).initial_state().add_input(bv.zeros(5)),
     r"this LSTM reads inputs of size 3, but input 1 has shape \(5,\)"),
    (lambda: LSTMBuilder(1, 3, 4, bv.Model()).initial_state().transduce(
        [bv.zeros(3), bv.zeros(3), bv.zeros((2, 7))]),
     r"this LSTM reads inputs of size 3, but input 3 has shape \(2, 7\)"),
    (lambda: LSTMBuilder(1, (3, 2), 4, bv.Model()).initial_state().transduce(
        [[bv.zeros(3), bv.zeros(2)], [bv.zeros(3), bv.zeros(3)]]),
     r"this LSTM reads inputs of size 3 \+ 2, but piece 2 of input 2 has shape \(3,\)"),
    (lambda: BiLSTMBuilder(2, 3, 4, bv.Model()).transduce([bv.zeros(3), bv.zeros(4)]),
     r"this LSTM reads inputs of size 3, but input 2 has shape \(4,\)"),
], ids=["add_input", "transduce", "pieces", "bilstm"])
def test_an_input_of_the_wrong_size_is_named_in_the_lstms_terms(read, message):
    with bv.Graph():
        with pytest.raises(bv.ShapeError, match=message):
            read()
