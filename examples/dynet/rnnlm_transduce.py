"""An RNN language model read with ``transduce``, one sentence at a time.

A two-layer simple RNN (``dy.SimpleRNNBuilder``; ``--lstm`` for DyNet's coupled LSTM)
reads each sentence with ``transduce`` and predicts every next word; a minibatch of
sentences is one graph, which the runtime batches with ``--dynet-autobatch 1``.

    python rnnlm_transduce.py --dynet-autobatch 1
    batchviz explain rnnlm_transduce.py --steps 1 --quick

To run it under DyNet, change the import line to ``import dynet as dy``.
"""
import argparse

import batchviz.dynet as dy

from steptimer import StepTimer
from toydata import lm_sentences

parser = argparse.ArgumentParser(description="RNN language model with transduce (DyNet style)")
parser.add_argument("--steps", type=int, default=20, help="minibatches to train on")
parser.add_argument("--batch", type=int, default=16, help="sentences per minibatch")
parser.add_argument("--data", type=int, default=320, help="sentences in the training data")
parser.add_argument("--embed", type=int, default=32)
parser.add_argument("--hidden", type=int, default=64)
parser.add_argument("--vocab", type=int, default=500)
parser.add_argument("--lstm", action="store_true", help="CoupledLSTMBuilder, not SimpleRNN")
parser.add_argument("--warmup", type=int, default=1, help="steps not timed")
parser.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's
if args.quick:
    args.embed, args.hidden, args.vocab, args.batch = 8, 8, 40, 4
    args.data = min(args.data, 2 * args.batch)

train = lm_sentences(args.data, vocab=args.vocab, mean_length=10, seed=2)

model = dy.ParameterCollection()
trainer = dy.SimpleSGDTrainer(model, learning_rate=0.5)
builder = (dy.CoupledLSTMBuilder if args.lstm else dy.SimpleRNNBuilder)(
    2, args.embed, args.hidden, model)
lookup = model.add_lookup_parameters((args.vocab, args.embed))
R = model.add_parameters((args.vocab, args.hidden))
bias = model.add_parameters(args.vocab, init=0.0)


def sentence_loss(sentence):
    outputs = builder.initial_state().transduce([lookup[w] for w in sentence[:-1]])
    return dy.esum([dy.pickneglogsoftmax(bias + R * h, following)
                    for h, following in zip(outputs, sentence[1:])])


if __name__ == "__main__":
    timer = StepTimer(args.warmup, "sentences")
    for step in range(args.steps):
        timer.start()
        first = (step * args.batch) % len(train)
        minibatch = train[first:first + args.batch]
        dy.renew_cg()
        loss = dy.esum([sentence_loss(s) for s in minibatch])
        timer.lap()  # built
        value = loss.value()
        timer.lap()  # forward
        loss.backward()
        timer.lap()  # backward
        trainer.update()
        timer.stop(step, len(minibatch))
        print(f"step {step} loss {value / sum(len(s) - 1 for s in minibatch):.4f}")
    timer.report()
