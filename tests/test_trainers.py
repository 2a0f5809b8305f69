"""Trainers (SGD with decay, Adam, clipping), the training loop, and real learning.

Updates are checked against the update rules written out in NumPy; training is checked by
learning a rule (batchviz.data.synthetic_tagging's tags depend on the word and on its left
neighbour) far above chance, and by the three strategies giving the same losses step by step."""
import time

import numpy as np
import pytest

import batchviz as bv
from batchviz import backend
from batchviz.data import Vocab, synthetic_tagging
from batchviz.nn import AdamTrainer, BiLSTMBuilder, SGDTrainer, train

from helpers import STRATEGIES, warns_on_numpy


def quadratic_model(seed=0):
    """A parameter W and lookup table E with loss sum_k w_k . (W E[r_k]) (known gradients)."""
    model = bv.Model(seed=seed)
    W = model.add_parameters((2, 3), name="W")
    E = model.add_lookup_parameters((4, 3), name="E")
    return model, W, E


def backprop(W, E, rows=(0, 2, 0), scale=1.0):
    with bv.Graph():
        loss = bv.esum([bv.dot_product(W @ E[r], bv.input(np.array([1.0, -2.0]) * scale)) for r in rows])
        loss.value()
        loss.backward()


def test_sgd_update_applies_gradient_and_zeroes_it(float64):
    model, W, E = quadratic_model()
    before_W, before_E = W.value(), E.value()
    backprop(W, E)
    gW, gE = W.grad, E.grad
    assert np.abs(gW).sum() > 0 and np.abs(gE).sum() > 0
    SGDTrainer(model, learning_rate=0.1, clip_threshold=None).update()
    np.testing.assert_allclose(W.value(), before_W - 0.1 * gW, rtol=1e-14)
    np.testing.assert_allclose(E.value(), before_E - 0.1 * gE, rtol=1e-14)
    np.testing.assert_array_equal(E.value()[[1, 3]], before_E[[1, 3]])  # untouched rows
    assert np.all(W.grad == 0) and np.all(E.grad == 0)


def test_gradient_memory_is_reused_and_starts_from_zero(float64):
    """zero_grad keeps the accumulator's memory for the next backward pass, which starts it
    from zero again: the second step's gradient is its own, not the sum of both steps."""
    model, W, E = quadratic_model()
    backprop(W, E)
    first, buffer = W.grad, W.grad_array()
    model.zero_grad()
    assert np.all(W.grad == 0)
    backprop(W, E, rows=(1,))                 # another gradient
    assert W.grad_array() is buffer           # the same memory ...
    _, W_alone, E_alone = quadratic_model()
    backprop(W_alone, E_alone, rows=(1,))
    np.testing.assert_array_equal(W.grad, W_alone.grad)   # ... holding this step's gradient
    assert not np.array_equal(W.grad, first)


def test_backward_passes_before_an_update_add_up(float64):
    """The first gradient of a step is written into the reused accumulator, which still
    holds an older step's values (``grad_to_write``: not zeroed first); the later ones are
    added to it: two backward passes give the sum of their gradients."""
    model, W, E = quadratic_model()
    backprop(W, E, rows=(3,), scale=5.0)  # an older step's gradient, left in the memory
    model.zero_grad()
    backprop(W, E)
    backprop(W, E, rows=(1,), scale=2.0)
    _, W1, E1 = quadratic_model()
    backprop(W1, E1)
    _, W2, E2 = quadratic_model()
    backprop(W2, E2, rows=(1,), scale=2.0)
    np.testing.assert_allclose(W.grad, W1.grad + W2.grad, rtol=1e-14)
    np.testing.assert_allclose(E.grad, E1.grad + E2.grad, rtol=1e-14)


def test_grad_to_write_is_new_once_per_step():
    """A dense parameter's accumulator is new (to be written whole) at the first gradient
    after zero_grad, and the same memory; a table's never is, and is zero."""
    model, W, E = quadratic_model()
    first, new = W.grad_to_write()
    assert new
    again, new = W.grad_to_write()
    assert again is first and not new
    model.zero_grad()
    reused, new = W.grad_to_write()
    assert reused is first and new
    table, new = E.grad_to_write()
    assert not new and not np.any(backend.to_numpy(table))


def test_a_scale_of_one_leaves_the_gradient_as_it_is():
    """No clipping this step (a scale of exactly 1, on the host): the rule reads the
    gradient itself, not a copy; any other scale gives the product."""
    from batchviz.nn.trainers import scaled
    g = backend.state.xp.arange(4.0)
    assert scaled(g, 1.0) is g
    if backend.state.xp is np:
        assert scaled(g, np.float32(1.0)) is g
    half = scaled(g, 0.5)
    assert half is not g
    np.testing.assert_array_equal(backend.to_numpy(half), np.arange(4.0) * 0.5)


