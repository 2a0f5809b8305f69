"""Small DyNet programs, written once against a module ``dy`` and run under both the real
``dynet`` and ``batchviz.dynet`` with the same parameter values (tests/test_dynet_conformance.py).

Each op case is ``(parameter specs, build)``: a spec is a shape (a parameter) or
``("lookup", (rows, d))``; ``build(dy, P)`` returns one expression (of any dimension, batched
or not) from the parameters ``P``. :func:`run_case` reduces it to a scalar with fixed weights,
runs backward and returns the value, the dimension and every parameter's gradient.
"""
import numpy as np


def values_for(spec, seed: int) -> np.ndarray:
    """The values every run gives parameter ``spec`` (a shape or ``("lookup", shape)``)."""
    shape = spec[1] if isinstance(spec[0], str) else spec
    return np.random.default_rng(seed).normal(0.0, 0.6, size=shape).astype(np.float32)


def make_parameters(dy, pc, specs) -> list:
    params = []
    for k, spec in enumerate(specs):
        values = values_for(spec, 100 + k)
        if isinstance(spec[0], str):
            p = pc.add_lookup_parameters(spec[1])
            if values.ndim > 2:   # (DyNet's init_from_array takes (rows, d) tables only; the
                for row, v in enumerate(values):   # rows here are (1, ..., 1, d))
                    p.init_row(row, [float(x) for x in v.ravel()])
            else:
                p.init_from_array(values)
        else:
            p = pc.add_parameters(spec)
            p.set_value(values)
        params.append(p)
    return params


def weights_like(value: np.ndarray, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=value.shape).astype(np.float32)


def run_case(dy, specs, build, renew=None) -> dict:
    """Value, dimension and parameter gradients of ``build`` under the module ``dy``."""
    pc = dy.ParameterCollection()
    params = make_parameters(dy, pc, specs)
    (renew or dy.renew_cg)()
    out = build(dy, params)
    value = out.npvalue()
    dims, bd = out.dim()
    w = dy.inputTensor(weights_like(value), batched=bd > 1)
    loss = dy.sum_batches(dy.sum_elems(dy.cmult(out, w)))
    loss.value()
    loss.backward()
    return {"value": value, "dim": (tuple(dims), bd), "loss": loss.value(),
            "grads": [p.grad_as_array() for p in params]}


#: cases whose values are compared with DyNet's but not their gradients, and why; their
#: gradients are checked against finite differences in tests/test_gradcheck.py
VALUES_ONLY = {
    **dict.fromkeys(["silu beta", "silu beta 2", "silu beta, a minibatch"],
                    "DyNet 2.1's silu gradient lacks the factor beta"),
    **dict.fromkeys(["round", "floor", "ceil", "round, straight through",
                     "floor, straight through, a minibatch", "ceil, straight through"],
                    "DyNet 2.1's gradient of round, floor and ceil depends on the calls made "
                    "before, whatever the gradient mode"),
}


def vec(dy, values):
    return dy.inputVector([float(v) for v in values])


def batch(dy, array):
    """A minibatch input: the last axis is the batch."""
    return dy.inputTensor(np.asarray(array, dtype=np.float32), batched=True)


def positive(dy, p):
    return dy.square(p) + 0.5


def inside_one(dy, p):
    """Values in ``(-0.9, 0.9)``, inside the domain of ``asin``, ``acos`` and ``atanh``."""
    return dy.tanh(p) * 0.9


X4 = [0.3, -1.2, 0.8, 2.0]
XB = np.arange(12, dtype=np.float32).reshape(4, 3) / 7.0 - 0.6   # four rows, three instances
#: three images (4, 5, 2), and two (5, 4) matrices as a list of arrays (DyNet: a minibatch)
IMAGES = np.cos(np.arange(120, dtype=np.float32)).reshape(4, 5, 2, 3)
MATRICES = [np.sin(np.arange(20, dtype=np.float32) + k).reshape(5, 4) for k in range(2)]

