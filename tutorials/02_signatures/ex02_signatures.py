"""Exercise 2: node signatures (the paper's §3.2 "Computing compatibility groups" and
Appendix A).

Two nodes may run in one batch only if one kernel can compute both. A node's *signature*
says which kernel and with what constraints; nodes with equal signatures are guaranteed to
be batchable once their inputs are ready. You will write the three rules of Appendix A and
a function that picks the right rule for any node; the tests check that your signatures
group the nodes of real models (Figure 1's RNN, a Tree-LSTM, a transition parser) exactly
as the runtime's own signatures do. Run

    pytest tutorials/02_signatures

A signature is any hashable value (a tuple of strings, ints and tuples works well). Only
*equality* matters: equal signatures mean "batchable together", different ones "never".

Facts about batchviz's ops that you need (``op = graph.ops[node]``):

* ``op.name`` is the op's name; ``op.elementwise`` is True for component-wise ops
  (``tanh``, ``logistic``, ``add``, ``cmult``, ``esum``, ...), whose kernels see all nodes of
  a batch as one flat array.
* ``esum`` and ``average`` take any number of arguments. Their kernel gathers every term of
  every node of the batch into one block of rows and adds each node's run of rows, so a
  sum of 2 terms and a sum of 40 can share it; but the rows must all be one size, so only
  sums of one shape can.
* Ops with a *shared* argument: ``matmul`` (position 0, the matrix), ``affine``
  (``affine_transform([b, W1, x1, W2, x2, ...])``: position 0 and every odd position) and
  ``lookup`` (position 0, the table). Such a position is shared only when its argument is a
  model parameter (``arg in graph.param_of_node``); otherwise it is an ordinary argument.
* ``pick_range`` (``x[a:b]``) keeps its bounds ``(a, b)`` in ``graph.attrs[node]``, and
  nodes with different bounds cannot share a kernel. Other ops' attributes (the index of
  ``pick``, the class of ``pickneglogsoftmax``, the factor of ``x * 2.0``) are per node and
  do not prevent batching.
* ``graph.shapes[i]`` is node ``i``'s shape (a tuple), ``graph.args[i]`` its arguments.
"""


def elementwise_signature(op_name, output_shape):
    """Component-wise ops: which ``tanh`` nodes (or ``add``, ``esum``, ...) may batch?

    ``output_shape`` is the node's shape. For most, shapes do not matter: a ``tanh`` of a
    4-vector and a ``tanh`` of a 64x64 matrix run in one kernel over their concatenation.
    But remember ``esum``/``average`` (see above).
    """
    raise NotImplementedError(
        "Exercise 2: return the signature of a component-wise op: its name, plus the output "
        "shape for the sums (esum, average)")


def dimension_sensitive_signature(op_name, output_shape, argument_shapes, bounds=None):
    """Dimension-sensitive ops (``concatenate``, ``squared_distance``, ``pick_range``, a
    ``matmul`` of two expressions, ...): nodes batch only if all shapes match.

    ``argument_shapes`` is the list of the arguments' shapes; ``bounds`` is ``(a, b)`` for
    ``pick_range`` and None for every other op (the paper's ``slice-400x500-100:200``).
    """
    raise NotImplementedError(
        "Exercise 2: return a signature made of the op name, the output shape, every argument's "
        "shape and the bounds")


def shared_argument_signature(op_name, argument_keys):
    """Ops with shared elements (``W @ h_i`` -> one ``W @ H``): ``argument_keys[j]`` is already
    decided for you: the node id of a shared argument, the shape of any other argument.
    Combine them into the signature."""
    raise NotImplementedError(
        "Exercise 2: return a signature made of the op name and the argument keys")


SHAREABLE_POSITIONS = {
    "matmul": lambda n_args: {0},
    "lookup": lambda n_args: {0},
    "affine": lambda n_args: {0} | set(range(1, n_args, 2)),
}


def signature(graph, node):
    """The signature of any node of ``graph`` (parameters excluded: they never run).

    Pick the rule: component-wise ops -> ``elementwise_signature``; ops in
    ``SHAREABLE_POSITIONS`` -> ``shared_argument_signature``, where a shareable position whose
    argument is a model parameter is keyed by that argument's node id (tag it so that it
    cannot be confused with a shape, e.g. ``("node", 3)``) and every other position by the
    argument's shape; everything else -> ``dimension_sensitive_signature`` (with the bounds
    of ``pick_range``).
    """
    raise NotImplementedError(
        "Exercise 2: choose the rule from graph.ops[node] (elementwise? shareable positions?) and "
        "call it with the node's name, shapes, shared node ids or bounds")
