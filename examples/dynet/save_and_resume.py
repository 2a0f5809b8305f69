"""Train, save, and resume later, under DyNet or batchviz.dynet in either order: an LSTM
sentence classifier saved with ``dy.save`` in DyNet's own files, so a model DyNet trained
goes on training in batchviz.dynet (and back).

The first run makes a new model; every run trains ``--steps`` minibatches and saves the
model (the lookup table, the LSTM builder, and the output layer, kept in a sub-collection)
to ``--model``: ``MODEL.data`` (DyNet's text format) and ``MODEL.meta``. A later run finds
them, loads them with ``dy.load`` and continues. Each run prints the held-out loss of the
model it starts from and of the one it saves: a resumed run starts where the last ended.

    python save_and_resume.py --model clf          # trains, saves clf.data and clf.meta
    python save_and_resume.py --model clf          # loads them and trains on

To run it under DyNet, change the import line to ``import dynet as dy``; the files are
the same either way.
"""
import argparse
import os

import batchviz.dynet as dy

from toydata import classified_sentences

parser = argparse.ArgumentParser(description="Save and resume training (DyNet style)")
parser.add_argument("--model", default="classifier", help="the files' base name")
parser.add_argument("--steps", type=int, default=20, help="minibatches to train")
parser.add_argument("--batch", type=int, default=16, help="sentences per minibatch")
parser.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's

VOCAB, EMBED, HIDDEN, CLASSES = (50, 8, 8, 3) if args.quick else (500, 32, 32, 5)
sentences = classified_sentences(20 * args.batch + 40, vocab=VOCAB, classes=CLASSES,
                                 mean_length=8, seed=3)   # (one draw: one rule of classes)
train, held_out = sentences[40:], sentences[:40]

model = dy.ParameterCollection()
if os.path.exists(args.model + ".meta"):
    # made again, in the same order, with the saved values (whoever saved them)
    E, lstm, W, b = dy.load(args.model, model)
    print(f"resumed from {args.model}")
else:
    E = model.add_lookup_parameters((VOCAB, EMBED))
    lstm = dy.VanillaLSTMBuilder(1, EMBED, HIDDEN, model)
    output = model.add_subcollection("output")
    W = output.add_parameters((CLASSES, HIDDEN))
    b = output.add_parameters(CLASSES)
    print("new model")
trainer = dy.SimpleSGDTrainer(model, learning_rate=0.2)


def sentence_loss(words, label):
    """One sentence's loss, written naively; the minibatch's sentences batch together."""
    h = lstm.initial_state().transduce([E[w] for w in words])[-1]
    return dy.pickneglogsoftmax(W * h + b, label)


def minibatch_loss(sentences):
    dy.renew_cg()
    return dy.esum([sentence_loss(words, label) for words, label in sentences]) \
        * (1.0 / len(sentences))


def held_out_loss() -> float:
    return minibatch_loss(held_out).scalar_value()


if __name__ == "__main__":
    print(f"held-out loss at the start {held_out_loss():.6f}")
    for step in range(args.steps):
        start = step * args.batch % len(train)
        loss = minibatch_loss(train[start:start + args.batch])
        value = loss.value()
        loss.backward()
        trainer.update()
        print(f"step {step} loss {value:.4f}")
    print(f"held-out loss at the end {held_out_loss():.6f}")
    dy.save(args.model, [E, lstm, W, b])
    print(f"saved {args.model}.data and {args.model}.meta")
