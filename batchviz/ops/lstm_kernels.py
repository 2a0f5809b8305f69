"""One GPU kernel for all the element-wise work of an ``lstm_step`` batch (CuPy only).

On a GPU every array operation is a kernel launch, and a launch costs the host about the
same whatever the size of the array. Written with array operations, a batch of LSTM steps
does about fifteen of them forward (the bias, three sigmoids, two tanh, the cell, the
output) and twenty backward, each on a few thousand numbers: the GPU would wait for Python
most of the time. Here each direction is one :class:`cupy.ElementwiseKernel`, so a batch of
steps costs its matrix products plus one launch, whatever ``K``.

The kernels are generated for each ``K`` (the number of previous cells: 0 for a Tree-LSTM
leaf, 1 for a sequence LSTM, 2 for a binary Tree-LSTM node), forward also for each layout
of the bias (:data:`BIAS_LAYOUTS`), and compiled once; CuPy caches the compiled code on
disk. Their arithmetic is the NumPy path's
(:meth:`batchviz.ops.lstm_steps.LSTMStep.forward`), which the float64 gradient checks and
the CuPy-versus-NumPy tests compare on the GPU. NumPy keeps its own in-place path: on a
CPU, big array operations are what is fast.

How the kernels read and write: every array is a ``raw`` argument, indexed by hand from
the element ``i`` of the step's block (node ``j``, then hidden unit, then column: one of
``span = n * hid * cols`` elements). Each view made and each array argument of an
``ElementwiseKernel`` call costs the host microseconds, and the GPU waits for the host:
whole arrays, indexed by hand, cost the host much less per step batch than a view per gate
block, per bias block and per output block (fifteen arrays for a sequence step) would
(``docs/benchmarks.md``, "On the GPU"). CuPy reads a raw array at its
logical (C-order) index whatever its strides, so a bias or a previous cell that is a
strided view of an earlier batch is read where it lies.

Names in the generated code, for each gate ``g`` of ``i, f0, ..., o, u`` (the weights'
block order): ``z_g`` its pre-activation without the bias, ``b_g`` its bias, ``a_g`` the
activated gate; ``c0, c1, ...`` the previous cells (read from the arrays ``prev0, ...``);
``c`` the new cell and ``hidden`` the output; a ``d`` in front names a gradient.
(CuPy reserves ``i``, ``n`` and names that start with ``_``, hence ``z_i``, not ``i``.)
The index arithmetic is declared ``ptrdiff_t``; everything else is plain arithmetic with
``exp`` and ``tanh``, which the test suite also runs as Python on a machine without a GPU.
"""
from __future__ import annotations

import functools
import math

#: how the gates' bias is laid out, by its number of dimensions: shared by the batch
#: ``(B hid,)``; one per node ``(n, B hid)``; one per node and column ``(n, B hid, cols)``
#: (an input projection of matrix inputs)
BIAS_LAYOUTS = {1: "shared", 2: "per node", 3: "per node and column"}


def _gate_names(K: int) -> list:
    return ["i"] + [f"f{k}" for k in range(K)] + ["o", "u"]


def _element_lines(B: int) -> list:
    """Where element ``i`` of a step's block sits: node ``j``, offset ``hm`` within the
    node's ``hid * cols`` values, hidden unit ``unit``, and ``at``, its gate 0 in the
    pre-activations' rows ``(n, B, hid, cols)``."""
    return ["ptrdiff_t HM = hid * cols;",
            "ptrdiff_t j = i / HM;",
            "ptrdiff_t hm = i % HM;",
            "ptrdiff_t unit = hm / cols;",
            f"ptrdiff_t at = j * {B} * HM + hm;"]


def _bias_index(layout: str, B: int, k: int) -> str:
    """The index of gate block ``k``'s bias for element ``i`` (see :data:`BIAS_LAYOUTS`)."""
    if layout == "shared":
        return f"{k} * hid + unit"
    if layout == "per node":
        return f"j * {B} * hid + {k} * hid + unit"
    return f"at + {k} * HM"