#: name -> (parameter specs, build)
OP_CASES = {
    # element-wise, one argument
    "tanh": ([(4,)], lambda dy, P: dy.tanh(P[0])),
    "logistic": ([(4,)], lambda dy, P: dy.logistic(P[0])),
    "rectify": ([(5,)], lambda dy, P: dy.rectify(P[0])),
    "exp": ([(4,)], lambda dy, P: dy.exp(P[0])),
    "log": ([(4,)], lambda dy, P: dy.log(positive(dy, P[0]))),
    "square": ([(4,)], lambda dy, P: dy.square(P[0])),
    "sqrt": ([(4,)], lambda dy, P: dy.sqrt(positive(dy, P[0]))),
    "abs": ([(5,)], lambda dy, P: dy.abs(P[0])),
    "cube": ([(4,)], lambda dy, P: dy.cube(P[0])),
    "sin": ([(4,)], lambda dy, P: dy.sin(P[0])),
    "cos": ([(4,)], lambda dy, P: dy.cos(P[0])),
    "tan": ([(4,)], lambda dy, P: dy.tan(P[0])),
    "asin": ([(4,)], lambda dy, P: dy.asin(inside_one(dy, P[0]))),
    "acos": ([(4,)], lambda dy, P: dy.acos(inside_one(dy, P[0]))),
    "atan": ([(4,)], lambda dy, P: dy.atan(P[0] * 3.0)),
    "sinh": ([(4,)], lambda dy, P: dy.sinh(P[0] * 3.0)),
    "cosh": ([(4,)], lambda dy, P: dy.cosh(P[0] * 3.0)),
    "asinh": ([(4,)], lambda dy, P: dy.asinh(P[0] * 3.0)),
    "acosh": ([(4,)], lambda dy, P: dy.acosh(positive(dy, P[0]) + 1.0)),
    "atanh": ([(4,)], lambda dy, P: dy.atanh(inside_one(dy, P[0]))),
    "erf": ([(4,)], lambda dy, P: dy.erf(P[0] * 2.0)),
    "lgamma": ([(5,)], lambda dy, P: dy.lgamma(positive(dy, P[0]) * 4.0)),
    "lgamma of negative numbers": ([(4,)], lambda dy, P: dy.lgamma(
        dy.inputVector([-0.5, -1.5, -2.3, -3.7]) + P[0] * 0.1)),
    "lgamma, a minibatch": ([(4,)], lambda dy, P: dy.lgamma(
        dy.cmult(positive(dy, P[0]), batch(dy, XB + 1.0)))),
    "softsign": ([(4,)], lambda dy, P: dy.softsign(P[0])),
    "log_sigmoid": ([(4,)], lambda dy, P: dy.log_sigmoid(P[0])),
    "selu": ([(6,)], lambda dy, P: dy.selu(P[0])),
    "elu": ([(6,)], lambda dy, P: dy.elu(P[0], 0.7)),
    "elu default": ([(6,)], lambda dy, P: dy.elu(P[0])),
    "silu": ([(6,)], lambda dy, P: dy.silu(P[0] * 4.0)),
    "silu beta": ([(6,)], lambda dy, P: dy.silu(P[0] * 4.0, beta=0.5)),   # (values only)
    "silu beta 2": ([(6,)], lambda dy, P: dy.silu(P[0] * 4.0, 2.0)),
    "silu, a minibatch": ([(4,)], lambda dy, P: dy.silu(dy.cmult(P[0], batch(dy, XB)))),
    "silu beta, a minibatch": ([(4,)], lambda dy, P: dy.silu(dy.cmult(P[0], batch(dy, XB)), 1.5)),
    # element-wise, two arguments, with DyNet's broadcasting
    "cmult": ([(3, 2), (3, 2)], lambda dy, P: dy.cmult(P[0], P[1])),
    "cmult column": ([(3, 2), (3, 1)], lambda dy, P: dy.cmult(P[0], P[1])),
    "cdiv": ([(4,), (4,)], lambda dy, P: dy.cdiv(P[0], positive(dy, P[1]))),
    "cdiv by a number": ([(4,), (1,)], lambda dy, P: dy.cdiv(P[0], positive(dy, P[1]))),
    "pow": ([(4,), (1,)], lambda dy, P: dy.pow(positive(dy, P[0]), P[1])),
    "x ** 2": ([(4,)], lambda dy, P: P[0] ** 2),
    "bmax": ([(5,), (5,)], lambda dy, P: dy.bmax(P[0], P[1])),
    "bmin": ([(5,), (5,)], lambda dy, P: dy.bmin(P[0], P[1])),
    "colwise_add": ([(3, 4), (3,)], lambda dy, P: dy.colwise_add(P[0], P[1])),
    "x + y": ([(4,), (4,)], lambda dy, P: P[0] + P[1]),
    "x - y": ([(4,), (4,)], lambda dy, P: P[0] - P[1]),
    "-x": ([(4,)], lambda dy, P: -P[0]),
    "x + matrix column": ([(3, 4), (3, 1)], lambda dy, P: P[0] + P[1]),
    "numbers": ([(4,)], lambda dy, P: (P[0] * 2.0 + 1.5) / 3.0 - 0.25),
    "batch + one": ([(4,)], lambda dy, P: batch(dy, XB) + P[0]),
    "batch cmult one": ([(4,)], lambda dy, P: dy.cmult(P[0], batch(dy, XB))),
    "esum, mixed batch": ([(4,), (4,)], lambda dy, P: dy.esum([P[0], batch(dy, XB), P[1]])),
    "average": ([(4,), (4,)], lambda dy, P: dy.average([P[0], P[1], dy.tanh(P[0])])),
    "emax": ([(4,), (4,)], lambda dy, P: dy.emax([P[0], P[1]])),
    "logsumexp": ([(4,), (4,)], lambda dy, P: dy.logsumexp([P[0], P[1], dy.tanh(P[1])])),
    # products
    "W * x": ([(3, 4), (4,)], lambda dy, P: P[0] * P[1]),
    "W * X": ([(3, 4), (4, 2)], lambda dy, P: P[0] * P[1]),
    "W * batch": ([(3, 4)], lambda dy, P: P[0] * batch(dy, XB)),
    "x^T * W^T": ([(3, 4), (4,)], lambda dy, P: dy.transpose(P[1]) * dy.transpose(P[0])),
    "x * number": ([(3,), (1,)], lambda dy, P: P[0] * P[1]),
    "numbers of a batch times numbers": ([(4,)], lambda dy, P: dy.pick(
        dy.cmult(P[0], batch(dy, XB)), 1) * dy.reshape(dy.inputVector([1.0, 0.0, 2.0]), (1,), 3)),
    "batch of matrices * batch": ([(4,), (2,)], lambda dy, P: dy.reshape(
        dy.cmult(P[0], batch(dy, XB)), (2, 2), 3) * dy.cmult(P[1], batch(dy, XB[:2] + 1.0))),
    "batch of matrices * vector": ([(4,), (2,)], lambda dy, P: dy.reshape(
        dy.cmult(P[0], batch(dy, XB)), (2, 2), 3) * P[1]),
    "batch of rows * batch of matrices": ([(4,), (8,)], lambda dy, P: dy.transpose(
        dy.pick_range(dy.cmult(P[0], batch(dy, XB)), 0, 2)) * dy.reshape(
        dy.cmult(P[1], batch(dy, np.concatenate([XB, XB]))), (2, 4), 3)),
    "affine_transform": ([(3,), (3, 4), (4,), (3, 2), (2,)], lambda dy, P: dy.affine_transform(
        [P[0], P[1], P[2], P[3], P[4]])),
    "affine_transform, batch": ([(3,), (3, 4)], lambda dy, P: dy.affine_transform(
        [P[0], P[1], batch(dy, XB)])),
    "affine_transform, matrix": ([(3,), (3, 4), (4, 2)], lambda dy, P: dy.affine_transform(
        [P[0], P[1], P[2]])),
    # products and sums that batchviz.dynet builds as one affine node
    "b + W * x": ([(3,), (3, 4), (4,)], lambda dy, P: P[0] + P[1] * dy.tanh(P[2])),
    "W * x + b": ([(3,), (3, 4), (4,)], lambda dy, P: P[1] * P[2] + P[0]),
    "b + U * h + V * c": ([(3,), (3, 4), (4,), (3, 2), (2,)], lambda dy, P: P[0] + P[1] * P[2]
                          + P[3] * P[4]),
    "U * h + (b + V * c)": ([(3,), (3, 4), (4,), (3, 2), (2,)], lambda dy, P: P[1] * P[2]
                            + (P[0] + P[3] * P[4])),
    "W * x + W * y": ([(3, 4), (4,), (4,)], lambda dy, P: P[0] * P[1] + P[0] * P[2]),
    "b + W * batch": ([(3,), (3, 4)], lambda dy, P: P[0] + P[1] * batch(dy, XB)),
    "batch bias + W * batch": ([(3, 4)], lambda dy, P: P[0] * batch(dy, XB)
                               + P[0] * batch(dy, XB * 2.0)),
    "a product used twice": ([(3,), (3, 4), (4,)], lambda dy, P: (lambda h: dy.cmult(
        h + P[0], dy.tanh(h)))(P[1] * P[2])),
    "expression bias": ([(3,), (3, 4), (4,)], lambda dy, P: dy.tanh(P[0]) + P[1] * P[2]),
    "dot_product": ([(4,), (4,)], lambda dy, P: dy.dot_product(P[0], P[1])),
    "dot_product, batch": ([(4,)], lambda dy, P: dy.dot_product(P[0], batch(dy, XB))),
    "squared_distance": ([(4,), (4,)], lambda dy, P: dy.squared_distance(P[0], P[1])),
    # square matrices kept far from singular: P + 3 I, and P P^T + I (a positive determinant)
    "inverse": ([(3, 3)], lambda dy, P: dy.inverse(P[0] + dy.inputTensor(3.0 * np.eye(3)))),
    "logdet": ([(3, 3)], lambda dy, P: dy.logdet(
        P[0] * dy.transpose(P[0]) + dy.inputTensor(np.eye(3)))),
    "squared_norm": ([(4,)], lambda dy, P: dy.squared_norm(P[0])),
    "squared_norm, batch": ([(4,)], lambda dy, P: dy.squared_norm(dy.cmult(P[0], batch(dy, XB)))),
    "l2_norm": ([(4,)], lambda dy, P: dy.l2_norm(P[0])),
    "l1_distance": ([(4,), (4,)], lambda dy, P: dy.l1_distance(P[0], P[1])),
    "trace_of_product": ([(3, 4), (3, 4)], lambda dy, P: dy.trace_of_product(P[0], P[1])),
    "weight_norm": ([(3, 4), (1,)], lambda dy, P: dy.weight_norm(P[0], P[1])),
    "weight_norm, a (1, 1) gain": ([(5,), (1, 1)], lambda dy, P: dy.weight_norm(P[0], P[1])),
    # structure
    "concatenate": ([(3,), (2,)], lambda dy, P: dy.concatenate([P[0], P[1], P[0]])),
    "concatenate d=1": ([(3, 2), (3, 1)], lambda dy, P: dy.concatenate([P[0], P[1]], d=1)),
    "concatenate, batch": ([(4,)], lambda dy, P: dy.concatenate([P[0], batch(dy, XB)])),
    # a matrix times a column is a (n, 1) column, which concatenates with vectors as DyNet
    # does: missing last dimensions count as 1, the result has the first's dimensions
    "concatenate a column, a vector": ([(4, 3), (3, 1), (2,)], lambda dy, P: dy.concatenate(
        [P[0] * P[1], P[2]])),
    "concatenate a vector, a column": ([(4, 3), (3, 1), (2,)], lambda dy, P: dy.concatenate(
        [P[2], P[0] * P[1]])),
    "a column plus a vector, tanh": ([(4, 3), (3, 1), (4,)], lambda dy, P: dy.tanh(
        P[0] * P[1] + P[2])),
    # a minibatch of scalars (a picked score per instance) is rows to concatenate
    "concatenate batched scalars": ([(4,)], lambda dy, P: dy.concatenate(
        [dy.pick_batch(dy.cmult(P[0], batch(dy, XB)), ids) for ids in ([1, 2, 0], [3, 0, 0])])),
    "pickneglogsoftmax_batch of picked scores": ([(4,)], lambda dy, P: dy.pickneglogsoftmax_batch(
        dy.concatenate([dy.pick_batch(dy.cmult(P[0], batch(dy, XB)), ids)
                        for ids in ([1, 2, 0], [3, 0, 0])]), [0, 1, 1])),
    "concatenate_cols": ([(3,), (3,)], lambda dy, P: dy.concatenate_cols([P[0], P[1], P[0]])),
    "concatenate_cols, batch": ([(4,)], lambda dy, P: dy.concatenate_cols(
        [batch(dy, XB), dy.cmult(P[0], batch(dy, XB))])),
    # convolutions: "same" and "valid", strides, a bias; a CNN over a sentence's word vectors
    # looked up from a table of (1, 1, d) rows, max-pooled over the words
    "conv2d same": ([(3, 5, 2), (2, 3, 2, 3)], lambda dy, P: dy.conv2d(P[0], P[1], [1, 1],
                                                                      is_valid=False)),
    "conv2d_bias valid, strides": ([(5, 6, 2), (2, 3, 2, 3), (3,)], lambda dy, P: dy.conv2d_bias(
        P[0], P[1], P[2], [2, 2], is_valid=True)),
    "conv2d same, strides": ([(5, 6, 2), (3, 2, 2, 2)], lambda dy, P: dy.conv2d(
        P[0], P[1], [2, 3], is_valid=False)),
    "maxpooling2d valid": ([(4, 6, 2)], lambda dy, P: dy.maxpooling2d(P[0], [2, 2], [2, 2])),
    "maxpooling2d same, overlapping": ([(5, 5, 3)], lambda dy, P: dy.maxpooling2d(
        P[0], [3, 2], [2, 1], is_valid=False)),
    "maxpooling2d of a matrix": ([(5, 4)], lambda dy, P: dy.maxpooling2d(P[0], [2, 3], [2, 2],
                                                                         is_valid=False)),
    "conv2d_bias of a minibatch, same": ([(4, 5, 2), (3, 2, 2, 3), (3,)], lambda dy, P: dy.conv2d_bias(
        dy.cmult(P[0], batch(dy, IMAGES)), P[1], P[2], [1, 2], is_valid=False)),
    "conv2d of a minibatch, valid": ([(4, 5, 2), (2, 2, 2, 3)], lambda dy, P: dy.conv2d(
        dy.cmult(P[0], batch(dy, IMAGES)), P[1], [2, 1])),
    "maxpooling2d of a minibatch": ([(4, 5, 2)], lambda dy, P: dy.maxpooling2d(
        dy.cmult(P[0], batch(dy, IMAGES)), [2, 2], [2, 1], is_valid=False)),
    "conv2d and maxpooling2d of a list of matrices": ([(5, 4), (3, 3, 1, 2)], lambda dy, P: dy.maxpooling2d(
        dy.conv2d(dy.cmult(P[0], dy.inputTensor(MATRICES)), P[1], [1, 1], is_valid=False),
        [2, 2], [2, 2])),
    # (DyNet's round, floor and ceil need the gradient mode: they have no default)
    "round": ([(6,)], lambda dy, P: dy.round(P[0] * 3.0, "zero_gradient")),
    "floor": ([(6,)], lambda dy, P: dy.floor(P[0] * 3.0, "zero_gradient")),
    "ceil": ([(6,)], lambda dy, P: dy.ceil(P[0] * 3.0, "zero_gradient")),
    "round, straight through": ([(6,)], lambda dy, P: dy.round(
        P[0] * 3.0, gradient_mode="straight_through_gradient")),
    "floor, straight through, a minibatch": ([(4,)], lambda dy, P: dy.floor(
        dy.cmult(P[0], batch(dy, XB)) * 3.0, "straight_through_gradient")),
    "ceil, straight through": ([(6,)], lambda dy, P: dy.ceil(P[0] * 3.0,
                                                             "straight_through_gradient")),
    "kmax_pooling": ([(3, 5)], lambda dy, P: dy.kmax_pooling(P[0], 2)),
    "kmax_pooling d=0": ([(3, 5)], lambda dy, P: dy.kmax_pooling(P[0], 2, d=0)),
    "kmax_pooling, a minibatch": ([(4,)], lambda dy, P: dy.kmax_pooling(
        dy.cmult(P[0], batch(dy, XB)), 3, d=0)),
    "kmh_ngram": ([(3, 5)], lambda dy, P: dy.kmh_ngram(P[0], 2)),
    "kmh_ngram of the whole sentence": ([(3, 5)], lambda dy, P: dy.kmh_ngram(P[0], 5)),
    "kmh_ngram n=1": ([(3, 4)], lambda dy, P: dy.kmh_ngram(dy.tanh(P[0]), 1)),
    "kmh_ngram n=3, a CNN's features": ([(2, 6), (4, 2)], lambda dy, P: dy.max_dim(
        dy.kmh_ngram(P[1] * P[0], 3), d=1)),
    "circ_conv": ([(5,), (5,)], lambda dy, P: dy.circ_conv(P[0], dy.tanh(P[1]))),
    "circ_corr": ([(5,), (5,)], lambda dy, P: dy.circ_corr(P[0], dy.tanh(P[1]))),
    "circ_conv of a vector with itself": ([(4,)], lambda dy, P: dy.circ_conv(P[0], P[0])),
    "circ_corr of one number": ([(1,), (1,)], lambda dy, P: dy.circ_corr(P[0], P[1])),
    "filter1d_narrow": ([(3, 6), (3, 2)], lambda dy, P: dy.filter1d_narrow(P[0], P[1])),
    "a CNN over looked-up words": ([("lookup", (6, 1, 1, 3)), (1, 2, 3, 4), (4,)],
                                   lambda dy, P: dy.rectify(dy.reshape(dy.max_dim(
                                       dy.conv2d_bias(dy.concatenate([P[0][w] for w in (1, 4, 2, 5)], d=1),
                                                      P[1], P[2], (1, 1), is_valid=False), d=1), (4,)))),
    "pick": ([(5,)], lambda dy, P: dy.pick(P[0], 3)),
    "pick dim=1": ([(3, 4)], lambda dy, P: dy.pick(P[0], 2, 1)),
    "pick, batch": ([(4,)], lambda dy, P: dy.pick(dy.cmult(P[0], batch(dy, XB)), 1)),
    "x[i]": ([(3, 4)], lambda dy, P: P[0][1]),
    "x[rows, instances] of a minibatch": ([(4,)], lambda dy, P: dy.cmult(
        P[0], batch(dy, XB))[1:3, ::2]),
    "x[rows, one instance] of a minibatch": ([(4,)], lambda dy, P: dy.cmult(
        P[0], batch(dy, XB))[:, 1:2]),
    "x[a:b]": ([(5,)], lambda dy, P: P[0][1:4]),
    "pick_range": ([(6,)], lambda dy, P: dy.pick_range(P[0], 2, 5)),
    "pick_range d=1": ([(3, 5)], lambda dy, P: dy.pick_range(P[0], 1, 3, 1)),
    "select_rows": ([(4, 3)], lambda dy, P: dy.select_rows(P[0], [2, 0, 2])),
    "select_cols": ([(3, 4)], lambda dy, P: dy.select_cols(P[0], [3, 1])),
    "reshape": ([(3, 4)], lambda dy, P: dy.reshape(P[0], (4, 3))),
    "reshape to a batch": ([(3, 4)], lambda dy, P: dy.reshape(P[0], (3,), batch_size=4)),
    "transpose": ([(3, 4)], lambda dy, P: dy.transpose(P[0])),
    "transpose, batch": ([(4,)], lambda dy, P: dy.transpose(dy.cmult(P[0], batch(dy, XB)))),
    "transpose 3-d": ([(2, 3, 4)], lambda dy, P: dy.transpose(P[0], [2, 0, 1])),
    "concatenate_to_batch": ([(4,), (4,)], lambda dy, P: dy.concatenate_to_batch([P[0], P[1]])),
    "pick_batch_elem": ([(4,)], lambda dy, P: dy.pick_batch_elem(dy.cmult(P[0], batch(dy, XB)), 1)),
    "pick_batch_elems": ([(4,)], lambda dy, P: dy.pick_batch_elems(
        dy.cmult(P[0], batch(dy, XB)), [2, 0])),
    "pick_batch": ([(4,)], lambda dy, P: dy.pick_batch(dy.cmult(P[0], batch(dy, XB)), [3, 0, 1])),
    # reductions
    "sum_elems": ([(3, 2)], lambda dy, P: dy.sum_elems(P[0])),
    "sum_elems, batch": ([(4,)], lambda dy, P: dy.sum_elems(dy.cmult(P[0], batch(dy, XB)))),
    "mean_elems": ([(5,)], lambda dy, P: dy.mean_elems(P[0])),
    "sum_dim": ([(3, 4)], lambda dy, P: dy.sum_dim(P[0], [1])),
    "sum_dim with batch": ([(4,)], lambda dy, P: dy.sum_dim(dy.cmult(P[0], batch(dy, XB)), [0], True)),
    "mean_dim": ([(3, 4)], lambda dy, P: dy.mean_dim(P[0], [0], False)),
    "sum_batches": ([(4,)], lambda dy, P: dy.sum_batches(dy.cmult(P[0], batch(dy, XB)))),
    "mean_batches": ([(4,)], lambda dy, P: dy.mean_batches(dy.cmult(P[0], batch(dy, XB)))),
    "max_dim": ([(3, 4)], lambda dy, P: dy.max_dim(P[0], 1)),
    "min_dim": ([(3, 4)], lambda dy, P: dy.min_dim(P[0], 0)),
    "logsumexp_dim": ([(3, 4)], lambda dy, P: dy.logsumexp_dim(P[0], 1)),
    "argmax, zero_gradient": ([(5,)], lambda dy, P: dy.cmult(
        dy.argmax(P[0], "zero_gradient"), P[0])),
    "argmax, straight_through_gradient": ([(5,)], lambda dy, P: dy.argmax(
        dy.tanh(P[0]), "straight_through_gradient")),
    "argmax of a batch": ([(4,)], lambda dy, P: dy.argmax(
        dy.cmult(P[0], batch(dy, XB)), "straight_through_gradient")),
    "std_elems": ([(5,)], lambda dy, P: dy.std_elems(P[0])),
    "std_dim": ([(3, 4)], lambda dy, P: dy.std_dim(P[0], [1], False)),
    "std_dim d=0": ([(3, 4)], lambda dy, P: dy.std_dim(P[0], [0], False)),
    # DyNet's Python std_dim passes n = 0 to C++ whatever n is
    "std_dim of both dimensions, n ignored": ([(3, 4)], lambda dy, P: dy.std_dim(
        P[0], [0, 1], False, 5)),
    "std_dim, batch": ([(4,)], lambda dy, P: dy.std_dim(
        dy.cmult(P[0], batch(dy, XB)), [0], False)),
    "std_dim with batch": ([(4,)], lambda dy, P: dy.std_dim(dy.reshape(
        dy.cmult(P[0], batch(dy, XB)), (2, 2), 3), [1], True)),
    "std_batches": ([(4,)], lambda dy, P: dy.std_batches(dy.cmult(P[0], batch(dy, XB)))),
    "moment_elems": ([(5,)], lambda dy, P: dy.moment_elems(P[0], 3)),
    "moment_elems, batch": ([(4,)], lambda dy, P: dy.moment_elems(
        dy.cmult(P[0], batch(dy, XB)), 2)),
    "moment_dim n=2": ([(3, 4)], lambda dy, P: dy.moment_dim(P[0], [1], 3, False, 2)),
    "moment_dim with batch": ([(4,)], lambda dy, P: dy.moment_dim(dy.reshape(
        dy.cmult(P[0], batch(dy, XB)), (2, 2), 3), [0], 2, True)),
    "moment_batches": ([(4,)], lambda dy, P: dy.moment_batches(dy.cmult(P[0], batch(dy, XB)), 3)),
    "cumsum": ([(5,)], lambda dy, P: dy.cumsum(P[0])),
    "cumsum d=1": ([(3, 4)], lambda dy, P: dy.cumsum(P[0], 1)),
    "cumsum, batch": ([(4,)], lambda dy, P: dy.cumsum(dy.cmult(P[0], batch(dy, XB)))),
    "cumsum of a minibatch of images, d=1": ([(4, 5, 2)], lambda dy, P: dy.cumsum(
        dy.cmult(P[0], batch(dy, IMAGES)), 1)),
    "cumsum past the last dimension": ([(3,)], lambda dy, P: dy.cumsum(P[0], 1)),
    "fold_rows": ([(6,)], lambda dy, P: dy.fold_rows(P[0])),
    "fold_rows of a matrix, nrows=3": ([(6, 2)], lambda dy, P: dy.fold_rows(P[0], 3)),
    "layer_norm": ([(5,), (5,), (5,)], lambda dy, P: dy.layer_norm(P[0], P[1], P[2])),
    # softmax and losses
    "softmax": ([(5,)], lambda dy, P: dy.softmax(P[0])),
    "softmax of columns": ([(3, 4)], lambda dy, P: dy.softmax(P[0])),
    "softmax d=1": ([(3, 4)], lambda dy, P: dy.softmax(P[0], 1)),
    "softmax, batch": ([(4,)], lambda dy, P: dy.softmax(dy.cmult(P[0], batch(dy, XB)))),
    "log_softmax": ([(5,)], lambda dy, P: dy.log_softmax(P[0])),
    "sparsemax": ([(6,)], lambda dy, P: dy.sparsemax(P[0] * 3.0)),
    "sparsemax of close scores": ([(6,)], lambda dy, P: dy.sparsemax(P[0] * 0.2)),
    "sparsemax of a column": ([(5, 1)], lambda dy, P: dy.sparsemax(P[0])),
    "sparsemax of one number": ([(1,)], lambda dy, P: dy.sparsemax(P[0])),
    # bounds in (0.05, 0.45): some entries held at their bounds, gradients to both
    "constrained_softmax": ([(6,), (6,)], lambda dy, P: dy.constrained_softmax(
        P[0] * 3.0, dy.logistic(P[1]) * 0.4 + 0.05)),
    "constrained_softmax of a column": ([(5, 1), (5,)], lambda dy, P: dy.constrained_softmax(
        P[0] * 2.0, dy.logistic(P[1]) * 0.5 + 0.1)),
    "constrained_softmax, loose bounds": ([(4,)], lambda dy, P: dy.constrained_softmax(
        P[0], vec(dy, [1.0, 0.9, 0.95, 1.0]))),
    "constrained_softmax, bounds summing below 1": ([(4,), (4,)], lambda dy, P:
        dy.constrained_softmax(P[0], dy.logistic(P[1]) * 0.2)),
    # restricted: the others are -inf, so the case takes a value of the allowed ones
    "log_softmax restrict": ([(5,)], lambda dy, P: dy.concatenate(
        [dy.pick(dy.log_softmax(P[0], [0, 2, 3]), k) for k in (0, 3)])),
    "log_softmax restrict to one": ([(5,)], lambda dy, P: dy.pick(
        dy.log_softmax(P[0], [4]), 4)),
    "pickneglogsoftmax": ([(5,)], lambda dy, P: dy.pickneglogsoftmax(P[0], 2)),
    "pickneglogsoftmax_batch": ([(4,)], lambda dy, P: dy.pickneglogsoftmax_batch(
        dy.cmult(P[0], batch(dy, XB)), [3, 0, 1])),
    # scores in a column (n, 1), as a network that reshapes its input to a column has them
    "pickneglogsoftmax of a column": ([(5, 1)], lambda dy, P: dy.pickneglogsoftmax(P[0], 2)),
    "pickneglogsoftmax_batch of columns": ([(4, 1)], lambda dy, P: dy.pickneglogsoftmax_batch(
        dy.cmult(P[0], dy.reshape(batch(dy, XB), (4, 1), batch_size=3)), [3, 0, 1])),
    "hinge": ([(5,)], lambda dy, P: dy.hinge(P[0], 1)),
    "hinge margin": ([(5,)], lambda dy, P: dy.hinge(P[0], 4, 0.3)),
    "hinge_batch": ([(4,)], lambda dy, P: dy.hinge_batch(dy.cmult(P[0], batch(dy, XB)), [3, 0, 1])),
    "hinge_dim": ([(4, 3)], lambda dy, P: dy.hinge_dim(P[0], [3, 0, 1])),
    "hinge_dim d=1 margin": ([(4, 3)], lambda dy, P: dy.hinge_dim(P[0], [2, 0, 1, 1], d=1, m=0.5)),
    "binary_log_loss": ([(4,)], lambda dy, P: dy.binary_log_loss(    # targets are data: see
        dy.logistic(P[0]), vec(dy, [1.0, 0.0, 0.3, 1.0]))),            # test_dynet_api.py
    # differences of either side of c (3 x 0.6 apart)
    "huber_distance": ([(6,), (6,)], lambda dy, P: dy.huber_distance(P[0] * 3.0, P[1])),
    "huber_distance c=0.5": ([(2, 3), (2, 3)], lambda dy, P: dy.huber_distance(P[0], P[1], 0.5)),
    "pairwise_rank_loss": ([(1,), (1,)], lambda dy, P: dy.pairwise_rank_loss(P[0], P[1])),
    "pairwise_rank_loss of rows, margin": ([(1, 5), (1, 5)], lambda dy, P: dy.pairwise_rank_loss(
        P[0], P[1], 0.3)),
    "pairwise_rank_loss, batch": ([(4,), (4,)], lambda dy, P: dy.pairwise_rank_loss(
        dy.reshape(dy.cmult(P[0], batch(dy, XB)), (1, 4), 3),
        dy.reshape(dy.cmult(P[1], batch(dy, XB)), (1, 4), 3), 0.2)),
    # inputs, lookups, constants, gradient modifiers
    "inputVector": ([(4,)], lambda dy, P: dy.cmult(P[0], vec(dy, X4))),
    "scalarInput": ([(4,)], lambda dy, P: P[0] * dy.scalarInput(1.5)),
    "inputTensor": ([(3, 4)], lambda dy, P: dy.cmult(P[0], dy.inputTensor(XB.T))),
    "zeros, ones, constant": ([(3,)], lambda dy, P: P[0] + dy.ones(3) + dy.zeros(3)
                              + dy.constant(3, 0.5)),
    "one_hot": ([(5,)], lambda dy, P: dy.cmult(P[0], dy.one_hot(5, 2))),
    "lookup": ([("lookup", (6, 4))], lambda dy, P: dy.esum([P[0][1], dy.lookup(P[0], 4), P[0][1]])),
    "lookup_batch": ([("lookup", (6, 4))], lambda dy, P: dy.lookup_batch(P[0], [5, 0, 5])),
    "E.batch": ([("lookup", (6, 4))], lambda dy, P: dy.tanh(P[0].batch([1, 2]))),
    "lookup update=False": ([("lookup", (6, 4)), (4,)], lambda dy, P: dy.cmult(
        dy.lookup(P[0], 2, update=False), P[1])),
    "const_parameter": ([(4,), (4,)], lambda dy, P: dy.cmult(dy.const_parameter(P[0]), P[1])),
    "parameter": ([(3, 4), (4,)], lambda dy, P: dy.parameter(P[0]) * P[1]),
    "nobackprop": ([(4,), (4,)], lambda dy, P: dy.cmult(dy.nobackprop(dy.tanh(P[0])), P[1])),
    "flip_gradient": ([(4,)], lambda dy, P: dy.flip_gradient(dy.tanh(P[0]))),
    "scale_gradient": ([(4,)], lambda dy, P: dy.scale_gradient(dy.tanh(P[0]), 0.25)),
    "dropout p=0": ([(4,)], lambda dy, P: dy.dropout(P[0], 0.0)),
}


