"""Overhead of autobatching on a ~150k-node graph: construction, scheduling, execution.

The graph: 64 instances of a 2-layer BiLSTM tagger over 40 tokens with the paper's §4.1
shapes (embeddings 200, LSTMs 256 each way, 300 labels, vocabulary 1000), written naively,
per instance, with one node per elementary operation (13 per LSTM step). It measures what
the paper's App. B is about: microseconds per node to build the graph and to schedule it
with each strategy, and what batching buys at execution: per strategy its batches next to
the lower bound, the kernels, the copies and bytes its batches' gathers copied, and the
time of a forward and backward pass.
"""
from __future__ import annotations

import time

import numpy as np

import batchviz as bv
from batchviz.schedule import PendingView, resolve_strategy
from batchviz.schedule.lookahead import batch_lower_bound

from batchviz.words import bytes_text

from .common import best_of, format_table, machine_info

STRATEGIES = ("none", "depth", "agenda", "lookahead", "layout")
FULL = dict(instances=64, length=40, vocab=1000, embed=200, hidden=256, labels=300)
QUICK = dict(instances=8, length=8, vocab=100, embed=16, hidden=16, labels=10)


class NaiveLSTM:
    """An LSTM written the textbook way: every gate is its own affine transform."""

    def __init__(self, model, input_dim, hidden):
        self.hidden = hidden
        self.gates = {}
        for gate in "ifog":
            self.gates[gate] = (model.add_parameters(hidden, init="zeros", name=None),
                                model.add_parameters((hidden, input_dim)),
                                model.add_parameters((hidden, hidden)))

    def step(self, x, h, c):
        def affine(gate):
            b, Wx, Wh = self.gates[gate]
            return bv.affine_transform([b, Wx, x, Wh, h])

        i = bv.logistic(affine("i"))
        f = bv.logistic(affine("f"))
        o = bv.logistic(affine("o"))
        g = bv.tanh(affine("g"))
        c = bv.cmult(f, c) + bv.cmult(i, g)
        h = bv.cmult(o, bv.tanh(c))
        return h, c

    def run(self, xs):
        h = c = bv.zeros(self.hidden)
        out = []
        for x in xs:
            h, c = self.step(x, h, c)
            out.append(h)
        return out


class Tagger:
    """2-layer BiLSTM tagger (§4.1), per-instance code."""

    def __init__(self, sizes, seed=0):
        m = self.model = bv.Model(seed=seed)
        self.E = m.add_lookup_parameters((sizes["vocab"], sizes["embed"]))
        h = sizes["hidden"]
        self.layers = [
            (NaiveLSTM(m, sizes["embed"], h), NaiveLSTM(m, sizes["embed"], h)),
            (NaiveLSTM(m, 2 * h, h), NaiveLSTM(m, 2 * h, h)),
        ]
        self.W = m.add_parameters((sizes["labels"], 2 * h))
        self.b = m.add_parameters(sizes["labels"], init="zeros")

    def loss(self, words, tags):
        xs = [self.E[w] for w in words]
        for forward, backward in self.layers:
            fs = forward.run(xs)
            bs = backward.run(xs[::-1])[::-1]
            xs = [bv.concatenate([f, b]) for f, b in zip(fs, bs)]
        return bv.esum([bv.pickneglogsoftmax(bv.affine_transform([self.b, self.W, x]), t)
                        for x, t in zip(xs, tags)])


def build(tagger, data, strategy):
    graph = bv.new_graph(strategy=strategy)
    loss = bv.esum([tagger.loss(words, tags) for words, tags in data])
    return graph, loss


def run(quick: bool = False) -> dict:
    sizes = QUICK if quick else FULL
    rng = np.random.default_rng(0)
    data = [(rng.integers(0, sizes["vocab"], size=sizes["length"]),
             rng.integers(0, sizes["labels"], size=sizes["length"]))
            for _ in range(sizes["instances"])]
    tagger = Tagger(sizes)
    repeat = 1 if quick else 3

    # construction: best of `repeat`
    construct_s = float("inf")
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        graph, loss = build(tagger, data, "agenda")
        construct_s = min(construct_s, time.perf_counter() - t0)
    view = PendingView(graph)
    nodes = len(view.nodes)
    lower_bound = batch_lower_bound(view)  # the fewest batches any strategy could have
    bv.explain(loss)  # calibrates the cost model once (cached), outside the timing
    explain_s, _ = best_of(lambda: bv.explain(loss), repeat=repeat, warmup=0)

    schedule_us, batches = {}, {}
    for name in STRATEGIES:
        strategy = resolve_strategy(name)
        best, sched = best_of(lambda: strategy.schedule(PendingView(graph)), repeat=repeat)
        schedule_us[name] = best / nodes * 1e6
        batches[name] = len(sched)

    forward_backward, execution = {}, {}
    for name in STRATEGIES:
        def train_step():
            graph, loss = build(tagger, data, name)
            t0 = time.perf_counter()
            loss.value()
            loss.backward()
            bv.backend.synchronize()  # on a GPU, wait for the backward's kernels
            return time.perf_counter() - t0, graph.last_stats
        times, stats = [], None
        for _ in range(1 if (quick or name == "none") else 2):
            seconds, stats = train_step()
            times.append(seconds)
        forward_backward[name] = min(times)
        execution[name] = stats
    tagger.model.zero_grad()
    bv.new_graph()

    rows = []
    for name in STRATEGIES:
        f = execution[name].forward
        rows.append([name, schedule_us[name], batches[name], lower_bound,
                     f.kernels + execution[name].backward.batches, f.copies, f.copies_avoided,
                     bytes_text(f.bytes_copied), forward_backward[name]])
    print(f"overhead: {sizes['instances']} x 2-layer BiLSTM tagger over {sizes['length']} tokens "
          f"(embed {sizes['embed']}, hidden {sizes['hidden']}, labels {sizes['labels']}): {nodes:,} nodes")
    print(f"construction: {construct_s / nodes * 1e6:.2f} us/node ({construct_s:.2f} s); "
          f"bv.explain(loss): {explain_s:.2f} s = {explain_s / construct_s:.2f}x construction")
    print(format_table(["strategy", "schedule us/node", "batches", "lower bound",
                        "kernels fwd+bwd", "copies", "copies avoided", "bytes copied",
                        "fwd+bwd s"], rows))
    print(f"ratios (one run): none/agenda {forward_backward['none'] / forward_backward['agenda']:.1f}x, "
          f"depth/agenda {forward_backward['depth'] / forward_backward['agenda']:.2f}x, "
          f"agenda/lookahead {forward_backward['agenda'] / forward_backward['lookahead']:.2f}x")
    return {
        "task": "overhead",
        "machine": machine_info(),
        "sizes": sizes,
        "nodes": nodes,
        "construct_us_per_node": construct_s / nodes * 1e6,
        "explain_s": explain_s,
        "explain_over_construction": explain_s / construct_s,
        "schedule_us_per_node": schedule_us,
        "batches": batches,
        "lower_bound": lower_bound,
        "bytes_copied": {n: execution[n].forward.bytes_copied for n in STRATEGIES},
        "kernels": {n: execution[n].forward.kernels + execution[n].backward.batches for n in STRATEGIES},
        "copies": {n: execution[n].forward.copies for n in STRATEGIES},
        "copies_avoided": {n: execution[n].forward.copies_avoided for n in STRATEGIES},
        "forward_backward_s": forward_backward,
        "ratios": {"none/agenda": forward_backward["none"] / forward_backward["agenda"],
                   "depth/agenda": forward_backward["depth"] / forward_backward["agenda"]},
    }
