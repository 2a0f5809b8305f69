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
    data = json.loads(out.read_text())
    assert data["nodes"] > 1000
    assert data["construct_us_per_node"] > 0
    for field in ("schedule_us_per_node", "batches", "forward_backward_s"):
        assert {"none", "depth", "agenda"} <= set(data[field]), field
    assert data["batches"]["none"] == data["nodes"]
    assert data["batches"]["agenda"] < data["nodes"] / 5
