"""DyNet's one computation graph, over batchviz's graphs: ``renew_cg``, ``cg_version``,
``cg()``, ``forward``.

DyNet has a single graph at a time; ``renew_cg()`` throws it away and starts the next, and
an expression of an older graph is *stale*. Each DyNet graph is one batchviz
:class:`~batchviz.Graph`, made current with :func:`batchviz.new_graph`, so that batchviz's
traces, explanations and widgets see the program's graph; using a stale expression raises
batchviz's :class:`~batchviz.GraphFinishedError` (a ``RuntimeError``, as DyNet's).
The graph's strategy comes from the autobatch setting (:mod:`.config`), or from
``renew_cg(autobatching=...)`` for one graph.
"""
from __future__ import annotations

import numpy as np

from .. import runtime as bv_runtime
from . import config
from .dump import graph_text


class _Session:
    """What the DyNet layer keeps between graphs."""

    def __init__(self):
        self.graph = None          # the batchviz Graph of the current DyNet graph
        self.version = -1          # DyNet's cg_version: 0 for the first graph (DyNet makes
                                   # it at its import), one more with every renew_cg
        self.settings = None       # config.settings(), read when the first graph is made
        self.rng = None            # random inputs and initial values
        self.check_validity = False


session = _Session()

#: ``[True]`` while the current graph computes every expression as soon as it is built
#: (``renew_cg(immediate_compute=True)``): a list that :mod:`.expression` keeps, since every
#: new expression reads it (an item of a list it holds, not an attribute looked up)
immediate = [False]


def _settings() -> dict:
    """The settings, read (and the device chosen) once, before the first graph or the first
    parameter, as DyNet reads them once at its import."""
    if session.settings is None:
        session.settings = config.settings()
        config.use_device(session.settings["gpus"])
        session.rng = config.random_generator(session.settings["seed"])
    return session.settings


def rng() -> np.random.Generator:
    """The generator of random inputs (``random_normal``, dropout masks) and initial values."""
    _settings()
    return session.rng


def reset_random_seed(seed: int) -> None:
    """DyNet's ``reset_random_seed``: restart the generator of random values from ``seed``."""
    _settings()
    session.rng = config.random_generator(int(seed))


def renew_cg(immediate_compute: bool = False, check_validity: bool = False, autobatching=None):
    """Start a new graph (the old one's expressions become stale) and return it.

    ``autobatching`` (0, 1, 2 or a strategy name) overrides the autobatch setting for this
    graph. ``immediate_compute=True`` computes every expression as soon as it is built;
    ``check_validity=True`` raises as soon as a computed value is NaN or infinite."""
    settings = _settings()
    strategy = settings["strategy"] if autobatching is None else config.strategy_of(autobatching)
    session.graph = bv_runtime.new_graph(strategy)
    session.graph.names_ops_as = "dynet"  # pictures and reports name ops as DyNet does
    session.version += 1
    session.check_validity = bool(check_validity)
    immediate[0] = bool(immediate_compute)
    return cg()


def current():
    """The batchviz graph of the current DyNet graph (made on first use, as DyNet has one
    from its import on)."""
    g = session.graph
    if g is None or g.finished:
        renew_cg()
        g = session.graph
    return g


def cg_version() -> int:
    """The current graph's number, as DyNet's: 0 for the first (the one DyNet makes at its
    import), one more with every ``renew_cg``."""
    current()
    return session.version


def cg_checkpoint() -> None:
    """Mark the current graph as it is now, so that :func:`cg_revert` can remove every
    node built after this point (DyNet's ``cg_checkpoint``). Marks stack: each
    ``cg_revert`` goes back to the latest one not reverted yet.

    Why: a program can try something on the graph (a search step, a candidate's score)
    and throw it away without building the whole graph again with ``renew_cg``."""
    current().checkpoint()


def cg_revert() -> None:
    """Remove every node built since the latest :func:`cg_checkpoint` (and forget that
    mark), as DyNet's ``cg_revert`` does; without a mark it does nothing, as in DyNet.

    The graph is then as if those nodes had never been built: the nodes built next reuse
    their places, values and gradients are those of a graph without them, and their
    expressions raise a ``RuntimeError`` when used (in DyNet they would silently read
    whatever node comes to hold their place). Values computed before the revert are kept
    when the run that computed them had no removed node in it; otherwise they are
    computed again at the next value asked for (DyNet, too, recomputes them). An
    expression that made no node of its own keeps working: ``W * x`` not used yet is
    built when it is used, and an expression that only re-labels an older node reads
    that node."""
    graph = current()
    if graph.checkpoints:
        graph.revert()