@functools.lru_cache(maxsize=None)
def forward_kernel(K: int, bias_layout: str):
    """``(pre, bias, prev_0..prev_{K-1}) -> steps``: from the products ``pre`` (rows
    ``(n, B hid) + columns``, bias not added) fill the batch's output ``steps``, block by
    block ``[h, c, i, f_0.., o, u]``."""
    import cupy

    gates = _gate_names(K)
    B = len(gates)
    ins = (["raw T pre", "raw T bias"] + [f"raw T prev{k}" for k in range(K)]
           + ["int64 hid", "int64 cols", "int64 span"])
    body = _element_lines(B)
    body += [f"T z_{g} = pre[at + {k} * HM];" for k, g in enumerate(gates)]
    body += [f"T b_{g} = bias[{_bias_index(bias_layout, B, k)}];" for k, g in enumerate(gates)]
    body += [f"T c{k} = prev{k}[i];" for k in range(K)]
    body += [f"T a_{g} = 1 / (1 + exp(-(z_{g} + b_{g})));" for g in gates[:-1]]
    body.append("T a_u = tanh(z_u + b_u);")
    body.append("T c = a_i * a_u" + "".join(f" + a_f{k} * c{k}" for k in range(K)) + ";")
    body.append("T hidden = a_o * tanh(c);")
    body += ["steps[i] = hidden;", "steps[span + i] = c;"]
    body += [f"steps[{2 + k} * span + i] = a_{g};" for k, g in enumerate(gates)]
    layout = bias_layout.replace(" ", "_")
    return cupy.ElementwiseKernel(", ".join(ins), "raw T steps", "\n".join(body),
                                  f"batchviz_lstm_step_forward_k{K}_{layout}")


@functools.lru_cache(maxsize=None)
def backward_kernel(K: int):
    """``(g, steps, prev_0..) -> (d, dprev_0..)``: from the gradient ``g`` of a batch's
    output (``h`` in block 0, the cell in block 1) and the output ``steps`` itself, the
    gradients of the gates' pre-activations ``d``, in the rows ``(n, B hid) + columns``
    that the products' gradients read, and of the previous cells."""
    import cupy

    gates = _gate_names(K)
    B = len(gates)
    ins = (["raw T g", "raw T steps"] + [f"raw T prev{k}" for k in range(K)]
           + ["int64 hid", "int64 cols", "int64 span"])
    outs = ["raw T d"] + [f"raw T dprev{k}" for k in range(K)]
    body = _element_lines(B)
    body += ["T dh = g[i];", "T dcell = g[span + i];", "T cell = steps[span + i];"]
    body += [f"T a_{g} = steps[{2 + k} * span + i];" for k, g in enumerate(gates)]
    body += [f"T c{k} = prev{k}[i];" for k in range(K)]
    body += [
        "T t = tanh(cell);",
        "T dc = dh * a_o * (1 - t * t) + dcell;",      # through h = o tanh(c), plus the next step's
        "T dz_i = dc * a_u * a_i * (1 - a_i);",
        "T dz_o = dh * t * a_o * (1 - a_o);",
        "T dz_u = dc * a_i * (1 - a_u * a_u);",
    ]
    body += [f"T dz_f{k} = dc * c{k} * a_f{k} * (1 - a_f{k});" for k in range(K)]
    body += [f"d[at + {k} * HM] = dz_{g};" for k, g in enumerate(gates)]
    body += [f"dprev{k}[i] = dc * a_f{k};" for k in range(K)]
    return cupy.ElementwiseKernel(", ".join(ins), ", ".join(outs), "\n".join(body),
                                  f"batchviz_lstm_step_backward_k{K}")


def step_forward(pre, bias, cells, out, hidden: int) -> None:
    """Fill ``out`` (``[h, c, i, f_1..f_K, o, u]``, block by block, contiguous) from the
    products ``pre`` (rows ``(n, (K + 3) hidden) + columns``, bias not yet added), the
    gates' bias (see :data:`BIAS_LAYOUTS`) and the previous cells, in one launch."""
    n = out.shape[1]
    cols = math.prod(out.shape[3:])
    forward_kernel(len(cells), BIAS_LAYOUTS[bias.ndim])(
        pre, bias, *cells, hidden, cols, n * hidden * cols, out, size=n * hidden * cols)


def step_backward(xp, g, out, cells, hidden: int):
    """``(d, d_cells)``: the gradients of the gates' pre-activations, as rows ``(n,
    (K + 3) hidden) + columns``, and of the previous cells, from ``g`` (the gradient of
    ``h`` in block 0, of the cell in block 1) and the batch's output ``out``."""
    blocks, n = out.shape[0] - 2, out.shape[1]
    columns = out.shape[3:]
    cols = math.prod(columns)
    d = xp.empty((n, blocks * hidden) + columns, dtype=g.dtype)
    d_cells = [xp.empty(out.shape[1:], dtype=g.dtype) for _ in cells]
    backward_kernel(len(cells))(g, out, *cells, hidden, cols, n * hidden * cols, d, *d_cells,
                                size=n * hidden * cols)
    return d, d_cells
