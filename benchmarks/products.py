"""Which way round a batch's matrix product is fastest on this machine's BLAS.

Every LSTM step, output layer and Tree-LSTM node of a batch multiplies a shared ``W`` by
the batch's ``n`` input vectors. Written as rows, ``x W^T`` gives one row per node; written
as columns, ``(W x^T)^T`` gives the same numbers a column per node, read through a
transposed view; written as one matrix-vector product per vector (a stack of them, one
NumPy call), ``W`` is not copied into the BLAS's packed layout first. The BLAS sees three
different calls: on OpenBLAS 0.3.31 the per-vector form is about twice as fast as either
matrix product for 2-6 vectors at a Tree-LSTM's shapes (``linalg.per_vector``), the columns
form is 1.3-2x faster than rows for batches of 8 at an LSTM's shapes, within the machine's
noise up to 512, and slower for a ``W`` of few rows (an output layer);
``batchviz.ops.linalg.columns_first`` decides between those two. Another BLAS may draw the
lines elsewhere: this benchmark shows where, at the shapes of the benchmark models, each
ratio measured side by side.
"""
from __future__ import annotations

import numpy as np

from batchviz.ops import linalg

from .common import best_of, format_table, machine_info

#: ``(name, rows of W, columns of W)``: the products of the benchmark models' batches
SHAPES = [
    ("LSTM step, 256 units (4 gates x 256, input 256)", 1024, 256),
    ("char LSTM step, 128 units (4 x 128, input 64)", 512, 64),
    ("parser LSTM step, 200 units (4 x 200, input 200)", 800, 200),
    ("Tree-LSTM node (5 x 256, one child's h)", 1280, 256),
    ("output layer, 9 tags (input 512)", 9, 512),
]
SIZES = [1, 2, 3, 4, 6, 8, 16, 32, 64, 128, 256, 512, 1024]
QUICK_SHAPES = SHAPES[:1]
QUICK_SIZES = [1, 3, 8, 64]


FORMS = {"rows": lambda W, x: x @ W.T, "columns": lambda W, x: (W @ x.T).T,
         "vectors": lambda W, x: np.matmul(W, x[:, :, None])[:, :, 0]}


def time_product(W: np.ndarray, x: np.ndarray, form: str, seconds: float) -> float:
    """Best time of one product written in ``form`` (of :data:`FORMS`), in seconds, over
    windows of about ``seconds / 5``."""
    product = lambda: FORMS[form](W, x)  # noqa: E731
    once, _ = best_of(product, repeat=1)
    reps = max(1, int(seconds / 5 / max(once, 1e-7)))
    best, _ = best_of(lambda: [product() for _ in range(reps)], repeat=5)
    return best / reps


def run(quick: bool = False) -> dict:
    """Time both forms for every shape and batch size; print the table, return the JSON
    payload. (NumPy's BLAS only: on CuPy, batchviz always computes rows.)"""
    shapes, sizes = (QUICK_SHAPES, QUICK_SIZES) if quick else (SHAPES, SIZES)
    seconds = 0.005 if quick else 0.1
    rng = np.random.default_rng(0)
    results, rows = [], []
    for name, r, k in shapes:
        W = rng.standard_normal((r, k)).astype(np.float32)
        for n in sizes:
            x = rng.standard_normal((n, k)).astype(np.float32)
            as_rows, as_columns, as_vectors = (time_product(W, x, form, seconds)
                                               for form in ("rows", "columns", "vectors"))
            used = ("vectors" if linalg.per_vector(np, n)
                    else "columns" if linalg.columns_first(r, n) else "rows")
            results.append({"shape": name, "W": [r, k], "n": n, "rows_s": as_rows,
                            "columns_s": as_columns, "vectors_s": as_vectors,
                            "batchviz_uses": used})
            rows.append([name if n == sizes[0] else "",  # the shape's name once
                         n, as_rows * 1e6, as_columns * 1e6, as_vectors * 1e6,
                         as_rows / as_columns, used])
    print(format_table(
        ["product W x for n vectors", "n", "x W^T us", "(W x^T)^T us", "per vector us",
         "rows/columns", "batchviz uses"],
        rows, title=f"A shared W times a batch of n vectors, float32, best of 5 windows "
                    f"(batchviz computes columns up to n = {linalg.TRANSPOSED_UP_TO} for a W "
                    f"of {linalg.TRANSPOSED_MIN_ROWS} rows or more, and one product per vector "
                    f"for 2 to {linalg.PER_VECTOR_UP_TO} vectors)"))
    print("rows/columns above 1: the columns form is faster")
    return {"task": "products", "quick": quick, "machine": machine_info(),
            "transposed_up_to": linalg.TRANSPOSED_UP_TO,
            "transposed_min_rows": linalg.TRANSPOSED_MIN_ROWS,
            "per_vector_up_to": linalg.PER_VECTOR_UP_TO, "results": results}
