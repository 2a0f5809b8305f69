"""A multi-layer perceptron classifying MNIST-like images, one image at a time.

The code is per instance (an input vector, two ReLU layers with dropout, a softmax loss);
with ``--dynet-autobatch 1`` every layer of a minibatch runs as one matrix product, as if
the images had been batched by hand. The images are synthetic: 28 x 28 noisy copies of
ten random prototypes (no download).

    python mnist_mlp.py --dynet-autobatch 1
    batchviz explain mnist_mlp.py --steps 1 --quick

To run it under DyNet, change the import line to ``import dynet as dy``.
"""
import argparse
import time

import batchviz.dynet as dy

from toydata import images

parser = argparse.ArgumentParser(description="MNIST-like MLP with autobatching (DyNet style)")
parser.add_argument("--steps", type=int, default=20, help="minibatches to train on")
parser.add_argument("--batch", type=int, default=64, help="images per minibatch")
parser.add_argument("--data", type=int, default=1280, help="images in the training data")
parser.add_argument("--hidden", type=int, default=256)
parser.add_argument("--dropout", type=float, default=0.2)
parser.add_argument("--warmup", type=int, default=1, help="steps not timed")
parser.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's
if args.quick:
    args.hidden, args.batch = 16, 8
    args.data = min(args.data, 2 * args.batch)

PIXELS, CLASSES = 784, 10
pixels, labels = images(args.data, PIXELS, CLASSES, seed=3)

model = dy.ParameterCollection()
trainer = dy.AdamTrainer(model, alpha=0.002)
W1 = model.add_parameters((args.hidden, PIXELS))
b1 = model.add_parameters(args.hidden, init=0.0)
W2 = model.add_parameters((args.hidden, args.hidden))
b2 = model.add_parameters(args.hidden, init=0.0)
W3 = model.add_parameters((CLASSES, args.hidden))
b3 = model.add_parameters(CLASSES, init=0.0)


def image_loss(image, label, train=True):
    x = dy.inputTensor(image)
    h = dy.rectify(W1 * x + b1)
    if train:
        h = dy.dropout(h, args.dropout)
    h = dy.rectify(W2 * h + b2)
    return dy.pickneglogsoftmax(W3 * h + b3, int(label))


if __name__ == "__main__":
    timed_images, timed_seconds = 0, 0.0
    for step in range(args.steps):
        start = time.perf_counter()
        first = (step * args.batch) % len(labels)
        picked = range(first, min(first + args.batch, len(labels)))
        dy.renew_cg()
        loss = dy.esum([image_loss(pixels[k], labels[k]) for k in picked])
        value = loss.value()
        loss.backward()
        trainer.update()
        if step >= args.warmup:
            timed_seconds += time.perf_counter() - start
            timed_images += len(picked)
        print(f"step {step} loss {value / len(picked):.4f}")
    if timed_images:
        print(f"{timed_images} images in {timed_seconds:.3f} s: "
              f"{timed_images / timed_seconds:.1f} images/s")
