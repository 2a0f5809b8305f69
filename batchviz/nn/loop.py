"""A training loop: minibatches, one graph each, backward, update, and a progress bar.

Each minibatch gets a fresh graph with the chosen strategy; the loss of every instance is
built by the user's naive per-instance function and summed, so the runtime sees the whole
minibatch at once and batches across instances. The bar (``tqdm.auto``, ``disable=None``:
silent when the output is not a terminal, as in CI) shows sentences/s and the loss.
"""
from __future__ import annotations

import time

import numpy as np

from .. import ops
from ..backend import state
from ..errors import NumericsError
from ..execute.numerics import first_nonfinite
from ..runtime import Graph


def train(loss_fn, data, trainer, *, epochs: int = 1, batch_size: int = 64,
          strategy="agenda", shuffle: bool = True, seed: int = 0, batch_loss_fn=None,
          progress=None, desc: str = "train") -> list[dict]:
    """Train for ``epochs`` passes over ``data``; return one record per minibatch.

    ``loss_fn(instance)`` returns the loss expression of one instance; alternatively
    ``batch_loss_fn(instances)`` returns the loss of a whole minibatch (for models that, like
    the transition parser, call ``value()`` while building). ``progress=None`` shows the bar
    only on a terminal; ``False`` hides it. Each record is ``{"epoch", "loss"`` (mean per
    instance), ``"instances", "seconds"}``. A loss that is NaN or infinite stops training
    before it reaches the parameters, with a :class:`~batchviz.NumericsError` (a
    ``FloatingPointError``) naming the first node that was not finite. Run ``train`` inside
    ``with bv.check_numerics():`` to stop at the very batch that made it, forward or
    backward, with the line of your code that built it.
    """
    from tqdm.auto import tqdm

    if (loss_fn is None) == (batch_loss_fn is None):
        raise ValueError("give exactly one of loss_fn (per instance) or batch_loss_fn (per minibatch)")
    if batch_size < 1 or epochs < 1:
        raise ValueError(f"batch_size and epochs must be >= 1, got {batch_size}, {epochs}")
    data = list(data)
    if not data:
        raise ValueError("train: data is empty: no instances to train on")
    rng = np.random.default_rng(seed)
    history = []
    bar = tqdm(total=epochs * len(data), desc=desc, unit="sent", disable=None if progress is None
               else not progress, dynamic_ncols=True)
    try:
        for epoch in range(epochs):
            order = rng.permutation(len(data)) if shuffle else np.arange(len(data))
            for start in range(0, len(data), batch_size):
                batch = [data[i] for i in order[start:start + batch_size]]
                t0 = time.perf_counter()
                with Graph(strategy=strategy):
                    if batch_loss_fn is not None:
                        loss = batch_loss_fn(batch)
                    else:
                        loss = ops.api.esum([loss_fn(x) for x in batch])
                    value = loss.value()
                    if not np.isfinite(value):  # stop before the update spreads it
                        raise _not_finite(loss, value, start // batch_size + 1, epoch + 1)
                    loss.backward()
                trainer.update()
                seconds = time.perf_counter() - t0
                history.append({"epoch": epoch, "loss": value / len(batch),
                                "instances": len(batch), "seconds": seconds})
                bar.update(len(batch))
                bar.set_postfix(loss=f"{value / len(batch):.4f}")
            if hasattr(trainer, "new_epoch"):
                trainer.new_epoch()
    finally:
        bar.close()
    return history


def _not_finite(loss, value, minibatch: int, epoch: int) -> NumericsError:
    """The error for a loss that is not finite: which minibatch, and the first node whose
    value was not (the graph has just run; its values are still in memory)."""
    message = (f"train: the loss of minibatch {minibatch} of epoch {epoch} is {value}; no "
               "parameter was updated with it")
    first = first_nonfinite(loss.graph, state.xp)
    if first is None:
        return NumericsError(message + " (try a smaller learning rate, or gradient clipping)")
    hint = ("" if first.source else "; rerun it inside `with bv.check_numerics():` to see the "
            "line of your code that built that node")
    return NumericsError(f"{message}. The first node that was not finite: {first}{hint}. (Try "
                         "a smaller learning rate, or gradient clipping.)",
                         node=first.node, op=first.op, signature=first.signature,
                         batch=first.batch, source=first.source, pass_="forward")
