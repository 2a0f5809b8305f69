"""One gradient-check case per op: how to build a node of it from parameters.

Each case is ``(param_shapes, build)`` where ``build(params, k)`` returns the expression of
instance ``k``. Arguments are routed through ``p * 1.0`` where the op should see ordinary
computed nodes (gathered from the arena) rather than parameters (shared arguments).
A test checks that every registered op has a case here, so a new op cannot skip its check.
"""
import batchviz as bv

from op_cases_more import MORE_CASES


def v(p):
    """A parameter as an ordinary computed node (not a shared argument)."""
    return p * 1.0


def positive(p):
    return bv.shift(bv.square(v(p)), 0.5)


#: lstm_step cases: b, Wx, x, Wh, h, c of a sequence step; b, W of a Tree-LSTM leaf; b,
#: U_L, U_R of an inner node; x and h/c with 3 and 2 columns
_STEP_SHAPES = [(8,), (8, 3), (3,), (8, 2), (2,), (2,), (6,), (6, 3), (10,), (10, 2), (10, 2),
                (3, 2), (2, 2)]


def _second_step(P):
    """A sequence step whose previous h and cell are the previous step node (nothing
    shared): it reads that node's value h, and its cell block from what the node keeps."""
    first = bv.lstm_step([P[0], P[1], v(P[2]), P[3], v(P[4])], [v(P[5])], 2)
    return bv.lstm_step([v(P[0]), v(P[1]), v(P[2]), v(P[3]), first], [first], 2)


def _second_projected_step(P):
    """Two steps of a sequence as ``sequence_step`` builds them: the second reads the first
    step node's h and cell, and adds its own input projection."""
    first = bv.sequence_step(P[0], [P[1]], P[3], [v(P[2])], v(P[4]), v(P[5]), 2)
    return bv.sequence_step(P[0], [P[1]], P[3], [bv.tanh(v(P[2]))], first, first, 2)


def _small_tree(P):
    """A Tree-LSTM root over two inner nodes, one reading two leaves (step nodes that keep
    one gate block fewer), the other a leaf and a plain h and cell: the first inner node and
    the root read their cells from step nodes of different sizes."""
    leaf_a = bv.lstm_step([P[6], P[7], v(P[2])], [], 2)
    leaf_b = bv.lstm_step([P[6], P[7], bv.tanh(v(P[2]))], [], 2)
    a = bv.lstm_step([P[8], P[9], leaf_a, P[10], leaf_b], [leaf_a, leaf_b], 2)
    b = bv.lstm_step([P[8], P[9], v(P[4]), P[10], leaf_a], [v(P[5]), leaf_a], 2)
    return bv.lstm_step([P[8], P[9], a, P[10], b], [a, b], 2)


def _sums(P, k, op):
    """``op`` (esum or average) of 3, 6 or 2 matrices (k = 0, 2, 3) and of 2 vectors (k = 1).
    A sum's signature names its shape, not its number of terms, so the three sums of
    matrices are one batch of nodes of different numbers of arguments (``Op.any_arity``):
    it reads every argument with one gather (``Op.one_gather``) and adds each node's run of
    rows; one node is given more than once, so its gradient adds into it once per use."""
    if k % 2 == 0:
        x, y = v(P[3]), v(P[4])
        return op([x, x, y] if k % 4 == 0 else [x, y, x, y, x, y])
    return op([v(P[0]), v(P[1])] if k % 4 == 1 else [v(P[3]), v(P[4])])