class ComputationGraph:
    """DyNet's ``cg()`` object: the current graph's version, renewal, forward pass,
    checkpoints and dump."""

    def renew(self, immediate_compute=False, check_validity=False, autobatching=None):
        return renew_cg(immediate_compute, check_validity, autobatching)

    def version(self) -> int:
        return cg_version()

    def forward(self, index=None) -> None:
        current().forward()

    inc_forward = forward

    def forward_scalar(self, index):
        _not_here("forward_scalar(index)", "expr.scalar_value()")

    def forward_vec(self, index):
        _not_here("forward_vec(index)", "expr.vec_value()")

    inc_forward_scalar, inc_forward_vec = forward_scalar, forward_vec

    def backward(self, index, full: bool = False):
        _not_here("backward(index)", "expr.backward(full=...)")

    def inputMatrixLiteral(self, v, d, batch_size=1, device=""):  # noqa: N802 (DyNet's)
        _not_here("inputMatrixLiteral(...)", "dy.inputTensorTranspose(v, d, batch_size), "
                  "which reads the values in the same order,")

    def inputSparseTensor(self, idxs, v, dim, batch_size=1, defval=0, device=""):  # noqa: N802
        _not_here("inputSparseTensor(...)", "dy.sparse_inputTensor")

    def print_graphviz(self) -> None:
        print_graphviz()

    def checkpoint(self) -> None:
        cg_checkpoint()

    def revert(self) -> None:
        cg_revert()

    def dump(self, filename="", show_values=True, show_gradients=True,
             nan_check_only=False) -> None:
        dump_cg(filename, show_values, show_gradients, nan_check_only)

    @property
    def graph(self):
        """The batchviz :class:`~batchviz.Graph` behind it (for ``bv.explain``, traces...)."""
        return current()

    def __repr__(self) -> str:
        return f"<dynet graph {cg_version()}: {current()!r}>"


def _not_here(call: str, instead: str):
    """The methods of DyNet's ``cg()`` that name nodes by DyNet's numbers (a
    ``VariableIndex``, which are not batchviz's: ``b + W * x`` is one node here, two in
    DyNet), or that make inputs the module's functions make."""
    raise NotImplementedError(f"cg().{call} is not supported by batchviz.dynet; use {instead} "
                              "instead")


_CG = ComputationGraph()


def cg() -> ComputationGraph:
    return _CG


def print_graphviz(compact=False, show_dims=True, expression_names=None, lookup_names=None,
                   collapse_birnns=False) -> None:
    """Print the current graph in graphviz's DOT language, as DyNet's ``print_graphviz``
    does; here it is batchviz's picture of the graph once the graph's strategy has run all
    its batches: every node with its op, id and shape, outlined in its signature's colour
    (DyNet's formatting options are accepted and not used). ``bv.render(dy.cg().graph,
    step)`` draws any step of the schedule, ``batchviz explain prog.py`` explains it, and
    the widgets step through it."""
    from ..trace import trace     # (the pictures' modules load graphviz: only when asked)
    from ..viz import render

    graph = current()
    recorded = trace(graph, graph.strategy)
    print(render(recorded, step=len(recorded.steps)).source)


print_text_graphviz = print_graphviz


def dump_cg(filename="", show_values=True, show_gradients=True, nan_check_only=False) -> None:
    """Print the current graph node by node, with each node's value and gradient, to the
    file ``filename`` (written anew) or, by default, to the screen: DyNet's ``dump_cg``,
    for finding the node where a NaN appears or a value goes wrong. The graph is computed
    first, as DyNet does.

    The text is batchviz's, not DyNet's format: batchviz's nodes (``b + W * x`` is one
    affine node, a minibatch is the last axis of a node), each with its op, arguments,
    shape, the batch that computed it and its signature (see :mod:`.dump`).
    ``show_values``/``show_gradients`` leave the values or gradients out;
    ``nan_check_only=True`` prints ``valid`` or ``invalid`` (NaN or infinite) instead of
    the numbers. The gradients of nodes that are not parameters are there after
    ``backward(full=True)`` (see ``Expression.gradient``); a parameter's is its
    accumulated gradient."""
    if not isinstance(filename, str):
        raise TypeError(f"dump_cg: filename must be a str (\"\" for the screen), got "
                        f"{type(filename).__name__}")
    text = graph_text(current(), bool(show_values), bool(show_gradients),
                      bool(nan_check_only), f"DyNet graph {cg_version()}")
    if filename:
        with open(filename, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        print(text, end="")


def check_values(values: np.ndarray, what: str) -> None:
    """With ``renew_cg(check_validity=True)``, raise if ``values`` are not all finite."""
    if session.check_validity and not np.all(np.isfinite(values)):
        raise RuntimeError(f"check_validity: {what} has a NaN or infinite value")
