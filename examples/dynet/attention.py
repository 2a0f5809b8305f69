"""An encoder-decoder with attention that learns to reverse sequences, one pair at a time.

The encoder is a BiLSTM over the source symbols; its states, side by side, are the columns
of a memory matrix. At every step the decoder scores each column against its own state
(``v . tanh(W_k m_j + W_q s)``), reads the memory through the softmax of the scores (a
matrix times a column of weights: a ``(2H, 1)`` column) and feeds that context, with the
previous target symbol, to its LSTM, as attention models written for DyNet do. With
``--dynet-autobatch 1`` the steps of all the pairs of a minibatch run in batches.

    python attention.py --dynet-autobatch 1
    batchviz explain attention.py --steps 1 --quick

To run it under DyNet, change the import line to ``import dynet as dy``.
"""
import argparse

import batchviz.dynet as dy

from steptimer import StepTimer
from toydata import reversals

parser = argparse.ArgumentParser(description="Encoder-decoder with attention (DyNet style)")
parser.add_argument("--steps", type=int, default=20, help="minibatches to train on")
parser.add_argument("--batch", type=int, default=16, help="pairs per minibatch")
parser.add_argument("--data", type=int, default=320, help="pairs in the training data")
parser.add_argument("--symbols", type=int, default=20)
parser.add_argument("--embed", type=int, default=32)
parser.add_argument("--hidden", type=int, default=32, help="LSTM size, each direction")
parser.add_argument("--attention", type=int, default=32)
parser.add_argument("--warmup", type=int, default=1, help="steps not timed")
parser.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's
if args.quick:
    args.embed, args.hidden, args.attention, args.symbols, args.batch = 8, 8, 8, 6, 4
    args.data = min(args.data, 2 * args.batch)

train = reversals(args.data, symbols=args.symbols, mean_length=6 if args.quick else 8, seed=3)
END = args.symbols          # the symbol that starts and ends every target
VOCAB = args.symbols + 1
H, A = args.hidden, args.attention

model = dy.ParameterCollection()
trainer = dy.AdamTrainer(model, alpha=0.01)
source_embeddings = model.add_lookup_parameters((VOCAB, args.embed))
target_embeddings = model.add_lookup_parameters((VOCAB, args.embed))
forward_lstm = dy.VanillaLSTMBuilder(1, args.embed, H, model)
backward_lstm = dy.VanillaLSTMBuilder(1, args.embed, H, model)
decoder = dy.VanillaLSTMBuilder(1, 2 * H + args.embed, H, model)
W_key = model.add_parameters((A, 2 * H))
W_query = model.add_parameters((A, 2 * H))   # from the decoder's state: its c and its h
v = model.add_parameters((1, A))
W_out = model.add_parameters((VOCAB, H))
b_out = model.add_parameters(VOCAB, init=0.0)


def encode(source):
    """The memory: a ``(2H, n)`` matrix, the BiLSTM's ``[f; b]`` at every source symbol."""
    vectors = [source_embeddings[s] for s in source]
    forward = forward_lstm.initial_state().transduce(vectors)
    backward = backward_lstm.initial_state().transduce(vectors[::-1])[::-1]
    return dy.concatenate_cols([dy.concatenate([f, b]) for f, b in zip(forward, backward)])


def attend(memory, keys, state):
    """The context: the memory's columns weighted by the softmax of their scores."""
    query = W_query * dy.concatenate(list(state.s()))
    scores = dy.transpose(v * dy.tanh(dy.colwise_add(keys, query)))   # (n, 1)
    return memory * dy.softmax(scores)                                 # (2H, 1)


def pair_loss(source, target):
    memory = encode(source)
    keys = W_key * memory                     # (A, n), once per pair
    state = decoder.initial_state().add_input(
        dy.concatenate([dy.zeros(2 * H), target_embeddings[END]]))
    losses, previous = [], END
    for symbol in target + [END]:
        context = attend(memory, keys, state)
        state = state.add_input(dy.concatenate([context, target_embeddings[previous]]))
        losses.append(dy.pickneglogsoftmax(W_out * state.output() + b_out, symbol))
        previous = symbol
    return dy.esum(losses)


if __name__ == "__main__":
    timer = StepTimer(args.warmup, "pairs")
    for step in range(args.steps):
        timer.start()
        first = (step * args.batch) % len(train)
        minibatch = train[first:first + args.batch]
        dy.renew_cg()
        loss = dy.esum([pair_loss(source, target) for source, target in minibatch])
        timer.lap()  # built
        value = loss.value()
        timer.lap()  # forward
        loss.backward()
        timer.lap()  # backward
        trainer.update()
        timer.stop(step, len(minibatch))
        symbols = sum(len(target) + 1 for _, target in minibatch)
        print(f"step {step} loss {value / symbols:.4f}")
    timer.report()
