"""``python -m benchmarks TASK [--quick] [--json PATH] [--repeat N] [--modes M,...]
[--backend cupy] [--rev REV] [--tasks T,...]``.

Every task takes ``--quick`` (small sizes, the same code path: the CI smoke test),
``--json PATH`` (a machine-readable copy of the results), ``--repeat N`` (timed rounds
per mode, the fastest counts; 3 by default, as in the paper) and ``--modes`` (time only
these modes, e.g. ``depth,agenda``: many rounds of a close comparison without paying for
``none``; such a partial run leaves ``results/`` as it was). ``against --rev REV``
times this checkout's agenda step against commit ``REV``'s, alternating, ``--repeat``
rounds, on every task of :mod:`benchmarks.against` or the ``--tasks`` named."""
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
    "products": "products",
    "hosttime": "hosttime",
    "against": "against",
    "dynet": "dynet_compare",
    "floor": "floor",
    "construction": "construction",
}

#: tasks that are not training runs: no modes, and not part of ``all``
NOT_TRAINING = ("overhead", "report", "products", "hosttime", "against", "dynet", "floor",
                "construction")
ALL = [name for name in TASKS if name not in NOT_TRAINING]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=sorted(TASKS) + ["all"])
    parser.add_argument("--quick", action="store_true", help="small sizes, same code path (CI)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON")
    parser.add_argument("--repeat", type=int, default=3, metavar="N",
                        help="timed rounds per mode; the fastest counts (default 3, as the "
                             "paper; more rounds steady the minimum on a busy machine)")
    parser.add_argument("--modes", metavar="M,...",
                        help="time only these modes, comma-separated (e.g. depth,agenda); "
                             "results/ is not updated by such a partial run")
    parser.add_argument("--rev", default="HEAD",
                        help="against: the commit to time this checkout against (default HEAD)")
    parser.add_argument("--tasks", metavar="T,...",
                        help="against: time only these of its tasks, comma-separated (e.g. "
                             "dynet_treelstm,dynet_bilstm_tagger); dynet: only these rows "
                             "(e.g. treelstm_per_tree,treelstm_50)")
    parser.add_argument("--threads", type=int, default=1, metavar="N",
                        help="dynet: threads for NumPy's BLAS and for DyNet (default 1)")
    parser.add_argument("--busy", action="store_true",
                        help="dynet: run a process that keeps one core busy beside the timed "
                             "programs (a shared machine)")
    parser.add_argument("--backend", choices=("numpy", "cupy"),
                        help="run on this backend (default: BATCHVIZ_BACKEND, else numpy); "
                             "CuPy results are saved under results/gpu/")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    if (args.busy or args.threads != 1) and args.task != "dynet":
        parser.error("--threads and --busy are options of `dynet` only")
    against_tasks = None
    if args.tasks:
        if args.task not in ("against", "dynet"):
            parser.error("--tasks is an option of `against` and `dynet` only")
        if args.task == "against":
            from .against import TASKS as AGAINST_TASKS
        else:
            from .dynet_compare import FULL as AGAINST_TASKS
        against_tasks = tuple(t.strip() for t in args.tasks.split(",") if t.strip())
        unknown = [t for t in against_tasks if t not in AGAINST_TASKS]
        if unknown or not against_tasks:
            parser.error(f"--tasks: unknown {unknown or args.tasks!r}; {args.task}'s tasks are "
                         f"{', '.join(AGAINST_TASKS)}")
    from . import harness
    from .common import write_json

    modes = None
    if args.modes is not None:
        modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
        unknown = [m for m in modes if m not in harness.MODE_NAMES]
        if args.task in NOT_TRAINING:
            parser.error(f"--modes applies to the training tasks ({', '.join(ALL)}), "
                         f"not to {args.task}")
        if unknown or not modes:
            parser.error(f"--modes: unknown mode {', '.join(map(repr, unknown)) or '(none given)'}; "
                         f"the modes are {', '.join(harness.MODE_NAMES)}")
    if args.backend:
        import batchviz as bv

        try:
            bv.set_backend(args.backend)
        except bv.BackendError as exc:
            parser.error(str(exc))

    harness.ROUNDS = args.repeat
    harness.MODES = modes

    names = ALL if args.task == "all" else [args.task]
    payloads = {}
    try:
        for name in names:
            module = importlib.import_module(f"benchmarks.{TASKS[name]}")
            try:
                if name == "against":
                    payloads[name] = module.run(quick=args.quick, rev=args.rev, rounds=args.repeat,
                                                tasks=against_tasks or module.TASKS)
                    continue
                if name == "dynet":
                    payloads[name] = module.run(quick=args.quick, rows=against_tasks,
                                                threads=args.threads, busy=args.busy)
                    continue
                if name in ("floor", "construction"):
                    payloads[name] = module.run(quick=args.quick, rounds=args.repeat)
                    continue
                payloads[name] = module.run(quick=args.quick)
            except harness.NoSuchModes as exc:
                if args.task != "all":
                    parser.error(f"--modes: {exc}")
                print(f"{name}: skipped, {exc}")
    finally:
        harness.MODES = None
    if args.task == "all" and modes is None:  # gather the saved results into a table and a plot
        importlib.import_module("benchmarks.report").run(quick=args.quick)
    if args.json:
        payload = payloads[names[0]] if len(names) == 1 else {"task": "all", "tasks": payloads}
        print(f"wrote {write_json(args.json, payload)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
