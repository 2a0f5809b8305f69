"""The binary constituency Tree-LSTM of Tai et al. (2015), as a per-node cell.

A node with children ``(h_L, c_L)`` and ``(h_R, c_R)`` computes gates
``[i, f_L, f_R, o, u] = sigmoid/tanh(b + U_L h_L + U_R h_R)`` (each forget gate sees both
children, Tai et al.'s N-ary Tree-LSTM with N = 2), then ``c = i*u + f_L*c_L + f_R*c_R``
and ``h = o * tanh(c)``. A leaf reads its word vector ``x``: ``[i, o, u]`` from
``b' + W x`` and ``c = i*u``. Each is one fused node (``bv.lstm_step``, built by
``bv.lstm_unit``) whose value is ``h`` and which keeps its cell, from which the parent reads
it: a tree node's state is that one node. The runtime batches the nodes of all trees of a
minibatch: an inner node batches with the others whatever its children are, as the step
reads only the cell block of what each child keeps.
"""
from __future__ import annotations

from ..ops.lstm_units import UnitBuilder, lstm_unit


class TreeLSTMCell:
    """Parameters of a binary Tree-LSTM; :meth:`leaf` and :meth:`node` build one tree node."""

    def __init__(self, model, input_dim: int, hidden_dim: int, name: str | None = None):
        name = model.unique_prefix("tree") if name is None else name
        H = self.hidden_dim = int(hidden_dim)
        if H < 1 or input_dim < 1:
            raise ValueError(f"dimensions must be positive, got input {input_dim}, hidden {hidden_dim}")
        self.W = model.add_parameters((3 * H, input_dim), name=f"{name}.W")      # leaf [i, o, u]
        self.b_leaf = model.add_parameters((3 * H,), init="zeros", name=f"{name}.b_leaf")
        self.U_L = model.add_parameters((5 * H, H), name=f"{name}.U_L")           # [i, fL, fR, o, u]
        self.U_R = model.add_parameters((5 * H, H), name=f"{name}.U_R")
        bias = [0.0] * H + [1.0] * (2 * H) + [0.0] * (2 * H)                       # forget gates at 1
        self.b = model.add_parameters((5 * H,), init=bias, name=f"{name}.b")
        # unit builders for encode(), kept so that they learn a graph's units once, not
        # once per tree (they relearn by themselves when the graph changes)
        self._leaf_unit = UnitBuilder(self.b_leaf, [self.W], H)
        self._inner_unit = UnitBuilder(self.b, [self.U_L, self.U_R], H)

    def leaf(self, x):
        """A leaf reading the vector ``x``: one step node (its value is ``h``; it keeps
        the cell)."""
        return lstm_unit(self.b_leaf, [self.W], [x], (), self.hidden_dim)

    def node(self, left, right):
        """An inner node from its two children, step nodes made by :meth:`leaf` or
        :meth:`node` (each gives its ``h`` and its cell)."""
        return lstm_unit(self.b, [self.U_L, self.U_R], [left, right], (left, right),
                         self.hidden_dim)

    def encode(self, tree, leaf_input) -> list:
        """``[(node, h), ...]`` for every node of ``tree`` (a :class:`batchviz.data.Tree`
        with at most two children per node) in post-order; ``leaf_input(word)`` gives a
        leaf's input vector. Iterative, so deep trees cannot exhaust the recursion limit."""
        states = {}
        out = []
        leaf, inner = self._leaf_unit, self._inner_unit  # the nodes of leaf() and node()
        for node in tree.nodes():
            if node.is_leaf:
                state = leaf([leaf_input(node.word)], ())
            elif len(node.children) == 2:
                left, right = states[id(node.children[0])], states[id(node.children[1])]
                state = inner([left, right], (left, right))
            elif len(node.children) == 1:  # unary chains (PTB): pass the child through
                state = states[id(node.children[0])]
            else:
                raise ValueError(f"a binary Tree-LSTM cannot read a node with "
                                 f"{len(node.children)} children; binarize the tree first")
            states[id(node)] = state
            out.append((node, state))
        return out