def rows_with_gradient(table):
    """The table's rows with a gradient, on the host (the method gives the backend's array)."""
    return backend.to_numpy(table.rows_with_gradient())


def test_a_lookup_gradient_knows_its_rows_and_zeroes_only_them(float64):
    """A lookup table's gradient remembers the rows the backward pass added to: its rows
    with a gradient are found among them, and zero_grad zeroes them alone and keeps the
    memory; once the whole gradient is handed out (grad_array), every row counts."""
    model, W, E = quadratic_model()
    backprop(W, E, rows=(0, 2, 0))
    np.testing.assert_array_equal(rows_with_gradient(E), [0, 2])
    np.testing.assert_array_equal(rows_with_gradient(E),
                                  np.flatnonzero(np.any(E.grad != 0, axis=1)))
    buffer = E._grad
    model.zero_grad()
    assert np.all(E.grad == 0) and len(rows_with_gradient(E)) == 0
    backprop(W, E, rows=(3,))
    assert E._grad is buffer and np.all(E.grad[[0, 1, 2]] == 0)
    np.testing.assert_array_equal(rows_with_gradient(E), [3])
    E.grad_array()[1] = 1.0                   # written as a whole: any row may have one
    np.testing.assert_array_equal(rows_with_gradient(E), [1, 3])
    model.zero_grad()
    backprop(W, E, rows=(2,))
    assert np.all(E.grad[[0, 1, 3]] == 0)
    np.testing.assert_array_equal(rows_with_gradient(E), [2])


def test_sgd_learning_rate_decay():
    model, W, E = quadratic_model()
    trainer = SGDTrainer(model, learning_rate=0.5, decay=0.25)
    rates = []
    for _ in range(3):
        trainer.new_epoch()
        rates.append(trainer.learning_rate)
    assert rates == pytest.approx([0.5 / 1.25, 0.5 / 1.5, 0.5 / 1.75])
    with pytest.raises(ValueError, match="learning_rate must be positive"):
        SGDTrainer(model, learning_rate=0)


def test_gradient_clipping_scales_to_the_threshold(float64):
    model, W, E = quadratic_model()
    backprop(W, E, scale=100.0)
    grads = [W.grad, E.grad]
    norm = np.sqrt(sum((g * g).sum() for g in grads))
    assert norm > 1.0
    before = [W.value(), E.value()]
    trainer = SGDTrainer(model, learning_rate=1.0, clip_threshold=1.0)
    trainer.update()
    steps = [b - p.value() for b, p in zip(before, (W, E))]
    assert np.sqrt(sum((s * s).sum() for s in steps)) == pytest.approx(1.0, rel=1e-12)
    assert float(trainer.last_gradient_norm) == pytest.approx(norm, rel=1e-12)
    for s, g in zip(steps, grads):  # the direction is the gradient's
        np.testing.assert_allclose(s, g / norm, rtol=1e-10, atol=1e-14)


def test_adam_matches_reference(float64):
    model, W, E = quadratic_model(seed=3)
    trainer = AdamTrainer(model, learning_rate=0.01, clip_threshold=None)
    w = W.value()
    m = v = np.zeros_like(w)
    e_before = E.value()
    for t in range(1, 4):
        backprop(W, E, scale=float(t))
        g = W.grad
        trainer.update()
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w = w - 0.01 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        np.testing.assert_allclose(W.value(), w, rtol=1e-6, atol=1e-10)
    # rows 1 and 3 of E were never looked up: Adam's sparse rule leaves them alone
    np.testing.assert_array_equal(E.value()[[1, 3]], e_before[[1, 3]])
    assert not np.allclose(E.value()[[0, 2]], e_before[[0, 2]])


def test_updates_make_no_host_transfer(monkeypatch):
    """Trainer.update() must work on the backend arrays only (no to_numpy)."""
    model, W, E = quadratic_model()
    for trainer in (SGDTrainer(model), AdamTrainer(model)):
        backprop(W, E)

        def forbidden(array):
            raise AssertionError("trainer.update() copied an array to the host")

        monkeypatch.setattr(backend, "to_numpy", forbidden)
        trainer.update()
        monkeypatch.undo()


def tagging_data(n, seed):
    sentences = synthetic_tagging(n, vocab_size=12, n_tags=4, seed=seed, zipf_exponent=0.0)
    for s in sentences:  # shorter sentences: the test must stay fast
        del s.words[8:], s.tags[8:]
    return sentences


