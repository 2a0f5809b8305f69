"""A minibatched LSTM language model: DyNet's "manual batching" with autobatching on top.

The sentences of a minibatch are read together: at every time step one ``lookup_batch``
gives a minibatch of word vectors (one column per sentence), the LSTM reads it, and
``pickneglogsoftmax_batch`` gives one loss per sentence; sentences that have ended are
masked out. Sorting by length keeps the padding small. With ``--dynet-autobatch 1`` the
output layers of all time steps, which do not depend on each other, run as one batch.

    python rnnlm_batch.py --dynet-autobatch 1
    batchviz explain rnnlm_batch.py --steps 1 --quick

To run it under DyNet, change the import line to ``import dynet as dy``.
"""
import argparse

import numpy as np

import batchviz.dynet as dy

from steptimer import StepTimer
from toydata import lm_sentences

parser = argparse.ArgumentParser(description="minibatched RNN language model (DyNet style)")
parser.add_argument("--steps", type=int, default=20, help="minibatches to train on")
parser.add_argument("--batch", type=int, default=32, help="sentences per minibatch")
parser.add_argument("--data", type=int, default=640, help="sentences in the training data")
parser.add_argument("--embed", type=int, default=64)
parser.add_argument("--hidden", type=int, default=128)
parser.add_argument("--vocab", type=int, default=2000)
parser.add_argument("--layers", type=int, default=1)
parser.add_argument("--warmup", type=int, default=1, help="steps not timed")
parser.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's
if args.quick:
    args.embed, args.hidden, args.vocab, args.batch = 8, 8, 50, 4
    args.data = min(args.data, 2 * args.batch)

train = sorted(lm_sentences(args.data, vocab=args.vocab, seed=1), key=len)
minibatches = [train[k:k + args.batch] for k in range(0, len(train), args.batch)]

model = dy.ParameterCollection()
trainer = dy.AdamTrainer(model, alpha=0.01)
WORDS = model.add_lookup_parameters((args.vocab, args.embed))
lstm = dy.VanillaLSTMBuilder(args.layers, args.embed, args.hidden, model)
R = model.add_parameters((args.vocab, args.hidden))
bias = model.add_parameters(args.vocab, init=0.0)


def minibatch_loss(sentences):
    """The summed loss of the words of ``sentences``, read all at once."""
    longest = max(len(s) for s in sentences)
    state = lstm.initial_state()
    losses = []
    for t in range(longest - 1):
        words = [s[t] if t < len(s) else 0 for s in sentences]
        following = [s[t + 1] if t + 1 < len(s) else 0 for s in sentences]
        state = state.add_input(dy.lookup_batch(WORDS, words))
        loss = dy.pickneglogsoftmax_batch(R * state.output() + bias, following)
        mask = np.array([[1.0 if t + 1 < len(s) else 0.0 for s in sentences]])
        if mask.min() == 0.0:
            loss = dy.cmult(loss, dy.inputTensor(mask, batched=True))
        losses.append(loss)
    return dy.sum_batches(dy.esum(losses))


if __name__ == "__main__":
    timer = StepTimer(args.warmup, "sentences")
    for step in range(args.steps):
        timer.start()
        sentences = minibatches[step % len(minibatches)]
        dy.renew_cg()
        loss = minibatch_loss(sentences)
        timer.lap()  # built
        value = loss.value()
        timer.lap()  # forward
        loss.backward()
        timer.lap()  # backward
        trainer.update()
        timer.stop(step, len(sentences))
        words = sum(len(s) - 1 for s in sentences)
        print(f"step {step} loss {value / words:.4f}")
    timer.report()
