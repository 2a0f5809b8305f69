"""Every benchmark task runs with --quick (small sizes, the same code path) and writes the
JSON the docs and the report read."""
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.__main__ import TASKS, main  # noqa: E402

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
    expected = {"none", "depth", "agenda"}
    if task == "synthetic":
        expected |= {"manual+none", "manual+depth", "manual+agenda"}
    assert set(modes) == expected
    for r in modes.values():
        assert r["sentences_per_s"] > 0
        assert 0 < r["efficiency"] < 1
        assert r["kernels"] >= r["batches_per_minibatch"] > 0
    # batching really batches: agenda runs far fewer batches than one node per batch
    assert modes["agenda"]["batches_per_minibatch"] < modes["none"]["batches_per_minibatch"] / 2
    assert modes["none"]["batches_per_minibatch"] >= modes["none"]["nodes"] - 200
    printed = capsys.readouterr().out
    assert "efficiency = model training FLOP/s / machine GEMM FLOP/s" in printed
    assert "construct" in printed and "backward" in printed  # the per-phase breakdown


def test_report_renders_saved_results(tmp_path, capsys):
    from benchmarks import report, synthetic

    payload = synthetic.run(quick=True)
    (tmp_path / "synthetic.json").write_text(json.dumps(payload))
    result = report.run(quick=False, directory=tmp_path)
    table = (tmp_path / "benchmarks.md").read_text()
    assert "| Synthetic BiLSTM (§4.1) | agenda |" in table
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