# --- DyNet's fused LSTM ops and tensor contractions ------------------------------------------
#: the parameters of a step of hidden size 2 with inputs of 4: Wx, Wh, b (gates [i, f, o, g])
STEP = [(8, 4), (8, 2), (8,)]
#: three (2, 3, 4) tensors, a minibatch
TENSORS = np.sin(np.arange(72, dtype=np.float32)).reshape(2, 3, 4, 3)


def gates(dy, P, x, h):
    return dy.vanilla_lstm_gates(x, h, P[0], P[1], P[2])


def batched(dy, p, rows):
    """A minibatch of three made of the vector parameter ``p`` (``rows`` of XB's four)."""
    return dy.cmult(p, batch(dy, XB[:rows] + 0.3))


OP_CASES.update({
    "vanilla_lstm_gates": (STEP + [(4,), (2,)], lambda dy, P: gates(dy, P, P[3], P[4])),
    "vanilla_lstm_gates, a minibatch of inputs": (STEP + [(2,)], lambda dy, P: gates(
        dy, P, batch(dy, XB), P[3])),
    "vanilla_lstm_gates, minibatches of inputs and states": (STEP + [(4,), (2,)], lambda dy, P:
        gates(dy, P, batched(dy, P[3], 4), batched(dy, P[4], 2))),
    "pick_range of vanilla_lstm_gates (the forget gate)": (STEP + [(4,), (2,)], lambda dy, P:
        dy.pick_range(gates(dy, P, batched(dy, P[3], 4), P[4]), 2, 4)),
    "vanilla_lstm_gates_concat": (STEP + [(1,), (3,), (2,)], lambda dy, P:
        dy.vanilla_lstm_gates_concat([P[3], P[4]], P[5], P[0], P[1], P[2])),
    "vanilla_lstm_gates_concat, a minibatch": (STEP + [(1,), (3,), (2,)], lambda dy, P:
        dy.vanilla_lstm_gates_concat([batched(dy, P[3], 1), dy.cmult(P[4], batch(
            dy, XB[1:] - 0.2))], batched(dy, P[5], 2), P[0], P[1], P[2])),
    "vanilla_lstm_gates_dropout": (STEP + [(4,), (2,)], lambda dy, P:
        dy.vanilla_lstm_gates_dropout(P[3], P[4], P[0], P[1], P[2], vec(dy, [1.25, 0, 0, 1.25]),
                                      vec(dy, [0, 2.0]))),
    "vanilla_lstm_gates_dropout, a minibatch, masks per instance": (STEP + [(2,)], lambda dy, P:
        dy.vanilla_lstm_gates_dropout(batch(dy, XB), batched(dy, P[3], 2), P[0], P[1], P[2],
                                      batch(dy, (XB > 0) * 2.0), vec(dy, [0.5, 1.5]))),
    "vanilla_lstm_gates_dropout_concat": (STEP + [(2,), (2,), (2,)], lambda dy, P:
        dy.vanilla_lstm_gates_dropout_concat([P[3], P[4]], P[5], P[0], P[1], P[2],
                                             vec(dy, [0, 2.0, 2.0, 0]), vec(dy, [1.5, 0.5]))),
    "vanilla_lstm_gates_dropout_concat, a minibatch": (STEP + [(2,), (2,), (2,)], lambda dy, P:
        dy.vanilla_lstm_gates_dropout_concat(
            [batched(dy, P[3], 2), dy.cmult(P[4], batch(dy, XB[2:]))], batched(dy, P[5], 2),
            P[0], P[1], P[2], vec(dy, [0, 2.0, 2.0, 0]), batch(dy, (XB[:2] > 0) * 1.0))),
    "vanilla_lstm_c": (STEP + [(4,), (2,), (2,)], lambda dy, P: dy.vanilla_lstm_c(
        P[5], gates(dy, P, P[3], P[4]))),
    "vanilla_lstm_h": (STEP + [(4,), (2,), (2,)], lambda dy, P: dy.vanilla_lstm_h(
        dy.tanh(P[5]) * 2.0, gates(dy, P, P[3], P[4]))),
    "vanilla_lstm_c, vanilla_lstm_h, a minibatch": (STEP + [(2,), (2,)], lambda dy, P: (
        lambda g: dy.vanilla_lstm_h(dy.vanilla_lstm_c(batched(dy, P[4], 2), g), g))(
        gates(dy, P, batch(dy, XB), P[3]))),
    # contract3d_1d without a bias is checked in test_dynet_conformance.py: DyNet 2.1 adds
    # it to memory it has not cleared, so only its gradients are DyNet's
    "contract3d_1d_bias": ([(2, 3, 4), (4,), (2, 3)], lambda dy, P: dy.contract3d_1d_bias(
        P[0], P[1], P[2])),
    "contract3d_1d_bias, a minibatch of y": ([(2, 3, 4), (4,), (2, 3)], lambda dy, P:
        dy.contract3d_1d_bias(P[0], batched(dy, P[1], 4), P[2])),
    "contract3d_1d_bias, a minibatch of x": ([(2, 3, 4), (4,), (2, 3)], lambda dy, P:
        dy.contract3d_1d_bias(dy.cmult(P[0], batch(dy, TENSORS)), P[1], P[2])),
    "contract3d_1d_bias, minibatches of x, y and b": ([(2, 3, 4), (4,), (2, 3)], lambda dy, P:
        dy.contract3d_1d_bias(dy.cmult(P[0], batch(dy, TENSORS)), batched(dy, P[1], 4),
                              dy.cmult(P[2], batch(dy, TENSORS[:, :, 0])))),
    "contract3d_1d_bias, a column y": ([(2, 3, 4), (4, 1), (2, 3)], lambda dy, P:
        dy.contract3d_1d_bias(P[0], P[1], P[2])),
    "contract3d_1d_1d": ([(2, 3, 4), (4,), (3,)], lambda dy, P: dy.contract3d_1d_1d(
        P[0], P[1], P[2])),
    "contract3d_1d_1d_bias": ([(2, 3, 4), (4,), (3,), (2,)], lambda dy, P:
        dy.contract3d_1d_1d_bias(P[0], P[1], P[2], P[3])),
})


