"""Gradient-check cases (the format of :mod:`op_cases`) for the ops DyNet's API needs beyond
the paper's: more activations, reductions and picks along an axis, broadcasting, column-major
reshapes and the margin and binary losses (batchviz/ops/activations.py, axes.py, layout.py,
scalar.py, losses.py, columns.py)."""
import numpy as np

import batchviz as bv


def v(p):
    """A parameter as an ordinary computed node (not a shared argument)."""
    return p * 1.0


def positive(p):
    return bv.shift(bv.square(v(p)), 0.5)


def well(d):
    """``3 I`` of size ``d``, to keep a matrix far from singular."""
    return bv.input(3.0 * np.eye(d))


def probability(p):
    return bv.logistic(v(p))


def inside_one(p):
    """Values in ``(-0.9, 0.9)``: inside the domain of ``asin``, ``acos`` and ``atanh``, away
    from its ends, where the slopes grow without bound."""
    return bv.scale(bv.tanh(v(p)), 0.9)


MORE_CASES = {
    "abs": ([(5,)], lambda P, k: bv.abs(v(P[0]))),
    "selu": ([(6,)], lambda P, k: bv.selu(v(P[0]))),
    "softsign": ([(5,)], lambda P, k: bv.softsign(v(P[0]))),
    "log_sigmoid": ([(5,)], lambda P, k: bv.log_sigmoid(v(P[0]))),
    "cube": ([(4,)], lambda P, k: bv.cube(v(P[0]))),
    "sin": ([(4,)], lambda P, k: bv.sin(v(P[0]))),
    "cos": ([(4,)], lambda P, k: bv.cos(v(P[0]))),
    "tan": ([(4,)], lambda P, k: bv.tan(bv.tanh(v(P[0])))),         # |x| < 1, far from pi / 2
    "asin": ([(4,)], lambda P, k: bv.asin(inside_one(P[0]))),
    "acos": ([(4,)], lambda P, k: bv.acos(inside_one(P[0]))),
    "atan": ([(4,)], lambda P, k: bv.atan(v(P[0]))),
    "sinh": ([(4,)], lambda P, k: bv.sinh(v(P[0]))),
    "cosh": ([(4,)], lambda P, k: bv.cosh(v(P[0]))),
    "asinh": ([(4,)], lambda P, k: bv.asinh(v(P[0]))),
    "acosh": ([(4,)], lambda P, k: bv.acosh(bv.shift(positive(P[0]), 1.0))),   # x > 1
    "atanh": ([(4,)], lambda P, k: bv.atanh(inside_one(P[0]))),
    "erf": ([(4,)], lambda P, k: bv.erf(v(P[0]))),
    "lgamma": ([(5,)], lambda P, k: bv.lgamma(bv.scale(positive(P[0]), 1.0 + 3.0 * k))),  # x > 0
    "pow": ([(4,), (4,)], lambda P, k: bv.pow(positive(P[0]), v(P[1]))),
    "bmax": ([(5,), (5,)], lambda P, k: bv.bmax(v(P[0]), v(P[1]))),
    "bmin": ([(5,), (5,)], lambda P, k: bv.bmin(v(P[0]), v(P[1]))),
    "elu": ([(6,)], lambda P, k: bv.elu(v(P[0]), 0.5 + k)),     # alpha per node
    "silu": ([(6,)], lambda P, k: bv.silu(v(P[0]), [1.0, 0.5, 2.0, 0.0][k % 4])),  # beta per node
    "scale_gradient": ([(4,)], lambda P, k: bv.scale_gradient(v(P[0]), 1.0)),  # see test_dynet_ops
    "sum_axes": ([(2, 3, 4)], lambda P, k: bv.sum_axes(v(P[0]), [(0,), (1, 2), (2,)][k % 3])),
    "max_axis": ([(3, 4)], lambda P, k: [bv.max_axis(v(P[0]), 0), bv.max_axis(v(P[0]), 1),
                                         bv.min_axis(v(P[0]), 1)][k % 3]),
    "logsumexp_axis": ([(3, 4)], lambda P, k: bv.logsumexp_axis(v(P[0]), k % 2)),
    # the one-hot times x: its slope is the one-hot, none of it through argmax_axis (its
    # straight-through gradient is no derivative: tests/dynet_cases.py checks it on DyNet's)
    "argmax_axis": ([(3, 4)], lambda P, k: bv.cmult(bv.argmax_axis(v(P[0]), k % 2), v(P[0]))),
    "broadcast": ([(3,), (1,)], lambda P, k: [
        bv.broadcast(v(P[0]), (3, 1), (3, 4)),                         # a column repeated
        bv.broadcast(v(P[1]), (1, 1), (2, 3)),                         # a scalar everywhere
    ][k % 2]),
    "pick_axis": ([(3, 4), (2, 3, 4)], lambda P, k: [
        bv.pick_axis(v(P[0]), k % 4, 1), bv.pick_axis(v(P[1]), k % 3, 1),
    ][k % 2]),
    "pick_batch": ([(3, 4), (2, 3, 4)], lambda P, k: [
        bv.pick_batch(v(P[0]), [k % 3, 1, 2, 0]),                      # a row per column
        bv.pick_batch(v(P[1]), [2, k % 3, 0, 1], axis=1),
    ][k % 2]),
    "select_axis": ([(3, 4)], lambda P, k: [
        bv.select_axis(v(P[0]), [2, 0, 2], 1),                         # a column twice
        bv.select_axis(v(P[0]), [k % 3, 1], 0),
    ][k % 2]),
    "concatenate_axis": ([(3,), (3, 2), (2, 3)], lambda P, k: [
        bv.concatenate_axis([v(P[0]), v(P[1]), v(P[0])], 1),          # vectors as columns
        bv.concatenate_axis([v(P[2]), v(P[2])], 0),
        bv.concatenate_axis([v(P[0]), v(P[0])], 1),                    # a new last axis
    ][k % 3]),
    "permute": ([(2, 3, 4)], lambda P, k: bv.permute(v(P[0]), [(2, 0, 1), (1, 0, 2)][k % 2])),
    "reshape_column_major": ([(3, 4)], lambda P, k: bv.reshape_column_major(
        v(P[0]), [(2, 6), (4, 3)][k % 2])),
    "hinge": ([(5,), (4, 3)], lambda P, k: [
        bv.hinge(v(P[0]), k % 5),
        bv.hinge(v(P[1]), [k % 4, 1, 3], margin=0.5),                 # a loss per column
    ][k % 2]),
    "binary_log_loss": ([(4,), (4,)], lambda P, k: bv.binary_log_loss(probability(P[0]),
                                                                      probability(P[1]))),
    # supports of several sizes: scores spread wide (a few entries) or close (all of them)
    "sparsemax": ([(6,), (4, 3)], lambda P, k: [
        bv.sparsemax(v(P[0]) * (0.5 + k)),
        bv.sparsemax(v(P[1]) * (0.1 + 0.5 * k)),                      # of each column
    ][k % 2]),
    # bounds in (0.05, 0.45): some entries at their bounds, the others a scaled softmax;
    # of each column of a matrix; bounds summing to less than 1 (all at their bounds)
    "constrained_softmax": ([(5,), (5,), (4, 3), (4, 3)], lambda P, k: [
        bv.constrained_softmax(v(P[0]) * (1.0 + k), bv.shift(bv.scale(probability(P[1]), 0.4),
                                                             0.05)),
        bv.constrained_softmax(v(P[2]) * 2.0, bv.shift(bv.scale(probability(P[3]), 0.5), 0.1)),
        bv.constrained_softmax(v(P[0]), bv.shift(bv.scale(probability(P[1]), 0.1), 0.05)),
    ][k % 3]),
    "pickneglogsoftmax_columns": ([(4, 3)], lambda P, k: bv.pickneglogsoftmax_columns(
        v(P[0]), [k % 4, (k + 1) % 4, 2])),
    # piecewise constant: a zero gradient (the values stay off the steps)
    "round": ([(5,)], lambda P, k: bv.round(v(P[0]) * 3.0)),
    "floor": ([(5,)], lambda P, k: bv.floor(v(P[0]) * 3.0)),
    "ceil": ([(5,)], lambda P, k: bv.ceil(v(P[0]) * 3.0)),
    "kmax_axis": ([(3, 5), (2, 4, 3)], lambda P, k: [
        bv.kmax_axis(v(P[0]), 2, 1),                       # the two largest of every row
        bv.kmax_axis(v(P[1]), 1 + k % 2, 0),
    ][k % 2]),
    # pairs of one length batch; a vector with itself takes both gradients
    "circ_conv": ([(5,), (5,), (3,)], lambda P, k: [
        bv.circ_conv(v(P[0]) * (1.0 + 0.1 * k), v(P[1])),
        bv.circ_conv(v(P[2]), bv.tanh(v(P[2]))),
    ][k % 2]),
    "circ_corr": ([(5,), (5,), (3,)], lambda P, k: [
        bv.circ_corr(v(P[0]) * (1.0 + 0.1 * k), v(P[1])),
        bv.circ_corr(v(P[2]), bv.tanh(v(P[2]))),
    ][k % 2]),
    # well-conditioned matrices: A + 3 I, and A A^T + I (a positive determinant)
    "inverse": ([(3, 3)], lambda P, k: bv.inverse(v(P[0]) * (1.0 + 0.1 * k) + well(3))),
    "logdet": ([(3, 3)], lambda P, k: bv.logdet(
        bv.matmul(v(P[0]) * (1.0 - 0.1 * k), bv.transpose(v(P[0]))) + well(3) / 3.0)),
}
