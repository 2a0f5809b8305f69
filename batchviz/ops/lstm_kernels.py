"""One GPU kernel for all the element-wise work of an ``lstm_step`` batch (CuPy only).

On a GPU every array operation is a kernel launch, and a launch costs the host about the
same whatever the size of the array. Written with array operations, a batch of LSTM steps
does about fifteen of them forward (the bias, three sigmoids, two tanh, the cell, the
output) and twenty backward, each on a few thousand numbers: the GPU would wait for Python
most of the time. Here each direction is one :class:`cupy.ElementwiseKernel`, so a batch of
steps costs its matrix products plus one launch, whatever ``K``.

The kernels are generated for each ``K`` (the number of previous cells: 0 for a Tree-LSTM
leaf, 1 for a sequence LSTM, 2 for a binary Tree-LSTM node) and compiled once; CuPy caches
the compiled code on disk. Their arithmetic is the NumPy path's
(:meth:`batchviz.ops.lstm_steps.LSTMStep.forward`), which the float64 gradient checks and
the CuPy-versus-NumPy tests compare on the GPU. NumPy keeps its own in-place path: on a
CPU, big array operations are what is fast.

Names in the generated code, for each gate ``g`` of ``i, f0, ..., o, u`` (the weights'
block order): ``z_g`` its pre-activation without the bias, ``b_g`` its bias, ``a_g`` the
activated gate; ``c0, c1, ...`` the previous cells; a ``d`` in front names a gradient.
(CuPy reserves ``i``, ``n`` and names that start with ``_``, hence ``z_i``, not ``i``.)
"""
from __future__ import annotations

import functools


def _gate_names(K: int) -> list:
    return ["i"] + [f"f{k}" for k in range(K)] + ["o", "u"]


@functools.lru_cache(maxsize=None)
def forward_kernel(K: int):
    """``(z_*, b_*, c_0..c_{K-1}) -> (a_*, cell, h)``: activations, new cell, output."""
    import cupy

    gates = _gate_names(K)
    ins = [f"T z_{g}" for g in gates] + [f"T b_{g}" for g in gates] + [f"T c{k}" for k in range(K)]
    outs = [f"T a_{g}" for g in gates] + ["T cell", "T h"]
    body = [f"a_{g} = 1 / (1 + exp(-(z_{g} + b_{g})));" for g in gates[:-1]]
    body.append("a_u = tanh(z_u + b_u);")
    body.append("T c = a_i * a_u" + "".join(f" + a_f{k} * c{k}" for k in range(K)) + ";")
    body += ["cell = c;", "h = a_o * tanh(c);"]
    return cupy.ElementwiseKernel(", ".join(ins), ", ".join(outs), "\n".join(body),
                                  f"batchviz_lstm_step_forward_k{K}")


@functools.lru_cache(maxsize=None)
def backward_kernel(K: int):
    """``(dh, dcell, cell, a_*, c_0..) -> (dz_*, dc_0..)``: the gradients of the gates'
    pre-activations and of the previous cells, from those of the output and the cell."""
    import cupy

    gates = _gate_names(K)
    ins = (["T dh", "T dcell", "T cell"] + [f"T a_{g}" for g in gates]
           + [f"T c{k}" for k in range(K)])
    outs = [f"T dz_{g}" for g in gates] + [f"T dc{k}" for k in range(K)]
    body = [
        "T t = tanh(cell);",
        "T dc = dh * a_o * (1 - t * t) + dcell;",          # through h = o tanh(c), plus the next step's
        "dz_i = dc * a_u * a_i * (1 - a_i);",
        "dz_o = dh * t * a_o * (1 - a_o);",
        "dz_u = dc * a_i * (1 - a_u * a_u);",
    ]
    for k in range(K):
        body.append(f"dz_f{k} = dc * c{k} * a_f{k} * (1 - a_f{k});")
        body.append(f"dc{k} = dc * a_f{k};")
    return cupy.ElementwiseKernel(", ".join(ins), ", ".join(outs), "\n".join(body),
                                  f"batchviz_lstm_step_backward_k{K}")


def step_forward(pre, bias_blocks, cells, out) -> None:
    """Fill ``out`` (``[h, c, i, f_1..f_K, o, u]``, block by block) from the products ``pre``
    (``(n, blocks, hidden) + columns``, bias not yet added), the bias of each gate block
    (broadcastable to a block) and the previous cells."""
    blocks = out.shape[0] - 2
    forward_kernel(len(cells))(*[pre[:, k] for k in range(blocks)], *bias_blocks, *cells,
                               *out[2:], out[1], out[0])


def step_backward(xp, g, out, cells):
    """The gradients of the pre-activations, block by block like the gates, and of the
    previous cells, from ``g`` (the gradient of ``h`` in block 0, of the cell in block 1)."""
    d = xp.empty(out[2:].shape, dtype=g.dtype)
    d_cells = [xp.empty(out[1].shape, dtype=g.dtype) for _ in cells]
    backward_kernel(len(cells))(g[0], g[1], out[1], *out[2:], *cells, *d, *d_cells)
    return d, d_cells
