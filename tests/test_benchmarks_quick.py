"""Every benchmark task runs with --quick (small sizes, the same code path) and writes the
JSON the docs and the report read."""
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.__main__ import TASKS, main  # noqa: E402
from batchviz.words import bytes_text  # noqa: E402

TRAINING_TASKS = ("synthetic", "bilstm", "bilstm-char", "treelstm", "parser")


def test_every_task_is_registered():
    assert set(TRAINING_TASKS) | {"report"} <= set(TASKS)


@pytest.mark.parametrize("task", TRAINING_TASKS)
def test_quick_run_writes_the_results_json(task, tmp_path, capsys):
    out = tmp_path / f"{task}.json"
    assert main([task, "--quick", "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert payload["task"] == task and payload["rounds"] == 1
    assert payload["machine"]["gemm_flops_per_s"] > 0
    modes = payload["results"]
    expected = {"none", "depth", "agenda", "lookahead", "layout"}
    if task == "synthetic":
        expected |= {"manual+none", "manual+depth", "manual+agenda"}
    assert set(modes) == expected
    on_cpu = payload["machine"].get("backend", "numpy") == "numpy"
    for mode, r in modes.items():
        assert r["sentences_per_s"] > 0
        # the naive modes share their graphs, and so do the manually batched ones
        bound = modes["manual+none" if mode.startswith("manual+") else "none"]["lower_bound"]
        assert r["lower_bound"] == bound <= r["batches_per_minibatch"]
        assert r["bytes_copied"] >= 0
        # The yardstick is a GEMM of 64 columns at the model's shapes. On a GPU, quick sizes
        # make every kernel launch-bound, and an agenda batch of more than 64 columns does
        # more arithmetic per launch than the yardstick: its efficiency can pass 1 there
        # (1.04 and 1.31 on an H200 with the suite's eight workers sharing the device).
        assert r["efficiency"] > 0 and (r["efficiency"] < 1 or not on_cpu)
        assert r["kernels"] >= r["batches_per_minibatch"] > 0
    # batching really batches: agenda runs far fewer batches than one node per batch
    assert modes["agenda"]["batches_per_minibatch"] < modes["none"]["batches_per_minibatch"] / 2
    assert modes["none"]["batches_per_minibatch"] >= modes["none"]["nodes"] - 200
    assert modes["agenda"]["bytes_copied"] > 0  # batches gather arguments, some by copying
    printed = capsys.readouterr().out
    assert "efficiency = model training FLOP/s / machine GEMM FLOP/s" in printed
    header = next(line for line in printed.splitlines() if line.startswith("mode "))
    for column in ("batches", "lower bound", "bytes copied", "ms/minibatch"):
        assert column in header, column
    assert "construct" in printed and "backward" in printed  # the per-phase breakdown


def test_report_renders_saved_results(tmp_path, capsys):
    from benchmarks import report, synthetic

    payload = synthetic.run(quick=True)
    (tmp_path / "synthetic.json").write_text(json.dumps(payload))
    result = report.run(quick=False, directory=tmp_path)
    table = (tmp_path / "benchmarks.md").read_text()
    assert "| Synthetic BiLSTM (§4.1) | agenda |" in table
    assert "| batches | lower bound | bytes copied | kernels |" in table
    agenda = payload["results"]["agenda"]
    row = next(line for line in table.splitlines() if line.startswith("| Synthetic BiLSTM (§4.1) | agenda |"))
    cells = [c.strip() for c in row.split("|")]
    assert cells[6:9] == [str(agenda["batches_per_minibatch"]), str(agenda["lower_bound"]),
                          bytes_text(agenda["bytes_copied"])]
    assert table.index("| none |") < table.index("| agenda |") < table.index("| manual+none |")
    assert result["tasks"] == ["synthetic"]
    pytest.importorskip("matplotlib")
    assert (tmp_path / "benchmarks.png").stat().st_size > 1000


def test_gpu_results_are_kept_apart_and_compared_with_the_papers_gpu(tmp_path, monkeypatch):
    """A CuPy run saves under results/gpu/ (never over the CPU table), and its report puts
    the paper's GPU numbers (Tesla K80) beside it, not the CPU ones."""
    import batchviz as bv
    from benchmarks import common, report, treelstm

    payload = treelstm.run(quick=True)
    payload["machine"].update(backend="cupy", device="NVIDIA H100 80GB HBM3")
    (tmp_path / "treelstm.json").write_text(json.dumps(payload))
    table = report.markdown_table(report.load_results(tmp_path))
    assert "| paper GPU |" in table and "| Tree-LSTM | agenda |" in table
    assert "| 661 |" in table and "| 357 |" not in table   # agenda: K80 661 trees/s, CPU 357
    assert "on NVIDIA H100 80GB HBM3" in report.machine_line(report.load_results(tmp_path))
    monkeypatch.setattr(bv, "get_backend", lambda: "numpy")
    assert common.results_dir() == common.RESULTS_DIR
    monkeypatch.setattr(bv, "get_backend", lambda: "cupy")
    assert common.results_dir() == common.RESULTS_DIR / "gpu"


def test_backend_option_without_cupy_is_a_clear_error(capsys):
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    with pytest.raises(SystemExit):
        main(["treelstm", "--quick", "--backend", "cupy"])
    assert "CuPy could not be imported" in capsys.readouterr().err


def test_report_without_results(tmp_path, capsys):
    from benchmarks import report

    assert report.run(quick=True, directory=tmp_path)["tasks"] == []
    assert "no results" in capsys.readouterr().out


def test_repeat_sets_the_timed_rounds(capsys):
    """--repeat N is the number of timed rounds of a full run (the quick run times one),
    recorded in the JSON; fewer than one is refused with the option's name."""
    from benchmarks import harness

    before = harness.ROUNDS
    try:
        assert main(["synthetic", "--quick", "--repeat", "5"]) == 0
        assert harness.ROUNDS == 5
        with pytest.raises(SystemExit):
            main(["synthetic", "--quick", "--repeat", "0"])
        assert "--repeat must be at least 1" in capsys.readouterr().err
    finally:
        harness.ROUNDS = before


def test_modes_times_only_the_modes_asked_for(tmp_path, capsys):
    """--modes depth,agenda: only those two are timed (a close comparison over many rounds
    without the slow `none`); every mode records each round's total and their median."""
    out = tmp_path / "t.json"
    assert main(["treelstm", "--quick", "--modes", "depth,agenda", "--json", str(out)]) == 0
    results = json.loads(out.read_text())["results"]
    assert set(results) == {"depth", "agenda"}
    for r in results.values():
        assert len(r["round_totals_s"]) == 1  # a quick run times one round
        assert r["median_sentences_per_s"] == pytest.approx(r["sentences_per_s"])
    assert "median" in capsys.readouterr().out
    # `all`: a task without any of the modes is skipped, and the report is left alone
    assert main(["all", "--quick", "--modes", "manual+agenda"]) == 0
    printed = capsys.readouterr().out
    assert "bilstm: skipped, bilstm has none of the modes manual+agenda" in printed
    assert "manual+agenda" in printed and "wrote" not in printed


@pytest.mark.parametrize("argv, message", [
    (["treelstm", "--modes", "depth,bogus"], "unknown mode 'bogus'; the modes are none, depth"),
    (["treelstm", "--quick", "--modes", "manual+none"],
     "treelstm has none of the modes manual+none; its modes are none, depth, agenda"),
    (["overhead", "--modes", "depth"], "--modes applies to the training tasks"),
])
def test_modes_errors_name_what_was_wrong(argv, message, capsys):
    from benchmarks import harness

    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err
    assert harness.MODES is None  # a failed run does not leave its modes behind


def test_a_partial_run_leaves_the_saved_results_alone(tmp_path, monkeypatch, capsys):
    """results/<task>.json holds a full run (the report's table reads every mode of it):
    a run of some modes only must not overwrite it; a full run does."""
    from benchmarks import harness

    monkeypatch.setattr(harness, "results_dir", lambda: tmp_path)
    rate = {"gemm_flops_per_s": 1e9, "gemm_columns": 64, "gemm_name": "test GEMM"}
    products = harness.Products()
    products.add(4, 4, 1)
    entry = harness.result_entry(harness.StepTimes(forward=0.5), 1, products.training_flops, 1e9)
    monkeypatch.setattr(harness, "MODES", ("agenda",))
    harness.finish("treelstm", {}, dict(rate), products, {"agenda": entry}, 1, quick=False)
    assert not (tmp_path / "treelstm.json").exists()
    assert "partial run (--modes agenda)" in capsys.readouterr().out
    monkeypatch.setattr(harness, "MODES", None)
    paired = harness.paired_comparisons({"depth": [1.0] * 5, "agenda": [0.5] * 5})
    harness.finish("treelstm", {}, dict(rate), products, {"agenda": entry}, 1, quick=False,
                   paired=paired)
    saved = json.loads((tmp_path / "treelstm.json").read_text())
    assert saved["results"]["agenda"]["sentences_per_s"] == 2.0
    assert saved["paired"] == [{"mode": "agenda", "against": "depth", "median_ratio": 2.0,
                                "faster_rounds": 5, "rounds": 5, "interval_95": [2.0, 2.0]}]


def test_paired_lines_compare_each_mode_with_the_one_timed_before_it():
    from benchmarks.harness import paired_comparisons, paired_lines

    lines = paired_lines(paired_comparisons({"depth": [1.0, 2.0, 1.0], "agenda": [0.5, 4.0, 0.8]}))
    assert lines == ["  agenda against depth: 1.250x as fast in the median round, "
                     "faster in 2 of 3 rounds"]


def test_paired_interval_tells_a_difference_from_noise():
    """With 5 rounds or more the median ratio gets a resampled 95% interval: a mode that
    is faster in every round by 10-20% is "faster"; one that wins and loses by turns is
    "no clear difference"; the interval always holds the median itself."""
    from benchmarks.harness import paired_comparisons, paired_lines

    depth = [1.0, 1.1, 0.9, 1.2, 1.0, 1.05, 0.95, 1.1]
    clearly = [t / r for t, r in zip(depth, [1.1, 1.2, 1.15, 1.1, 1.2, 1.12, 1.18, 1.14])]
    by_turns = [t / r for t, r in zip(depth, [1.1, 0.9, 1.08, 0.92, 1.05, 0.95, 1.02, 0.97])]
    for agenda, verdict in ((clearly, "faster"), (by_turns, "no clear difference")):
        [c] = paired_comparisons({"depth": depth, "agenda": agenda})
        low, high = c["interval_95"]
        assert low <= c["median_ratio"] <= high
        assert paired_comparisons({"depth": depth, "agenda": agenda}) == [c]  # seeded
        assert f": {verdict})" in paired_lines([c])[0]
    [slower] = paired_comparisons({"depth": clearly, "agenda": depth})
    assert slower["interval_95"][1] < 1 and ": slower)" in paired_lines([slower])[0]


def test_products_benchmark_times_every_form(tmp_path, capsys):
    """``python -m benchmarks products --quick``: both forms timed for every size, and the
    form batchviz uses named as ``columns_first`` decides."""
    import numpy as np

    from batchviz.ops.linalg import columns_first, per_vector

    path = tmp_path / "products.json"
    assert main(["products", "--quick", "--json", str(path)]) == 0
    assert "rows/columns" in capsys.readouterr().out
    results = json.loads(path.read_text())["results"]
    assert [r["n"] for r in results] == [1, 3, 8, 64]
    for r in results:
        assert r["rows_s"] > 0 and r["columns_s"] > 0 and r["vectors_s"] > 0
        assert r["batchviz_uses"] == ("vectors" if per_vector(np, r["n"]) else "columns"
                                      if columns_first(r["W"][0], r["n"]) else "rows")


def test_hosttime_benchmark_times_the_executor_and_the_kernels(tmp_path, capsys):
    """``python -m benchmarks hosttime --quick``: the host time of each executor part and
    op kernel, for the naive and the manual code; the parts do not overlap (so they add
    up to less than the step), and the timing wrappers are gone afterwards."""
    from batchviz.execute import forward
    from batchviz.ops.lstm_steps import LSTMStep

    originals = (forward.read_block, LSTMStep.__dict__["forward"])
    path = tmp_path / "hosttime.json"
    assert main(["hosttime", "--quick", "--json", str(path)]) == 0
    assert "synthetic task, manual+agenda" in capsys.readouterr().out
    results = json.loads(path.read_text())["results"]
    assert set(results) == {"agenda", "manual+agenda"}
    for mode, entry in results.items():
        parts = entry["parts"]
        assert parts["lstm_step forward"]["calls"] > 0
        assert parts["lstm_step backward"]["calls"] == parts["lstm_step forward"]["calls"]
        assert parts["executor read"]["calls"] > 0
        assert 0 < sum(p["ms"] for p in parts.values()) < entry["step_ms"]
    assert results["agenda"]["parts"]["plan layout"]["calls"] == 1
    assert (forward.read_block, LSTMStep.__dict__["forward"]) == originals


def test_against_times_one_side_and_reports_the_paired_rounds(capsys):
    """``python -m benchmarks against``: one side's steps in a fresh process (this
    checkout, the overhead task, quick sizes), and the paired report of rounds."""
    from benchmarks import against

    steps = against.side_steps(against.ROOT, "overhead", quick=True, repeat=1)
    assert len(steps) == 1 and steps[0] > 0
    payload = against.report("v0", {"synthetic": {"old": [2.0, 2.2, 2.1, 2.0, 2.3],
                                                  "new": [1.0, 1.1, 1.0, 1.2, 1.1]}}, 5)
    out = capsys.readouterr().out
    assert "synthetic" in out and "5 of 5" in out
    paired = payload["paired"]["synthetic"]
    assert paired["faster_rounds"] == 5 and paired["interval_95"][0] > 1.5


def test_against_says_which_side_runs_compiled_code(tmp_path):
    """Each side's compiled code is reported (a worktree gets its own built first,
    ``build_compiled``): this checkout's modules as ``compiled.compiled()`` says (it has no
    twins), a folder without ``batchviz.compiled`` (a commit from before it) as none."""
    from batchviz import compiled
    from benchmarks import against

    modules = "compiled" if compiled.compiled() else "source ("
    code = against.compiled_code_of(against.ROOT)
    assert code.startswith(f"modules {modules}") and "twins" not in code
    (tmp_path / "batchviz").mkdir()
    (tmp_path / "batchviz" / "__init__.py").write_text("")
    assert against.compiled_code_of(tmp_path) == "none"


def test_against_times_a_dynet_program_and_checks_its_tasks(capsys):
    """``against --tasks dynet_treelstm``: the DyNet program's step under this checkout's
    batchviz.dynet; a task that is not one of against's is refused, naming them."""
    from benchmarks import against

    (step,) = against.side_steps(against.ROOT, "dynet_treelstm", quick=True, repeat=1)
    assert 0 < step < 60
    with pytest.raises(SystemExit):
        main(["against", "--tasks", "dynet_treelstm,treelstmm"])
    err = capsys.readouterr().err
    assert "unknown ['treelstmm']" in err and "dynet_bilstm_tagger" in err
    with pytest.raises(SystemExit):
        main(["treelstm", "--tasks", "dynet_treelstm"])
    assert "--tasks is an option of `against` and `dynet` only" in capsys.readouterr().err


def test_dynet_programs_quick(tmp_path, capsys):
    """`python -m benchmarks dynet --quick`: the six programs under batchviz.dynet (and
    under DyNet, where it is installed), each with a rate."""
    import importlib.util

    out = tmp_path / "dynet.json"
    assert main(["dynet", "--quick", "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert set(payload["results"]) == {"bilstm_tagger", "treelstm", "rnnlm_batch", "attention",
                                       "mnist", "bow_classifier"}
    with_dynet = importlib.util.find_spec("dynet") is not None
    for r in payload["results"].values():
        assert r["batchviz"] > 0
        assert (r["dynet"] > 0 and r["ratio"] > 0) if with_dynet else r["dynet"] is None
        phases = r["phases"]["batchviz"]
        assert set(phases) == {"build", "forward", "backward", "update"}
        assert all(ms > 0 for ms in phases.values())
        assert (r["phases"]["dynet"] is not None) == with_dynet
    assert payload["results"]["attention"]["unit"] == "pairs"
    out = capsys.readouterr().out
    assert "batchviz.dynet per s" in out
    assert re.search(r"^treelstm +build +[\d.]+ ", out, re.M), out


def test_dynet_rounds_are_compared_pair_by_pair():
    """The DyNet table's round-by-round comparison: each batchviz.dynet run against the
    DyNet run beside it (rates per second turned into times), with a 95% interval from 5
    rounds on, which tells a tie from a difference."""
    from benchmarks.dynet_compare import paired

    few = paired({"batchviz": [110.0, 90.0, 120.0], "dynet": [100.0, 100.0, 100.0]})
    assert few["median_ratio"] == pytest.approx(1.1) and few["faster_rounds"] == 2
    assert "interval_95" not in few
    faster = paired({"batchviz": [200.0, 210.0, 190.0, 205.0, 195.0], "dynet": [100.0] * 5})
    assert faster["interval_95"][0] > 1 and faster["faster_rounds"] == 5
    tie = paired({"batchviz": [101.0, 99.0, 102.0, 98.0, 100.0], "dynet": [100.0] * 5})
    low, high = tie["interval_95"]
    assert low < 1 < high


def test_a_busy_neighbour_runs_beside_the_programs_and_stops_after(capsys):
    """``benchmarks dynet --busy``: a process that keeps a core busy runs for the timed
    programs and is gone afterwards; ``--busy`` and ``--threads`` are dynet's options."""
    import time

    from benchmarks.dynet_compare import busy_neighbour

    with busy_neighbour(True):
        time.sleep(0.3)
        busy = [p for p in Path("/proc").iterdir() if p.name.isdigit()
                and b"while True: pass" in _cmdline(p)]
        assert busy, "no busy neighbour running"
    assert not [p for p in busy if p.exists() and _state(p) not in ("Z", "X")]
    with pytest.raises(SystemExit):
        main(["treelstm", "--busy"])
    assert "--threads and --busy are options of `dynet` only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["dynet", "--threads", "0"])
    assert "--threads must be at least 1" in capsys.readouterr().err


def _cmdline(proc) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def _state(proc) -> str:
    try:
        return (proc / "stat").read_text().split()[2]
    except OSError:
        return "X"


def test_floor_benchmark_times_each_rows_kernels_alone(tmp_path, capsys):
    """``python -m benchmarks floor --quick``: each row's program runs, and its kernels run
    again alone after every timed step: they are counted and take time. (Whether they take
    less than the whole step is a measurement, which a busy machine can turn around at
    these sizes: the benchmark shows it, a test does not assert it.)"""
    from benchmarks.floor import ROWS

    path = tmp_path / "floor.json"
    assert main(["floor", "--quick", "--json", str(path)]) == 0
    assert "kernels alone" in capsys.readouterr().out
    results = json.loads(path.read_text())["results"]
    assert set(results) == set(ROWS)
    for row, r in results.items():
        assert r["kernels_per_step"] > 0, row
        assert r["least_calls_ms"] > 0 and r["kernels_ms"] > 0 and r["batchviz_ms"] > 0, row
        assert set(r["phases"]) == {"build", "forward", "backward", "update"}


def test_construction_benchmark_times_every_statement_in_both_systems(tmp_path, capsys):
    """``python -m benchmarks construction --quick``: every statement is built and timed
    under batchviz.dynet (and under DyNet, where it is installed), and the table names each
    with its ratio; the build phase of a program's steps is taken apart into parts that add
    up to it."""
    import importlib.util

    from benchmarks.construction import PARTS, STATEMENTS

    path = tmp_path / "construction.json"
    assert main(["construction", "--quick", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    payload = json.loads(path.read_text())
    systems = {"batchviz", "dynet"} if importlib.util.find_spec("dynet") else {"batchviz"}
    assert set(payload["micros"]) == systems
    for system in systems:
        assert set(payload["micros"][system]) == set(STATEMENTS)
        assert all(micros > 0 for micros in payload["micros"][system].values()), system
    for name in STATEMENTS:
        assert re.search(rf"^{re.escape(name)} +[\d.]+ ", out, re.M), name
    for system in systems:
        build = payload["build_ms"][system]
        assert set(build) == set(PARTS)
        renew, freeing, statements, collector, total = (build[part] for part in PARTS)
        assert statements > 0 and renew > 0 and freeing >= 0 and collector >= 0, build
        assert total == pytest.approx(renew + freeing + statements), build
    assert re.search(r"^build, in all +[\d.]+ ", out, re.M), out
