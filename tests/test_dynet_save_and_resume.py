"""examples/dynet/save_and_resume.py trains, saves, and resumes, alternating between the
real DyNet and batchviz.dynet: each run starts from the model the previous run saved,
whichever saved it (its held-out loss at the start is the previous run's at the end), and
goes on learning."""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parents[1] / "examples" / "dynet"
PROGRAM = PROGRAMS / "save_and_resume.py"
IMPORT_LINE = "import batchviz.dynet as dy\n"
HAVE_DYNET = importlib.util.find_spec("dynet") is not None


def run(side: str, folder: Path) -> dict:
    """Run the program (with its import line for ``side``) for a few steps in ``folder``;
    what it printed: whether it resumed, its held-out losses and its step losses."""
    source = PROGRAM.read_text()
    assert source.count(IMPORT_LINE) == 1
    program = folder / f"save_and_resume_{side}.py"
    program.write_text(source if side == "batchviz" else
                       source.replace(IMPORT_LINE, "import dynet as dy\n"))
    path = [str(PROGRAMS)] + [p for p in [os.environ.get("PYTHONPATH")] if p]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    done = subprocess.run([sys.executable, str(program), "--quick", "--steps", "6", "--model",
                           "clf", "--dynet-seed", "1"],
                          capture_output=True, text=True, timeout=120, cwd=folder, env=env)
    assert done.returncode == 0, f"{side}:\n{done.stderr[-3000:]}"
    out = done.stdout
    return {"resumed": "resumed from clf" in out,
            "start": float(re.search(r"held-out loss at the start ([\d.]+)", out).group(1)),
            "end": float(re.search(r"held-out loss at the end ([\d.]+)", out).group(1)),
            "steps": [float(x) for x in re.findall(r"^step \d+ loss ([\d.]+)$", out, re.M)]}


@pytest.mark.skipif(not HAVE_DYNET, reason="the real DyNet (pip install dyNET38) is not "
                                           "installed: no run under DyNet to resume from")
@pytest.mark.parametrize("first, second", [("dynet", "batchviz"), ("batchviz", "dynet")])
def test_training_resumes_across_dynet_and_batchviz(first, second, tmp_path):
    runs = [run(side, tmp_path) for side in (first, second, first)]
    assert [r["resumed"] for r in runs] == [False, True, True]
    for before, after in zip(runs, runs[1:]):
        # the model a run starts from is the one the run before saved
        assert after["start"] == pytest.approx(before["end"], rel=1e-4, abs=1e-5)
    assert all(len(r["steps"]) == 6 for r in runs)
    assert runs[-1]["end"] < runs[0]["start"]            # it went on learning
    assert open(tmp_path / "clf.data").readline().startswith("#LookupParameter# /_0 {8,50} ")


def test_it_resumes_under_batchviz_alone(tmp_path):
    runs = [run("batchviz", tmp_path) for _ in range(2)]
    assert [r["resumed"] for r in runs] == [False, True]
    assert runs[1]["start"] == pytest.approx(runs[0]["end"], rel=1e-6)
    assert runs[1]["end"] < runs[0]["start"]
