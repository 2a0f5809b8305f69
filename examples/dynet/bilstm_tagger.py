"""A BiLSTM tagger written as DyNet programs are: one sentence at a time.

Each minibatch is one graph: every sentence's words are looked up, read by a forward and a
backward LSTM, and each position is tagged by an MLP over both LSTMs' states. Nothing is
batched by hand; with ``--dynet-autobatch 1`` the runtime batches the sentences' steps.

    python bilstm_tagger.py --dynet-autobatch 1            # batchviz.dynet
    batchviz explain bilstm_tagger.py --steps 1 --quick    # how its graph batches

To run it under DyNet, change the import line to ``import dynet as dy``.
"""
import argparse

import batchviz.dynet as dy

from steptimer import StepTimer
from toydata import tagged_sentences

parser = argparse.ArgumentParser(description="BiLSTM tagger (DyNet style)")
parser.add_argument("--steps", type=int, default=20, help="minibatches to train on")
parser.add_argument("--batch", type=int, default=32, help="sentences per minibatch")
parser.add_argument("--data", type=int, default=640, help="sentences in the training data")
parser.add_argument("--embed", type=int, default=64)
parser.add_argument("--hidden", type=int, default=64, help="LSTM size, each direction")
parser.add_argument("--mlp", type=int, default=32)
parser.add_argument("--vocab", type=int, default=2000)
parser.add_argument("--warmup", type=int, default=1, help="steps not timed")
parser.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's
if args.quick:
    args.embed, args.hidden, args.mlp, args.vocab, args.batch = 8, 8, 8, 100, 8
    args.data = min(args.data, 2 * args.batch)

TAGS = 9
train = tagged_sentences(args.data, vocab=args.vocab, tags=TAGS, seed=1)

model = dy.ParameterCollection()
trainer = dy.AdamTrainer(model, alpha=0.01)
WORDS = model.add_lookup_parameters((args.vocab, args.embed))
forward_lstm = dy.VanillaLSTMBuilder(1, args.embed, args.hidden, model)
backward_lstm = dy.VanillaLSTMBuilder(1, args.embed, args.hidden, model)
H = model.add_parameters((args.mlp, 2 * args.hidden))
hb = model.add_parameters(args.mlp, init=0.0)
O = model.add_parameters((TAGS, args.mlp))
ob = model.add_parameters(TAGS, init=0.0)


def sentence_loss(words, tags):
    vectors = [WORDS[w] for w in words]
    forward = forward_lstm.initial_state().transduce(vectors)
    backward = backward_lstm.initial_state().transduce(reversed(vectors))
    losses = []
    for f, b, tag in zip(forward, reversed(backward), tags):
        hidden = dy.tanh(H * dy.concatenate([f, b]) + hb)
        losses.append(dy.pickneglogsoftmax(O * hidden + ob, tag))
    return dy.esum(losses)


if __name__ == "__main__":
    timer = StepTimer(args.warmup, "sentences")
    for step in range(args.steps):
        timer.start()
        first = (step * args.batch) % len(train)
        minibatch = train[first:first + args.batch]
        dy.renew_cg()
        loss = dy.esum([sentence_loss(words, tags) for words, tags in minibatch])
        timer.lap()  # built
        value = loss.value()
        timer.lap()  # forward
        loss.backward()
        timer.lap()  # backward
        trainer.update()
        timer.stop(step, len(minibatch))
        words = sum(len(w) for w, _ in minibatch)
        print(f"step {step} loss {value / words:.4f}")
    timer.report()