# --- builders ------------------------------------------------------------------------------
SENTENCE = [1, 4, 2, 7]
BATCH = [[1, 4, 2], [0, 3, 3], [5, 6, 1], [2, 2, 7]]   # 4 steps of a minibatch of 3


def builder_params(builder) -> list:
    """Every parameter of a builder, in DyNet's order (a BiRNN's layer by layer; a softmax
    layer's, which has no get_parameters, in its collection's order)."""
    layers = getattr(builder, "builder_layers", None)
    if layers is not None:
        return [p for pair in layers for b in pair for p in builder_params(b)]
    if not hasattr(builder, "get_parameters"):
        return builder.param_collection().parameters_list()
    return [p for layer in builder.get_parameters() for p in layer]


def run_builder(dy, make, build, renew=None) -> dict:
    """Values of the expressions ``build(dy, builder, E)`` returns (a list) and the gradients
    of every parameter, the builder's set to the same values under both modules."""
    pc = dy.ParameterCollection()
    E = pc.add_lookup_parameters((8, 3))
    E.init_from_array(values_for(("lookup", (8, 3)), 5))
    builder = make(dy, pc)
    params = builder_params(builder)
    for k, p in enumerate(params):
        p.set_value(values_for(p.shape(), 200 + k))
    (renew or dy.renew_cg)()
    outs = build(dy, builder, E)
    terms = []
    for k, o in enumerate(outs):
        w = dy.inputTensor(weights_like(o.npvalue(), seed=k), batched=o.dim()[1] > 1)
        terms.append(dy.sum_batches(dy.sum_elems(dy.cmult(o, w))))
    loss = dy.esum(terms)
    values = [o.npvalue() for o in outs]
    loss.backward()
    return {"values": values, "dims": [o.dim() for o in outs], "loss": loss.value(),
            "grads": [p.grad_as_array() for p in [E] + params]}


