"""The overhead benchmark's quick mode runs the same code path and writes the JSON fields
that the issue names. (Speed itself is shown by the benchmark's tables, never asserted.)"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_overhead_quick_writes_json(tmp_path):
    out = tmp_path / "overhead.json"
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "overhead", "--quick", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "us/node" in proc.stdout and "none/agenda" in proc.stdout
    header = next(line for line in proc.stdout.splitlines() if line.startswith("strategy"))
    for column in ("batches", "lower bound", "bytes copied", "fwd+bwd s"):
        assert column in header, column
    data = json.loads(out.read_text())
    assert data["nodes"] > 1000
    assert data["construct_us_per_node"] > 0
    for field in ("schedule_us_per_node", "batches", "forward_backward_s", "bytes_copied"):
        assert {"none", "depth", "agenda", "lookahead"} <= set(data[field]), field
    assert data["batches"]["none"] == data["nodes"]
    assert data["batches"]["agenda"] < data["nodes"] / 5
    # the bound holds, and lookahead meets it on this BiLSTM graph
    assert min(data["batches"].values()) == data["batches"]["lookahead"] == data["lower_bound"]
    # batches gather their arguments, some by copying them
    assert all(n >= 0 for n in data["bytes_copied"].values()) and data["bytes_copied"]["agenda"] > 0
