"""A binary Tree-LSTM (Tai et al., 2015) written with DyNet's element-wise ops, one tree at
a time, with a sentiment loss at every node of the tree.

Every gate is written out (``dy.logistic(b + W * x)``, ``dy.cmult``), as in DyNet's own
Tree-LSTM examples: no fused cell. With ``--dynet-autobatch 1`` the nodes of all the trees
of a minibatch that are ready at the same time run as one batch each.

    python treelstm.py --dynet-autobatch 1
    batchviz explain treelstm.py --steps 1 --quick

To run it under DyNet, change the import line to ``import dynet as dy``.
"""
import argparse

import batchviz.dynet as dy

from steptimer import StepTimer
from toydata import trees

parser = argparse.ArgumentParser(description="Tree-LSTM sentiment classifier (DyNet style)")
parser.add_argument("--steps", type=int, default=20, help="minibatches to train on")
parser.add_argument("--batch", type=int, default=16, help="trees per minibatch")
parser.add_argument("--data", type=int, default=320, help="trees in the training data")
parser.add_argument("--embed", type=int, default=64)
parser.add_argument("--hidden", type=int, default=64)
parser.add_argument("--vocab", type=int, default=2000)
parser.add_argument("--warmup", type=int, default=1, help="steps not timed")
parser.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's
if args.quick:
    args.embed, args.hidden, args.vocab, args.batch = 8, 8, 100, 4
    args.data = min(args.data, 2 * args.batch)

LABELS = 5
train = trees(args.data, vocab=args.vocab, labels=LABELS, seed=1)

model = dy.ParameterCollection()
trainer = dy.AdamTrainer(model, alpha=0.01)
WORDS = model.add_lookup_parameters((args.vocab, args.embed))
E, H = args.embed, args.hidden
W_leaf = {g: model.add_parameters((H, E)) for g in "iou"}           # leaf gates from the word
U_node = {g: model.add_parameters((H, 2 * H)) for g in "iou"}       # inner gates from [h_l; h_r]
U_forget = [model.add_parameters((H, H)) for _ in range(4)]         # f_l, f_r from h_l, h_r
bias = {g: model.add_parameters(H, init=0.0) for g in "iouf"}
OUT = model.add_parameters((LABELS, H))


def encode(tree, losses):
    """``(h, c)`` of ``tree``; appends the loss of every node to ``losses``."""
    if len(tree) == 2:  # a leaf: (word, label)
        word, label = tree
        x = WORDS[word]
        i = dy.logistic(bias["i"] + W_leaf["i"] * x)
        o = dy.logistic(bias["o"] + W_leaf["o"] * x)
        u = dy.tanh(bias["u"] + W_leaf["u"] * x)
        c = dy.cmult(i, u)
    else:
        left, right, label = tree
        h_l, c_l = encode(left, losses)
        h_r, c_r = encode(right, losses)
        both = dy.concatenate([h_l, h_r])
        i = dy.logistic(bias["i"] + U_node["i"] * both)
        o = dy.logistic(bias["o"] + U_node["o"] * both)
        u = dy.tanh(bias["u"] + U_node["u"] * both)
        f_l = dy.logistic(bias["f"] + U_forget[0] * h_l + U_forget[1] * h_r)
        f_r = dy.logistic(bias["f"] + U_forget[2] * h_l + U_forget[3] * h_r)
        c = dy.cmult(i, u) + dy.cmult(f_l, c_l) + dy.cmult(f_r, c_r)
    h = dy.cmult(o, dy.tanh(c))
    losses.append(dy.pickneglogsoftmax(OUT * h, label))
    return h, c


if __name__ == "__main__":
    timer = StepTimer(args.warmup, "sentences")
    for step in range(args.steps):
        timer.start()
        first = (step * args.batch) % len(train)
        minibatch = train[first:first + args.batch]
        dy.renew_cg()
        losses = []
        for tree in minibatch:
            encode(tree, losses)
        loss = dy.esum(losses)
        timer.lap()  # built
        value = loss.value()
        timer.lap()  # forward
        loss.backward()
        timer.lap()  # backward
        trainer.update()
        timer.stop(step, len(minibatch))
        print(f"step {step} loss {value / len(losses):.4f}")
    timer.report()