def _transduce(dy, b, E):
    return b.initial_state().transduce([E[w] for w in SENTENCE])


def _steps(dy, b, E):
    state = b.initial_state()
    for w in SENTENCE[:3]:
        state = state.add_input(E[w])
    return list(state.h()) + list(state.s()) + [state.prev().output(), state.output()]


def _batched(dy, b, E):
    return b.initial_state().transduce([dy.lookup_batch(E, ids) for ids in BATCH])


def _hidden(dy, E, k):
    """A vector of the builders' hidden size (4) that depends on the table."""
    return dy.tanh(dy.pick_range(dy.concatenate([E[k % 8], E[(k + 3) % 8]]), 1, 5))


def _initial(dy, b, E, layers, cells):
    """From an initial state given as vectors (cells then outputs for LSTMs)."""
    n = (2 if cells else 1) * layers
    vecs = [_hidden(dy, E, k) for k in range(n)]
    return b.initial_state(vecs).transduce([E[w] for w in SENTENCE[:2]])


def _set_state(dy, b, E, layers, cells):
    """set_h then set_s in the middle of a sequence."""
    state = b.initial_state().add_input(E[1])
    hs = [_hidden(dy, E, k) * 0.3 for k in range(layers)]
    state = state.set_h(hs).add_input(E[2])
    s = [_hidden(dy, E, k + 4) for k in range((2 if cells else 1) * layers)]
    state = state.set_s(s).add_input(E[3])
    return [state.output()] + list(state.s())


