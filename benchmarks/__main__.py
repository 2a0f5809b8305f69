"""``python -m benchmarks TASK [--quick] [--json PATH] [--repeat N] [--backend cupy]``.

Every task takes ``--quick`` (small sizes, the same code path: the CI smoke test),
``--json PATH`` (a machine-readable copy of the results) and ``--repeat N`` (timed rounds
per mode, the fastest counts; 3 by default, as in the paper)."""
from __future__ import annotations

import argparse
import importlib
import sys

#: task name -> module in this package; each module has ``run(quick: bool) -> dict`` that
#: prints its tables and returns the JSON payload.
TASKS = {
    "overhead": "overhead",
    "synthetic": "synthetic",
    "bilstm": "bilstm",
    "bilstm-char": "bilstm_char",
    "treelstm": "treelstm",
    "parser": "parser",
    "report": "report",
}

ALL = [name for name in TASKS if name not in ("overhead", "report")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=sorted(TASKS) + ["all"])
    parser.add_argument("--quick", action="store_true", help="small sizes, same code path (CI)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--repeat", type=int, default=3, metavar="N",
                        help="timed rounds per mode; the fastest counts (default 3, as the "
                             "paper; more rounds steady the minimum on a busy machine)")
    parser.add_argument("--backend", choices=("numpy", "cupy"),
                        help="run on this backend (default: BATCHVIZ_BACKEND, else numpy); "
                             "CuPy results are saved under results/gpu/")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.backend:
        import batchviz as bv

        try:
            bv.set_backend(args.backend)
        except bv.BackendError as exc:
            parser.error(str(exc))

    from . import harness
    from .common import write_json

    harness.ROUNDS = args.repeat

    names = ALL if args.task == "all" else [args.task]
    payloads = {}
    for name in names:
        module = importlib.import_module(f"benchmarks.{TASKS[name]}")
        payloads[name] = module.run(quick=args.quick)
    if args.task == "all":  # gather the saved results into a table and a plot
        importlib.import_module("benchmarks.report").run(quick=args.quick)
    if args.json:
        payload = payloads[names[0]] if len(names) == 1 else {"task": "all", "tasks": payloads}
        print(f"wrote {write_json(args.json, payload)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
