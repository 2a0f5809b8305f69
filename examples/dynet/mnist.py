"""A classifier of MNIST-like images, one image at a time: a multi-layer perceptron, or with
``--conv`` the same on top of two convolution and max-pooling layers.

The code is per instance (an input vector, two ReLU layers with dropout, a softmax loss;
with ``--conv`` the image is first a 28 x 28 x 1 tensor, convolved with 5 x 5 filters and
pooled twice); with ``--dynet-autobatch 1`` every layer of a minibatch runs as one kernel,
as if the images had been batched by hand. With ``--minibatch`` they are: the same layers
run once on DyNet's minibatch of all the images (``inputTensor`` of a list of arrays,
``pickneglogsoftmax_batch``), as DyNet's manual-batching examples write it. The images are
synthetic: 28 x 28 noisy copies of ten random prototypes (no download).

    python mnist.py --dynet-autobatch 1
    python mnist.py --conv --dynet-autobatch 1
    python mnist.py --conv --minibatch
    batchviz explain mnist.py --steps 1 --quick --conv

To run it under DyNet, change the import line to ``import dynet as dy``.
"""
import argparse

import batchviz.dynet as dy

from steptimer import StepTimer
from toydata import images

parser = argparse.ArgumentParser(description="MNIST-like classifier with autobatching (DyNet style)")
parser.add_argument("--steps", type=int, default=20, help="minibatches to train on")
parser.add_argument("--batch", type=int, default=64, help="images per minibatch")
parser.add_argument("--data", type=int, default=1280, help="images in the training data")
parser.add_argument("--hidden", type=int, default=256)
parser.add_argument("--dropout", type=float, default=0.2)
parser.add_argument("--conv", action="store_true", help="two convolution and pooling layers first")
parser.add_argument("--minibatch", action="store_true",
                    help="one expression for all the images of a minibatch (manual batching)")
parser.add_argument("--channels", type=int, nargs=2, default=[8, 16],
                    help="the convolutions' output channels")
parser.add_argument("--warmup", type=int, default=1, help="steps not timed")
parser.add_argument("--quick", action="store_true", help="tiny sizes (tests)")
args, _ = parser.parse_known_args()  # the --dynet-* flags are DyNet's
if args.quick:
    args.hidden, args.batch, args.channels = 16, 8, [2, 3]
    args.data = min(args.data, 2 * args.batch)

PIXELS, CLASSES = 784, 10
pixels, labels = images(args.data, PIXELS, CLASSES, seed=3)

model = dy.ParameterCollection()
trainer = dy.AdamTrainer(model, alpha=0.002)
C1, C2 = args.channels
if args.conv:   # 28 x 28 x 1 -> 14 x 14 x C1 -> 7 x 7 x C2
    F1, c1 = model.add_parameters((5, 5, 1, C1)), model.add_parameters(C1, init=0.0)
    F2, c2 = model.add_parameters((5, 5, C1, C2)), model.add_parameters(C2, init=0.0)
W1 = model.add_parameters((args.hidden, 7 * 7 * C2 if args.conv else PIXELS))
b1 = model.add_parameters(args.hidden, init=0.0)
W2 = model.add_parameters((args.hidden, args.hidden))
b2 = model.add_parameters(args.hidden, init=0.0)
W3 = model.add_parameters((CLASSES, args.hidden))
b3 = model.add_parameters(CLASSES, init=0.0)


def features(x):
    """The pixels ``x`` (of one image, or a minibatch of images), or with --conv their two
    convolution and pooling layers."""
    if not args.conv:
        return x
    images = x.dim()[1]
    x = dy.reshape(x, (28, 28, 1), batch_size=images)
    for F, c in ((F1, c1), (F2, c2)):
        x = dy.rectify(dy.conv2d_bias(x, F, c, [1, 1], is_valid=False))
        x = dy.maxpooling2d(x, [2, 2], [2, 2])
    return dy.reshape(x, (7 * 7 * C2,), batch_size=images)


def scores(x, train=True):
    h = dy.rectify(W1 * features(x) + b1)
    if train:
        h = dy.dropout(h, args.dropout)
    h = dy.rectify(W2 * h + b2)
    return W3 * h + b3


def image_loss(image, label, train=True):
    return dy.pickneglogsoftmax(scores(dy.inputTensor(image), train), int(label))


def minibatch_loss(picked, train=True):
    """All the images of ``picked`` as one minibatch: a list of arrays is one, in DyNet."""
    x = dy.inputTensor([pixels[k] for k in picked])
    losses = dy.pickneglogsoftmax_batch(scores(x, train), [int(labels[k]) for k in picked])
    return dy.sum_batches(losses)


if __name__ == "__main__":
    timer = StepTimer(args.warmup, "images")
    for step in range(args.steps):
        timer.start()
        first = (step * args.batch) % len(labels)
        picked = range(first, min(first + args.batch, len(labels)))
        dy.renew_cg()
        if args.minibatch:
            loss = minibatch_loss(picked)
        else:
            loss = dy.esum([image_loss(pixels[k], labels[k]) for k in picked])
        timer.lap()  # built
        value = loss.value()
        timer.lap()  # forward
        loss.backward()
        timer.lap()  # backward
        trainer.update()
        timer.stop(step, len(picked))
        print(f"step {step} loss {value / len(picked):.4f}")
    timer.report()
