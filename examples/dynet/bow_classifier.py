"""A bag-of-words sentence classifier trained one sentence at a time, as the first
programs of NLP courses taught with DyNet are: every sentence gets its own graph, its own
``value()``, ``backward()`` and ``update()``, and nothing is batched by hand.

Such a graph is small (a lookup per word, their sum, a hidden layer, a loss), so a step's
time is mostly the fixed cost of a graph: building it, scheduling and running a handful of
batches, and one update. By default the program runs as DyNet does with no flag, without
autobatching (every node its own batch); ``--dynet-autobatch 1`` batches each sentence's
lookups into one.

    python bow_classifier.py                                 # batchviz.dynet
    batchviz explain bow_classifier.py --steps 1 --quick     # how one sentence batches

A step of the printed phases is one sentence. To run it under DyNet, change the import
line to ``import dynet as dy``.
"""
import argparse

import batchviz.dynet as dy

from steptimer import StepTimer
from toydata import classified_sentences

parser = argparse.ArgumentParser(description="Bag-of-words classifier (DyNet style)")
parser.add_argument("--steps", type=int, default=20, help="passes of --batch sentences")
parser.add_argument("--batch", type=int, default=100, help="sentences per pass (one "
                    "graph and one update each)")
parser.add_argument("--data", type=int, default=1000, help="sentences in the training data")
parser.add_argument("--embed", type=int, default=64)
parser.add_argument("--hidden", type=int, default=64)
parser.add_argument("--vocab", type=int, default=5000)
parser.add_argument("--warmup", type=int, default=1, help="passes not timed")
parser.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's
if args.quick:
    args.embed, args.hidden, args.vocab, args.batch = 8, 8, 100, 20
    args.data = min(args.data, 2 * args.batch)

CLASSES = 5
train = classified_sentences(args.data, vocab=args.vocab, classes=CLASSES, seed=2)

model = dy.ParameterCollection()
trainer = dy.AdamTrainer(model, alpha=0.01)
WORDS = model.add_lookup_parameters((args.vocab, args.embed))
W_hidden = model.add_parameters((args.hidden, args.embed))
b_hidden = model.add_parameters(args.hidden, init=0.0)
W_out = model.add_parameters((CLASSES, args.hidden))
b_out = model.add_parameters(CLASSES, init=0.0)


def sentence_loss(words, label):
    bag = dy.esum([WORDS[w] for w in words])
    hidden = dy.tanh(W_hidden * bag + b_hidden)
    return dy.pickneglogsoftmax(W_out * hidden + b_out, label)


if __name__ == "__main__":
    timer = StepTimer(args.warmup, "sentences")
    for step in range(args.steps):
        first = (step * args.batch) % len(train)
        total = 0.0
        for words, label in train[first:first + args.batch]:
            timer.start()
            dy.renew_cg()
            loss = sentence_loss(words, label)
            timer.lap()  # built
            total += loss.value()
            timer.lap()  # forward
            loss.backward()
            timer.lap()  # backward
            trainer.update()
            timer.stop(step, 1)
        print(f"step {step} loss {total / args.batch:.4f}")
    timer.report()