CASES = {
    "neg": ([(4,)], lambda P, k: -v(P[0])),
    "tanh": ([(4,)], lambda P, k: bv.tanh(v(P[0]))),
    "logistic": ([(4,)], lambda P, k: bv.logistic(v(P[0]))),
    "rectify": ([(5,)], lambda P, k: bv.rectify(v(P[0]))),
    "exp": ([(4,)], lambda P, k: bv.exp(v(P[0]))),
    "log": ([(4,)], lambda P, k: bv.log(positive(P[0]))),
    "square": ([(4,)], lambda P, k: bv.square(v(P[0]))),
    "sqrt": ([(4,)], lambda P, k: bv.sqrt(positive(P[0]))),
    "add": ([(4,), (4,)], lambda P, k: v(P[0]) + v(P[1])),
    "sub": ([(4,), (4,)], lambda P, k: v(P[0]) - v(P[1])),
    "cmult": ([(3, 2), (3, 2)], lambda P, k: bv.cmult(v(P[0]), v(P[1]))),
    "cdiv": ([(4,), (4,)], lambda P, k: bv.cdiv(v(P[0]), positive(P[1]))),
    "esum": ([(4,), (4,), (4,), (2, 3), (2, 3)], lambda P, k: _sums(P, k, bv.esum)),
    "average": ([(4,), (4,), (4,), (2, 3), (2, 3)], lambda P, k: _sums(P, k, bv.average)),
    "scale": ([(4,)], lambda P, k: v(P[0]) * (0.5 + k)),
    "shift": ([(4,)], lambda P, k: v(P[0]) + (1.5 - k)),
    "matmul": ([(3, 4), (4,), (3, 4), (4, 2)], lambda P, k: [
        P[0] @ v(P[1]),                 # shared W @ vector
        v(P[2]) @ v(P[1]),              # unshared matrix @ vector
        P[0] @ v(P[3]),                 # shared W @ matrix
        v(P[0]) @ v(P[3]),              # unshared matrix @ matrix
    ][k % 4]),
    "affine": ([(3,), (3, 4), (4,), (3, 2), (2,)], lambda P, k: [
        bv.affine_transform([P[0], P[1], v(P[2]), P[3], v(P[4])]),          # shared b, W
        bv.affine_transform([v(P[0]), v(P[1]), v(P[2])]),                   # nothing shared
    ][k % 2]),
    **{f"affine_{f}": ([(3,), (3, 4), (4,), (3, 2), (2,)], lambda P, k, f=f: [
        bv.activated_affine(f, [P[0], P[1], v(P[2]), P[3], v(P[4])]),       # shared b, W
        bv.activated_affine(f, [v(P[0]), v(P[1]), v(P[2])]),                # nothing shared
    ][k % 2]) for f in ("logistic", "tanh", "rectify")},
    "concatenate": ([(3,), (2,)], lambda P, k: bv.concatenate([v(P[0]), v(P[1])])),
    "pick": ([(5,), (3, 2)], lambda P, k: [v(P[0])[k % 5], bv.pick(v(P[1]), k % 3)][k % 2]),
    "pick_range": ([(6,)], lambda P, k: v(P[0])[1:4]),
    "reshape": ([(6,)], lambda P, k: bv.reshape(v(P[0]), (2, 3))),
    "transpose": ([(2, 3), (3,)], lambda P, k: [bv.transpose(v(P[0])), v(P[1]).T][k % 2]),
    "sum_elems": ([(2, 3)], lambda P, k: bv.sum_elems(v(P[0]))),
    "mean_elems": ([(5,)], lambda P, k: bv.mean_elems(v(P[0]))),
    "dot_product": ([(4,), (4,)], lambda P, k: bv.dot_product(v(P[0]), v(P[1]))),
    "squared_distance": ([(4,), (4,)], lambda P, k: bv.squared_distance(v(P[0]), v(P[1]))),
    "squared_norm": ([(4,)], lambda P, k: bv.squared_norm(v(P[0]))),
    "softmax": ([(5,), (4, 3)], lambda P, k: bv.softmax(v(P[k % 2]))),        # columns too
    "log_softmax": ([(5,), (4, 3)], lambda P, k: bv.log_softmax(v(P[k % 2]))),
    "pickneglogsoftmax": ([(5,)], lambda P, k: bv.pickneglogsoftmax(v(P[0]), (2 * k) % 5)),
    # each instance allows other entries (one batch, a mask per row); the case picks an
    # allowed one, the others being -inf
    "log_softmax_restricted": ([(5,)], lambda P, k: bv.pick(
        bv.log_softmax(v(P[0]), allowed=[[1], [2, 4], [3, 2, 1], [4]][k]), [1, 4, 2, 4][k])),
    "dropout": ([(6,)], lambda P, k: bv.dropout(v(P[0]), 0.4, seed=100 + k)),
    # batches of two: a shared filter and bias ("same" padding), and filters and biases of
    # the nodes' own ("valid"), with strides
    "conv2d": ([(4, 5, 2), (3, 2, 2, 3), (3,), (2, 2, 2, 3)], lambda P, k: [
        bv.conv2d(v(P[0]) * (1.0 + k), P[1], stride=(1, 2), valid=False, b=P[2]),
        bv.conv2d(v(P[0]) * (1.0 + k), v(P[3]) * (1.0 - k), stride=(2, 1), valid=True,
                  b=v(P[2]))][k % 2]),
    # windows side by side ("valid"), and overlapping and padded ("same")
    "maxpool2d": ([(5, 6, 2)], lambda P, k: [
        bv.maxpool2d(v(P[0]) * (1.0 + k), (2, 2)),
        bv.maxpool2d(v(P[0]) * (1.0 - k), (3, 2), stride=(2, 1), valid=False)][k % 2]),
    # three images per node (a DyNet minibatch): shared and own filters, as above
    "conv2d of several images": ([(4, 5, 2, 3), (3, 2, 2, 3), (3,), (2, 2, 2, 3)], lambda P, k: [
        bv.conv2d(v(P[0]) * (1.0 + k), P[1], stride=(1, 2), valid=False, b=P[2]),
        bv.conv2d(v(P[0]) * (1.0 + k), v(P[3]) * (1.0 - k), stride=(2, 1), valid=True,
                  b=v(P[2]))][k % 2]),
    "maxpool2d of several images": ([(5, 6, 2, 3)], lambda P, k: [
        bv.maxpool2d(v(P[0]) * (1.0 + k), (2, 2)),
        bv.maxpool2d(v(P[0]) * (1.0 - k), (3, 2), stride=(2, 1), valid=False)][k % 2]),
    "lookup": ([], None),  # lookup tables need LookupParameters: see test_lookup_gradient
    # fused LSTM ops (batchviz/ops/lstm.py): hidden = 2, gates [i, f..., o, u]
    "lstm_gates": ([(8,), (8, 3), (3,), (8, 2), (2,), (3, 2), (2, 2)], lambda P, k: [
        bv.lstm_gates([P[0], P[1], v(P[2]), P[3], v(P[4])], 2),            # shared b, W
        bv.lstm_gates([v(P[0]), v(P[1]), v(P[2]), v(P[3]), v(P[4])], 2),   # nothing shared
        bv.lstm_gates([P[0], P[1], v(P[5]), P[3], v(P[6])], 2)             # columns, and a
        + bv.lstm_gates([P[3], P[3], v(P[6])], 2),                          # bias with columns
        bv.vanilla_lstm_gates(v(P[2]), None, P[1], P[3], P[0]),             # no recurrence
    ][k % 4]),
    "lstm_c": ([(2,), (2,), (8,), (10,), (6,), (2, 3), (8, 3)], lambda P, k: [
        bv.vanilla_lstm_c(v(P[0]), v(P[2])),                                # sequence LSTM
        bv.lstm_c([v(P[0]), v(P[1])], v(P[3])),                             # Tree-LSTM node
        bv.lstm_c([], v(P[4])),                                             # Tree-LSTM leaf
        bv.lstm_c([v(P[5])], v(P[6])),                                      # columns
    ][k % 4]),
    "lstm_h": ([(2,), (8,), (10,), (2, 3), (8, 3)], lambda P, k: [
        bv.vanilla_lstm_h(v(P[0]), v(P[1])),
        bv.lstm_h(v(P[0]), v(P[2])),
        bv.lstm_h(v(P[3]), v(P[4])),
    ][k % 3]),
    # one-node LSTM steps (batchviz/ops/lstm_steps.py): hidden = 2
    "lstm_step": (_STEP_SHAPES, lambda P, k: [
        bv.lstm_step([P[0], P[1], v(P[2]), P[3], v(P[4])], [v(P[5])], 2),   # shared b, W; a cell
        _second_step(P),                                                    # reads a step node
        _small_tree(P),                                                     # K = 0 and K = 2
        bv.lstm_step([P[0], P[1], v(P[11]), P[3], v(P[12])], [v(P[12])], 2),  # columns
    ][k % 4]),
    # a sequence step as two nodes (bv.sequence_step): its input projection is the step's
    # bias, one per node - a vector, or with the inputs' columns; and a parameter whose
    # columns make it a bias per node (a matrix bias is never shared by the gate ops)
    "lstm_step, projected": (_STEP_SHAPES, lambda P, k: [
        bv.sequence_step(P[0], [P[1]], P[3], [v(P[2])], v(P[4]), v(P[5]), 2),
        _second_projected_step(P),
        bv.sequence_step(P[0], [P[1]], P[3], [v(P[11])], v(P[12]), v(P[12]), 2),  # columns
        bv.lstm_step([P[3], P[3], v(P[12])], [v(P[12])], 2),
    ][k % 4]),
    "lstm_step_cell": (_STEP_SHAPES, lambda P, k: bv.lstm_step_cell([
        bv.lstm_step([P[0], P[1], v(P[2]), P[3], v(P[4])], [v(P[5])], 2),
        bv.lstm_step([P[6], P[7], v(P[2])], [], 2),                         # a leaf: 5 blocks kept
        _small_tree(P),                                                     # 7 blocks kept
        bv.lstm_step([P[0], P[1], v(P[11]), P[3], v(P[12])], [v(P[12])], 2),  # columns
    ][k % 4])),
    # manual batching (batchviz/ops/columns.py); lookup_batch: see tests/test_nn.py
    "lookup_batch": ([], None),
    "affine_batch": ([(3,), (3, 4), (4, 2), (3, 2), (2, 2)], lambda P, k: [
        bv.affine_batch([P[0], P[1], v(P[2]), P[3], v(P[4])]),
        bv.affine_batch([v(P[0]), v(P[1]), v(P[2])]),
    ][k % 2]),
    "pickneglogsoftmax_batch": ([(4, 3)], lambda P, k: bv.pickneglogsoftmax_batch(
        v(P[0]), [k % 4, (k + 1) % 4, 2])),
}
CASES.update(MORE_CASES)

#: ops whose nodes have no differentiable inputs
NO_GRADIENT = {"parameter", "input", "zeros"}