class SmallTagger:
    def __init__(self, words: Vocab, tags: Vocab, seed=0):
        self.model = bv.Model(seed=seed)
        self.words, self.tags = words, tags
        self.E = self.model.add_lookup_parameters((len(words), 8))
        self.bilstm = BiLSTMBuilder(1, 8, 12, self.model)
        self.W = self.model.add_parameters((len(tags), 24))
        self.b = self.model.add_parameters((len(tags),), init="zeros")

    def scores(self, sentence):
        return [bv.affine_transform([self.b, self.W, h])
                for h in self.bilstm.transduce([self.E[w] for w in self.words.indices(sentence.words)])]

    def loss(self, sentence):
        return bv.esum([bv.pickneglogsoftmax(s, t)
                        for s, t in zip(self.scores(sentence), self.tags.indices(sentence.tags))])

    def accuracy(self, sentences):
        right = total = 0
        for s in sentences:
            with bv.Graph():
                predicted = [int(x.npvalue().argmax()) for x in self.scores(s)]
            gold = self.tags.indices(s.tags)
            right += sum(p == g for p, g in zip(predicted, gold))
            total += len(gold)
        return right / total


def test_training_learns_the_tagging_rule(capsys):
    """The tag depends on the word and on whether its left neighbour is odd: a BiLSTM tagger
    must get far above the 25% of chance (and above the ~62% of a context-free tagger)."""
    t0 = time.perf_counter()
    train_set, test_set = tagging_data(300, seed=1), tagging_data(40, seed=2)
    words = Vocab.from_corpus([s.words for s in train_set])
    tags = Vocab([f"T{i}" for i in range(4)], unk=None)
    tagger = SmallTagger(words, tags)
    before = tagger.accuracy(test_set)
    trainer = AdamTrainer(tagger.model, learning_rate=0.02)
    history = train(tagger.loss, train_set, trainer, epochs=6, batch_size=16, progress=False)
    after = tagger.accuracy(test_set)
    assert before < 0.5
    assert after > 0.85, f"accuracy {after:.2f} after training (was {before:.2f})"
    first = np.mean([r["loss"] for r in history[:5]])
    last = np.mean([r["loss"] for r in history[-5:]])
    assert last < 0.3 * first
    assert {"epoch", "loss", "instances", "seconds"} <= set(history[0])
    assert capsys.readouterr().err == ""  # progress=False: no bar
    assert time.perf_counter() - t0 < 20


def test_strategies_give_identical_losses_step_by_step(float64):
    """Training with none, depth and agenda follows the same trajectory in float64."""
    data = tagging_data(12, seed=3)
    words = Vocab.from_corpus([s.words for s in data])
    tags = Vocab([f"T{i}" for i in range(4)], unk=None)
    trajectories = {}
    for strategy in STRATEGIES:
        tagger = SmallTagger(words, tags, seed=5)
        trainer = SGDTrainer(tagger.model, learning_rate=0.2)
        history = train(tagger.loss, data, trainer, batch_size=4, epochs=2, strategy=strategy,
                        shuffle=True, seed=7, progress=False)
        trajectories[strategy] = [r["loss"] for r in history]
    reference = trajectories["none"]
    assert len(reference) == 6 and reference[-1] < reference[0]
    for strategy in ("depth", "agenda"):
        np.testing.assert_allclose(trajectories[strategy], reference, rtol=1e-12)


def test_train_loop_checks_its_arguments():
    model, W, E = quadratic_model()
    trainer = SGDTrainer(model)
    with pytest.raises(ValueError, match="exactly one of"):
        train(None, [1], trainer)
    with pytest.raises(ValueError, match="batch_size"):
        train(lambda x: x, [1], trainer, batch_size=0)
    with pytest.raises(ValueError, match="data is empty"):
        train(lambda x: x, [], trainer)


def test_a_loss_that_is_not_finite_stops_training_before_the_update():
    model, W, E = quadratic_model()
    trainer = SGDTrainer(model, learning_rate=0.1)
    before = [p.value() for p in model.parameters()]

    def loss(row):  # the third row's loss is log(0)
        return bv.log(bv.scale(bv.squared_norm(W @ E[row]), 0.0 if row == 2 else 1.0))

    with pytest.raises(FloatingPointError, match=r"loss of minibatch 2 of epoch 1 is -inf"), \
            warns_on_numpy(bv.NumericsWarning, match="divide by zero"):  # at this line, not NumPy's
        train(loss, [0, 1, 2, 3], trainer, batch_size=2, shuffle=False, progress=False)
    after = [p.value() for p in model.parameters()]
    assert any(not np.array_equal(a, b) for a, b in zip(before, after))  # minibatch 1 ran
    assert all(np.all(np.isfinite(p.value())) for p in model.parameters())


