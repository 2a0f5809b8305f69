"""XOR with one hidden layer: DyNet's smallest program.

One graph is built once and reused: ``x.set(...)`` and ``y.set(...)`` change its inputs,
and every ``value()`` computes it again. ``--steps`` passes over the four examples.

    python xor.py
    batchviz explain xor.py --steps 1

To run it under DyNet, change the import line to ``import dynet as dy``.
"""
import argparse

import batchviz.dynet as dy

parser = argparse.ArgumentParser(description="XOR (DyNet style)")
parser.add_argument("--steps", type=int, default=100, help="passes over the four examples")
parser.add_argument("--hidden", type=int, default=8)
parser.add_argument("--quick", action="store_true", help="(the same sizes: XOR is small)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's

model = dy.ParameterCollection()
trainer = dy.SimpleSGDTrainer(model, learning_rate=0.2)
W = model.add_parameters((args.hidden, 2))
b = model.add_parameters(args.hidden)
V = model.add_parameters((1, args.hidden))
a = model.add_parameters(1)

x = dy.vecInput(2)
y = dy.scalarInput(0)
prediction = dy.logistic(V * dy.tanh(W * x + b) + a)
loss = dy.binary_log_loss(prediction, y)

if __name__ == "__main__":
    for step in range(args.steps):
        total = 0.0
        for x1 in (0, 1):
            for x2 in (0, 1):
                x.set([x1, x2])
                y.set(1.0 if x1 != x2 else 0.0)
                total += loss.scalar_value()
                loss.backward()
                trainer.update()
        print(f"step {step} loss {total / 4:.4f}")
    for x1, x2 in ((0, 0), (0, 1), (1, 0), (1, 1)):
        x.set([x1, x2])
        print(f"{x1} xor {x2} = {prediction.scalar_value():.3f}")