def builder_cases(dy_kinds) -> dict:
    """name -> (make, build) for every builder kind: ``dy_kinds`` maps a kind's name to
    ``(factory name, layers, has cells)``."""
    cases = {}
    for kind, (factory, layers, cells) in dy_kinds.items():
        def make(dy, pc, factory=factory, layers=layers):
            return getattr(dy, factory)(layers, 3, 4, pc)
        cases[f"{kind} transduce"] = (make, _transduce)
        cases[f"{kind} add_input, h, s, prev"] = (make, _steps)
        cases[f"{kind} minibatch"] = (make, _batched)
        cases[f"{kind} initial_state(vecs)"] = (
            make, lambda dy, b, E, layers=layers, cells=cells: _initial(dy, b, E, layers, cells))
        cases[f"{kind} set_h, set_s"] = (
            make, lambda dy, b, E, layers=layers, cells=cells: _set_state(dy, b, E, layers, cells))
    return cases


BUILDER_CASES = builder_cases({
    "VanillaLSTM": ("VanillaLSTMBuilder", 1, True),
    "VanillaLSTM 2 layers": ("VanillaLSTMBuilder", 2, True),
    "LSTMBuilder": ("LSTMBuilder", 1, True),
    "CompactVanillaLSTM 2 layers": ("CompactVanillaLSTMBuilder", 2, True),
    "CoupledLSTM 2 layers": ("CoupledLSTMBuilder", 2, True),
    "FastLSTM": ("FastLSTMBuilder", 1, True),
    "FastLSTM 2 layers": ("FastLSTMBuilder", 2, True),
    "SimpleRNN 2 layers": ("SimpleRNNBuilder", 2, False),
    "GRU 2 layers": ("GRUBuilder", 2, False),
    "SparseLSTM 2 layers": ("SparseLSTMBuilder", 2, True),
})
BUILDER_CASES["VanillaLSTM forget_bias=0.3"] = (
    lambda dy, pc: dy.VanillaLSTMBuilder(1, 3, 4, pc, forget_bias=0.3), _transduce)
BUILDER_CASES["BiRNN of VanillaLSTMs, 2 layers"] = (
    lambda dy, pc: dy.BiRNNBuilder(2, 3, 6, pc, dy.VanillaLSTMBuilder),
    lambda dy, b, E: b.transduce([E[w] for w in SENTENCE]))
def _columns(dy, b, E):
    """Inputs that are ``(3, 1)`` columns, a matrix times a column (an attention's context):
    DyNet's builders take them as the vectors they hold."""
    M = dy.transpose(dy.concatenate_cols([E[w] for w in SENTENCE]))   # (4, 3)
    column = dy.reshape(dy.pick_range(E[5], 0, 1), (1, 1))
    weights = dy.concatenate([column, column, column, column])          # (4, 1)
    state = b.initial_state().add_input(dy.transpose(M) * weights)
    return [state.output()] + b.initial_state().transduce([dy.transpose(M) * weights])


BUILDER_CASES["VanillaLSTM ln_lstm, 2 layers"] = (
    lambda dy, pc: dy.VanillaLSTMBuilder(2, 3, 4, pc, True), _transduce)
BUILDER_CASES["VanillaLSTM ln_lstm, steps"] = (
    lambda dy, pc: dy.VanillaLSTMBuilder(1, 3, 4, pc, ln_lstm=True, forget_bias=0.5), _steps)
BUILDER_CASES["VanillaLSTM ln_lstm, minibatch"] = (
    lambda dy, pc: dy.VanillaLSTMBuilder(1, 3, 4, pc, ln_lstm=True), _batched)
BUILDER_CASES["VanillaLSTM, column inputs"] = (
    lambda dy, pc: dy.VanillaLSTMBuilder(1, 3, 4, pc), _columns)
BUILDER_CASES["GRU, column inputs"] = (lambda dy, pc: dy.GRUBuilder(1, 3, 4, pc), _columns)
def _pruned(build):
    """``build`` after the builder prunes 40% of its weights (the masks set again)."""
    def pruned(dy, b, E):
        b.set_sparsity(0.4)
        return build(dy, b, E)
    return pruned


# run_builder sets a sparse LSTM's masks (get_parameters()[l][3:]) to values of its own:
# the steps read W * M, whatever M holds; set_sparsity makes them 0/1 again
BUILDER_CASES["SparseLSTM set_sparsity, 2 layers"] = (
    lambda dy, pc: dy.SparseLSTMBuilder(2, 3, 4, pc), _pruned(_transduce))