def test_batch_loss_fn_path(float64):
    model, W, E = quadratic_model()
    trainer = SGDTrainer(model, learning_rate=0.01)
    seen = []

    def batch_loss(rows):
        seen.append(list(rows))
        return bv.esum([bv.squared_norm(W @ E[r]) for r in rows])

    history = train(None, [0, 1, 2, 3, 0], trainer, batch_size=2, shuffle=False,
                    batch_loss_fn=batch_loss, progress=False)
    assert seen == [[0, 1], [2, 3], [0]]
    assert [r["instances"] for r in history] == [2, 2, 1]


def test_a_lookup_gradient_norm_is_taken_over_the_rows_added_to(float64):
    """Global-norm clipping adds up each parameter's squared gradient norm; a lookup
    table's is taken over the rows the backward pass added to (the others are zero), and
    over the whole table once its gradient was handed out whole. Either way it is the
    norm of the whole gradient."""
    model, W, E = quadratic_model()
    backprop(W, E, rows=(0, 2, 0), scale=3.0)
    whole = float((E.grad.astype(np.float64) ** 2).sum())
    assert whole > 0
    assert float(E.squared_grad_norm()) == pytest.approx(whole, rel=1e-12)
    assert float(W.squared_grad_norm()) == pytest.approx(float((W.grad ** 2).sum()), rel=1e-12)
    backprop(W, E, rows=(3,))                  # rows added since the norm was taken count
    np.testing.assert_array_equal(rows_with_gradient(E), [0, 2, 3])
    assert float(E.squared_grad_norm()) == pytest.approx(float((E.grad ** 2).sum()), rel=1e-12)
    E.grad_array()[1] = 2.0                    # written whole: row 1 counts too
    assert float(E.squared_grad_norm()) == pytest.approx(float((E.grad ** 2).sum()), rel=1e-12)
    model.zero_grad()
    backprop(W, E, rows=(1,))
    np.testing.assert_array_equal(rows_with_gradient(E), [1])
    assert float(E.squared_grad_norm()) == pytest.approx(float((E.grad ** 2).sum()), rel=1e-12)


def test_adam_takes_the_clipping_scale_into_its_constants(float64):
    """Clipped, Adam's moments take in ``scale * g`` (DyNet's ``gscale``, multiplied into the
    rule's constants rather than over the gradient first): the values of the rule written
    out with the scaled gradient."""
    model, W, E = quadratic_model(seed=5)
    trainer = AdamTrainer(model, learning_rate=0.01, clip_threshold=1.0)
    w, m, v = W.value(), 0.0, 0.0
    for t in range(1, 4):
        backprop(W, E, scale=100.0 * t)
        g = W.grad
        norm = np.sqrt((g * g).sum() + (E.grad * E.grad).sum())
        trainer.update()
        g = g * min(1.0, 1.0 / norm)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        rate = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)   # (DyNet's eps: on sqrt(v))
        w = w - rate * m / (np.sqrt(v) + 1e-8)
        np.testing.assert_allclose(W.value(), w, rtol=1e-10, atol=1e-14)


def test_adam_update_leaves_the_gradient_alone():
    """adam_update reads the gradient only: with a scale, the rule's constants carry it."""
    from batchviz.nn.trainers import adam_update
    rng = np.random.default_rng(0)
    values, g = rng.normal(size=50).astype(np.float32), rng.normal(size=50).astype(np.float32)
    m, v = np.zeros(50, np.float32), np.zeros(50, np.float32)
    g_before, v0 = g.copy(), values.astype(np.float64)
    adam_update(np, values, g, m, v, 0.01, 0.9, 0.999, 1e-8, 0.5)
    np.testing.assert_array_equal(g, g_before)
    gs = 0.5 * g_before.astype(np.float64)
    want = v0 - 0.01 * (0.1 * gs) / (np.sqrt(0.001 * gs * gs) + 1e-8)
    np.testing.assert_allclose(values, want, rtol=1e-5)



def test_a_dynet_trainer_without_a_rule_says_so():
    """A DyNet trainer subclass that defines neither ``rule`` nor ``scaled_rule`` raises
    NotImplementedError naming itself (the two default to each other)."""
    import batchviz.dynet as dy

    class NoRule(dy.Trainer):
        pass

    m = dy.ParameterCollection()
    trainer = NoRule(m, 0.1)
    values = np.zeros(3, dtype=np.float32)
    with pytest.raises(NotImplementedError, match="NoRule defines neither rule"):
        trainer.scaled_rule(values, np.ones(3, dtype=np.float32), 1.0, [])