BUILDER_CASES["SparseLSTM set_sparsity, minibatch"] = (
    lambda dy, pc: dy.SparseLSTMBuilder(1, 3, 4, pc, forget_bias=0.3), _pruned(_batched))
BUILDER_CASES["SparseLSTM ln_lstm, 2 layers"] = (
    lambda dy, pc: dy.SparseLSTMBuilder(2, 3, 4, pc, True), _pruned(_transduce))
BUILDER_CASES["SparseLSTM ln_lstm, steps"] = (
    lambda dy, pc: dy.SparseLSTMBuilder(1, 3, 4, pc, ln_lstm=True, forget_bias=0.5), _steps)


def _expressions_then_transduce(dy, b, E):
    """The masked matrices and biases DyNet's ``get_parameter_expressions`` gives, and a
    sequence whose gradients reach them through the steps."""
    outputs = b.initial_state().transduce([E[w] for w in SENTENCE])
    return [e for layer in b.get_parameter_expressions() for e in layer] + outputs


BUILDER_CASES["SparseLSTM get_parameter_expressions"] = (
    lambda dy, pc: dy.SparseLSTMBuilder(2, 3, 4, pc), _expressions_then_transduce)


class _Stack:
    """Two builders stacked by hand (DyNet's ``StackedRNNState``); ``builder_layers`` lists
    their parameters for run_builder as a BiRNN's."""

    def __init__(self, dy, pc):
        self.lower, self.upper = dy.VanillaLSTMBuilder(1, 3, 4, pc), dy.GRUBuilder(2, 4, 3, pc)
        self.builder_layers = [(self.lower, self.upper)]


class StackedByHand:
    """What DyNet's ``StackedRNNState`` computes (its ``_dynet.pyx``), written with its
    builders' states: DyNet 2.1's own cannot be made (its constructor assigns to ``prev``,
    which is also the name of a method: AttributeError), so the real DyNet runs this."""

    def __init__(self, states, prev=None):
        self.states, self._prev = list(states), prev

    def add_input(self, x):
        states = []
        for state in self.states:
            states.append(state.add_input(x))
            x = states[-1].output()
        return StackedByHand(states, self)

    def add_inputs(self, xs):
        stacks = [self.add_input(xs[0])]
        for x in xs[1:]:
            stacks.append(stacks[-1].add_input(x))
        return stacks

    def output(self):
        return self.states[-1].output()

    def prev(self):
        return self._prev

    def h(self):
        return [state.h() for state in self.states]

    def s(self):
        return [state.s() for state in self.states]


def _stacked(dy, stack, E):
    made = StackedByHand if dy.__name__ == "dynet" else dy.StackedRNNState
    start = made([stack.lower.initial_state(), stack.upper.initial_state()])
    states = start.add_inputs([E[w] for w in SENTENCE])
    last = states[-1].add_input(E[0])
    return ([s.output() for s in states] + [last.prev().output(), last.output()]
            + [e for layer in last.h() for e in layer] + [e for layer in last.s() for e in layer])


BUILDER_CASES["StackedRNNState of an LSTM and a GRU"] = (_Stack, _stacked)


BUILDER_CASES["BiRNN of GRUs, add_inputs"] = (
    lambda dy, pc: dy.BiRNNBuilder(1, 3, 4, pc, dy.GRUBuilder),
    lambda dy, b, E: [s.output() for pair in b.add_inputs([E[w] for w in SENTENCE]) for s in pair])


# --- softmax layers -----------------------------------------------------------------------
#: a cluster file of DyNet's format (``CLASS WORD [FREQ]``, spaces or tabs): clusters of
#: three, two and one word, a frequency field, and the word id 5 in no cluster
CLUSTERS = "a w0\nb w1\na w2 17\n  c\tw3\nb w4\na w6\n"
WORD_IDS = {f"w{i}": i for i in range(7)}


def _standard(bias=True):
    return lambda dy, pc, clusters: dy.StandardSoftmaxBuilder(3, 5, pc, bias)


def _factored(bias=True):
    return lambda dy, pc, clusters: dy.ClassFactoredSoftmaxBuilder(3, clusters, WORD_IDS, pc,
                                                                   bias)


def _losses(words, update=True):
    """One loss per (position, word) of ``SENTENCE`` and ``words``."""
    return lambda dy, sm, E: [sm.neg_log_softmax(dy.tanh(E[x]), w, update=update)
                              for x, w in zip(SENTENCE, words)]


def _batch_losses(words):
    return lambda dy, sm, E: [sm.neg_log_softmax_batch(dy.lookup_batch(E, SENTENCE), words)]


def _distributions(dy, sm, E):
    rep = dy.tanh(E[3])
    return [sm.full_logits(rep), sm.full_log_distribution(rep)]


def _class_parts(dy, sm, E):
    rep, reps = dy.tanh(E[6]), dy.lookup_batch(E, [1, 2])
    return [sm.class_logits(rep), sm.class_log_distribution(reps), sm.subclass_logits(rep, 0),
            sm.subclass_log_distribution(rep, 1), sm.subclass_log_distribution(reps, 0)]


#: name -> (make(dy, pc, cluster file), build(dy, builder, E)): the builder's parameters set
#: to the same values under both modules by run_builder
SOFTMAX_CASES = {
    "Standard neg_log_softmax": (_standard(), _losses([0, 4, 2, 4])),
    "Standard no bias": (_standard(False), _losses([1, 3, 0, 2])),
    "Standard update=False": (_standard(), _losses([0, 4, 2, 4], update=False)),
    "Standard neg_log_softmax_batch": (_standard(), _batch_losses([3, 0, 4, 1])),
    "Standard full_logits, full_log_distribution": (_standard(), _distributions),
    "Standard full_logits of a minibatch": (
        _standard(), lambda dy, sm, E: [sm.full_log_distribution(dy.lookup_batch(E, [0, 5]))]),
    "ClassFactored neg_log_softmax": (_factored(), _losses([0, 3, 4, 6])),
    "ClassFactored every word": (
        _factored(), lambda dy, sm, E: [sm.neg_log_softmax(dy.tanh(E[w + 1]), w)
                                        for w in (0, 1, 2, 3, 4, 6)]),
    "ClassFactored no bias": (_factored(False), _losses([2, 1, 3, 0])),
    "ClassFactored update=False": (_factored(), _losses([0, 3, 4, 6], update=False)),
    "ClassFactored neg_log_softmax_batch": (_factored(), _batch_losses([6, 3, 1, 0])),
    "ClassFactored class and subclass distributions": (_factored(), _class_parts),
}


# --- trainers ------------------------------------------------------------------------------
#: name -> (trainer class name, keyword arguments, settings applied after construction)
TRAINER_CASES = {
    "SimpleSGD": ("SimpleSGDTrainer", {}, {}),
    "SimpleSGD lr": ("SimpleSGDTrainer", {"learning_rate": 0.05}, {}),
    "MomentumSGD": ("MomentumSGDTrainer", {}, {}),
    "MomentumSGD args": ("MomentumSGDTrainer", {"learning_rate": 0.1, "mom": 0.5}, {}),
    "Adagrad": ("AdagradTrainer", {}, {}),
    "Adadelta": ("AdadeltaTrainer", {}, {}),
    "Adadelta args": ("AdadeltaTrainer", {"eps": 1e-4, "rho": 0.9}, {}),
    "RMSProp": ("RMSPropTrainer", {}, {}),
    "Adam": ("AdamTrainer", {}, {}),
    "Adam args": ("AdamTrainer", {"alpha": 0.01, "beta_1": 0.8, "beta_2": 0.99, "eps": 1e-6}, {}),
    "Adam, no clipping": ("AdamTrainer", {}, {"clip": -1.0}),
    "Adam, dense table updates": ("AdamTrainer", {}, {"sparse": False}),
    "SGD, clipping at 0.5": ("SimpleSGDTrainer", {}, {"clip": 0.5}),
    "Momentum, learning_rate set": ("MomentumSGDTrainer", {}, {"learning_rate": 0.2}),
    "Adam, restart": ("AdamTrainer", {}, {"restart": 0.02}),
    "Amsgrad": ("AmsgradTrainer", {}, {}),
    "Amsgrad args": ("AmsgradTrainer", {"alpha": 0.01, "beta_1": 0.8, "beta_2": 0.99}, {}),
    # a triangle of 2 steps: the rate goes up and down within the updates run here
    "CyclicalSGD": ("CyclicalSGDTrainer", {"learning_rate_min": 0.01, "learning_rate_max": 0.2,
                                           "step_size": 2, "gamma": 0.9}, {}),
    "SGD, frozen W": ("SimpleSGDTrainer", {}, {"frozen": True}),
}

TRAIN_DATA = [([1, 4, 2], [0, 2, 1]), ([3, 3], [1, 1]), ([5, 0, 1, 2], [2, 0, 0, 1])]


def run_trainer(dy, case, renew=None) -> list:
    """The parameters' values after each of three updates of a small tagger."""
    cls, kwargs, settings = TRAINER_CASES[case]
    pc = dy.ParameterCollection()
    E, W, b = make_parameters(dy, pc, [("lookup", (6, 4)), (3, 4), (3,)])
    trainer = getattr(dy, cls)(pc, **kwargs)
    if "clip" in settings:
        trainer.set_clip_threshold(settings["clip"])
    if "sparse" in settings:
        trainer.set_sparse_updates(settings["sparse"])
    if "learning_rate" in settings:
        trainer.learning_rate = settings["learning_rate"]
    if settings.get("frozen"):
        W.set_updated(False)
    snapshots = []
    for step, (words, tags) in enumerate(TRAIN_DATA):
        (renew or dy.renew_cg)()
        loss = dy.esum([dy.pickneglogsoftmax(W * dy.tanh(E[w]) + b, t) * 3.0
                        for w, t in zip(words, tags)])
        loss.value()
        loss.backward()
        trainer.update()
        if step == 1 and "restart" in settings:
            trainer.restart(settings["restart"])
        snapshots.append([E.as_array(), W.as_array(), b.as_array()])
    return snapshots


#: name -> (EGTrainer's keyword arguments, loss scale, freeze p): DyNet 2.1's EGTrainer has no
#: Python class; tests/test_dynet_conformance.py runs its C++ rule through ctypes. A scale
#: of 30 makes the gradient's norm exceed 5, so both clip
EG_CASES = {
    "EG": ({}, 3.0, False),
    "EG args, clipped": ({"learning_rate": 0.5, "mom": 0.5}, 30.0, False),
    "EG, frozen p": ({"learning_rate": 0.2, "mom": 0.0}, 3.0, True),
}


def distributions(shape, seed: int) -> np.ndarray:
    """Positive values whose last axis sums to 1 (EG's parameters are distributions)."""
    values = np.exp(np.random.default_rng(seed).normal(0.0, 0.5, size=shape))
    return (values / values.sum(axis=-1, keepdims=True)).astype(np.float32)


def run_eg_trainer(dy, make_trainer, case) -> list:
    """The values of a mixture weight vector ``p`` and a table of distributions ``E`` after
    each of three updates by ``make_trainer(pc, **kwargs)`` (an EGTrainer)."""
    kwargs, scale, frozen = EG_CASES[case]
    pc = dy.ParameterCollection()
    p = pc.add_parameters((4,))
    p.set_value(distributions((4,), 1))
    E = pc.add_lookup_parameters((6, 4))
    E.init_from_array(distributions((6, 4), 2))
    trainer = make_trainer(pc, **kwargs)
    if frozen:
        p.set_updated(False)
    snapshots = []
    for words, tags in TRAIN_DATA:
        dy.renew_cg()
        loss = dy.esum([dy.pickneglogsoftmax(dy.cmult(E[w], p) * 8.0, t)
                        for w, t in zip(words, tags)]) * scale
        loss.value()
        loss.backward()
        trainer.update()
        snapshots.append([E.as_array(), p.as_array()])
    return snapshots


# --- checkpoints ---------------------------------------------------------------------------
#: how a program tries nodes out between cg_checkpoint and cg_revert: which values it asks
#: for (none; before the mark; of the nodes tried, which runs the kept nodes with them), and
#: whether it nests a second mark inside the first
CHECKPOINT_CASES = ["never reverted", "nothing computed", "computed before the mark",
                    "computed with the tried nodes", "computed before and after",
                    "nested marks"]


def run_checkpoints(dy, case, renew=None) -> list:
    """A hidden layer, nodes tried out after a mark and reverted, then the loss built from
    the layer: the loss, the layer's value and every parameter's gradient. DyNet 2.1
    reverts correctly when every parameter entered the graph before the mark (one first
    used after it makes DyNet crash after the revert), so all of them are used before."""
    pc = dy.ParameterCollection()
    W, b, V = make_parameters(dy, pc, [(3, 4), (3,), (2, 3)])
    (renew or dy.renew_cg)()
    x = vec(dy, [1.0, -1.0, 0.5, 2.0])
    h = dy.tanh(W * x + b)
    u = V * h
    if case in ("computed before the mark", "computed before and after"):
        h.value()
    if case != "never reverted":
        dy.cg_checkpoint()
        tried = dy.logistic(u) * 3.0 + dy.sum_elems(dy.exp(h))
        if case == "nested marks":
            dy.cg_checkpoint()
            dy.square(tried).value()
            dy.cg_revert()
            tried = tried - 1.0
        if case in ("computed with the tried nodes", "computed before and after", "nested marks"):
            tried.value()
        dy.cg_revert()
    loss = dy.sum_elems(dy.rectify(V * h + 0.1)) + dy.sum_elems(u)
    value = loss.value()
    loss.backward()
    return [value, h.npvalue()] + [p.grad_as_array() for p in (W, b, V)]


# --- tensors and transposed inputs -----------------------------------------------------------
def tensor_facts(dy) -> dict:
    """``tensor_value()`` of a vector, a matrix, a minibatch, a 3-d tensor and a minibatch
    of numbers, and what DyNet's Tensor gives of them. (No two entries are equal: DyNet's
    ``topk`` picks among equal ones in its own way. It gives the ``num`` largest in no set
    order, so they are sorted here, largest first, as batchviz gives them.)"""
    dy.renew_cg()
    tensors = {
        "vector": dy.inputTensor(np.array([0.1, 3.0, -1.0, 2.0])),
        "matrix": dy.inputTensor(np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])),
        "minibatch": dy.inputTensor(np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]]), batched=True),
        "3-d": dy.inputTensor(np.sin(np.arange(24.0)).reshape(2, 3, 4)),
        "numbers": dy.inputTensor(np.array([1.0, 3.0, 2.0]), batched=True),
        "computed": dy.tanh(dy.inputTensor(np.array([[0.3, -1.0], [2.0, 0.5]]))),
    }
    facts = {}
    for name, e in tensors.items():
        t = e.tensor_value()
        n_dims = len(e.dim()[0])
        facts[name] = [str(t), t.as_numpy(), str(t.argmax())]
        for dim in range(n_dims):
            for num in (1, e.dim()[0][dim]):
                values, ids = (a.as_numpy() for a in t.topk(dim, num))
                order = np.argsort(-values, axis=dim)   # (DyNet's come in no set order)
                facts[name] += [np.take_along_axis(values, order, axis=dim),
                                np.take_along_axis(ids, order, axis=dim)]
            facts[name] += [t.argmax(dim).as_numpy(), str(t.topk(dim)[1])]
        facts[name].append(t.argmax(n_dims).as_numpy() if n_dims < 3 else None)
    return facts


#: ``inputTensorTranspose`` arguments: flat values, dim, batch_size
TRANSPOSED_INPUTS = [
    (np.arange(6.0), (2, 3), 1),
    ([float(v) for v in range(1, 13)], (2, 3), 2),
    (np.arange(24.0), (2, 3, 4), 1),
    ([1.0, 2.0, 3.0], (1,), 3),
    ([4.0], None, 1),
    (np.arange(5.0), None, 1),
    (np.arange(8.0), (4,), 2),
]


def transposed_inputs(dy) -> list:
    """Dimensions and values of each ``inputTensorTranspose``, and of a node using it."""
    dy.renew_cg()
    out = []
    for val, dim, bd in TRANSPOSED_INPUTS:
        e = dy.inputTensorTranspose(val) if dim is None and bd == 1 else \
            dy.inputTensorTranspose(val, dim, batch_size=bd)
        out.append((e.dim(), e.npvalue(), dy.sum_elems(dy.square(e)).npvalue()))
    return out
