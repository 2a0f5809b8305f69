"""The DyNet-style programs of examples/dynet: each trains for a few steps under
batchviz.dynet with its loss falling, ``batchviz explain`` explains each, and each runs
under the real DyNet with only its import line changed."""
import os
import re
import runpy
import subprocess
import sys
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

import pytest

from batchviz.cli import main
import batchviz.dynet as dy

PROGRAMS = Path(__file__).resolve().parents[1] / "examples" / "dynet"
NAMES = ["bilstm_tagger", "treelstm", "rnnlm_batch", "xor", "rnnlm_transduce", "mnist",
         "attention", "bow_classifier"]
IMPORT_LINE = "import batchviz.dynet as dy\n"


@pytest.fixture(autouse=True)
def _program_environment(monkeypatch):
    """The programs import their data module from their folder, and each run reads its
    settings (--dynet-autobatch) afresh."""
    monkeypatch.syspath_prepend(str(PROGRAMS))
    monkeypatch.setattr(dy.graph.session, "settings", None)


def run_program(name: str, argv: list, monkeypatch) -> list:
    """The per-step losses a program prints when run as ``python name.py argv...``."""
    monkeypatch.setattr("sys.argv", [f"{name}.py"] + argv)
    out = StringIO()
    with redirect_stdout(out):
        runpy.run_path(str(PROGRAMS / f"{name}.py"), run_name="__main__")
    return [float(m.group(1)) for m in re.finditer(r"^step \d+ loss ([\d.]+)$", out.getvalue(), re.M)]


@pytest.mark.parametrize("name", NAMES)
def test_the_loss_falls(name, monkeypatch):
    # (a seed: DyNet's default, seed 0, draws fresh initial values every run)
    losses = run_program(name, ["--quick", "--steps", "10", "--dynet-autobatch", "1",
                                "--dynet-seed", "1"], monkeypatch)
    assert len(losses) == 10
    assert sum(losses[-2:]) < sum(losses[:2]), losses   # (two minibatches take turns)


@pytest.mark.parametrize("name", NAMES)
def test_batchviz_explain_explains_it(name, capsys):
    assert main(["explain", str(PROGRAMS / f"{name}.py"), "--quick", "--steps", "1",
                 "--dynet-autobatch", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"batchviz explain: \d+ nodes in \d+ signatures", out), out[-2000:]
    assert "verdict:" in out
    # a signature the verdict names makes a difference between the two strategies
    for with_one, with_other in re.findall(r"\((\d+) batch(?:es)? with \w+, (\d+) with", out):
        assert with_one != with_other, out[-600:]
    # a line of the program is named only when its nodes took more batches than they need
    for batches, needed in re.findall(r"in (\d+) batch(?:es)? \(their chain needs (\d+)\)", out):
        assert int(batches) > int(needed), out[-1500:]


def test_the_cnn_on_mnist_learns_and_its_convolutions_batch(monkeypatch, capsys):
    """``mnist.py --conv``: one image per expression, two convolution and pooling layers;
    the loss falls, and every layer of the minibatch is one batch."""
    losses = run_program("mnist", ["--quick", "--conv", "--steps", "10", "--dynet-autobatch",
                                   "1", "--dynet-seed", "1"], monkeypatch)
    assert len(losses) == 10 and sum(losses[-2:]) < sum(losses[:2]), losses
    assert main(["explain", str(PROGRAMS / "mnist.py"), "--quick", "--conv", "--steps", "1",
                 "--dynet-autobatch", "1"]) == 0
    out = capsys.readouterr().out
    rows = dict(re.findall(r"^(conv2d\S*|maxpool2d\S*) +(\d+ +[\d–]+ +\d+ +\d+ +\d+ +\d+)$",
                           out, re.M))
    assert len(rows) == 4, out[-2500:]   # two convolutions, two poolings
    for counts in rows.values():
        nodes, _, chain, _, _, agenda = counts.split()
        assert int(agenda) == int(chain) == 1 and int(nodes) == 8   # the 8 images, one batch


def test_the_cnn_on_one_minibatch_expression_learns(monkeypatch, capsys):
    """``mnist.py --conv --minibatch``: DyNet's manual batching, the images of a minibatch
    one expression (a list of arrays given to ``inputTensor``), convolved and pooled as
    one node each; the loss falls."""
    losses = run_program("mnist", ["--quick", "--conv", "--minibatch", "--steps", "10",
                                   "--dynet-seed", "1"], monkeypatch)
    assert len(losses) == 10 and sum(losses[-2:]) < sum(losses[:2]), losses
    assert main(["explain", str(PROGRAMS / "mnist.py"), "--quick", "--conv", "--minibatch",
                 "--steps", "1"]) == 0
    out = capsys.readouterr().out
    nodes = re.findall(r"^(?:conv2d|maxpool2d)\S* +(\d+) ", out, re.M)
    assert nodes == ["1"] * 4, out[-2500:]   # each layer one node, of all 8 images


def test_explain_names_the_tree_lstm_lines_that_were_split_and_not_the_others(capsys):
    """In the Tree-LSTM the cell's three products (``c = i*u + f_l*c_l + f_r*c_r``) wait on
    different gates and split; ``h = o * tanh(c)`` runs once per level of the tree, as its
    own chain of nodes needs, although its signature (``cmult``, with the cell's) does not
    reach its chain: it is not named."""
    source = (PROGRAMS / "treelstm.py").read_text().splitlines()
    cell = next(k for k, line in enumerate(source, 1) if "c = dy.cmult(i, u) + dy.cmult(f_l" in line)
    h = next(k for k, line in enumerate(source, 1) if "h = dy.cmult(o, dy.tanh(c))" in line)
    assert main(["explain", str(PROGRAMS / "treelstm.py"), "--quick", "--steps", "1",
                 "--dynet-autobatch", "1"]) == 0
    out = capsys.readouterr().out
    assert f"treelstm.py:{cell}, `dy.cmult`:" in out   # the program's call, not batchviz's
    assert f"treelstm.py:{h}," not in out
    chain, agenda = re.search(r"^cmult +\d+ +[\d–]+ +(\d+) +\d+ +\d+ +(\d+)$", out, re.M).groups()
    assert int(agenda) > int(chain)  # the signature is split: its lines are looked at


@pytest.mark.parametrize("name, flags", [(name, []) for name in NAMES]
                         + [("mnist", ["--conv", "--minibatch"])])
def test_it_runs_under_dynet_with_the_import_line_changed(name, flags, tmp_path):
    pytest.importorskip("dynet", reason="the real DyNet (dyNET38) is not installed")
    source = (PROGRAMS / f"{name}.py").read_text()
    assert source.count(IMPORT_LINE) == 1
    program = tmp_path / f"{name}.py"
    program.write_text(source.replace(IMPORT_LINE, "import dynet as dy\n"))
    path = [str(PROGRAMS)] + [p for p in [os.environ.get("PYTHONPATH")] if p]  # (and where
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))  # DyNet may be): toydata, steptimer
    done = subprocess.run([sys.executable, str(program), "--quick", "--steps", "3"] + flags,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(re.findall(r"^step \d+ loss [\d.]+$", done.stdout, re.M)) == 3


def test_step_timer_times_four_phases_after_the_warmup(monkeypatch, capsys):
    """The programs' StepTimer: the warmup steps are not counted, each phase is the time
    between two marks, and a step with a lap missing is refused, naming the phases."""
    monkeypatch.syspath_prepend(str(PROGRAMS))
    steptimer = __import__("steptimer")
    clock = iter([0.0, 1.0, 2.0, 3.0, 4.0,        # step 0 (warmup): not counted
                  10.0, 10.1, 10.4, 10.6, 10.7,   # step 1: 0.1, 0.3, 0.2, 0.1
                  20.0, 20.1, 20.2])               # step 2: a lap missing
    monkeypatch.setattr(steptimer.time, "perf_counter", lambda: next(clock))
    timer = steptimer.StepTimer(warmup=1, unit="trees")
    for step in (0, 1):
        timer.start()
        for _ in range(3):
            timer.lap()
        timer.stop(step, items=8)
    timer.report()
    out = capsys.readouterr().out.splitlines()
    assert out == ["8 trees in 0.700 s: 11.4 trees/s",
                   "ms per step: build 100.000, forward 300.000, backward 200.000, update 100.000"]
    timer.start()
    timer.lap()
    with pytest.raises(RuntimeError, match=r"4 phases .*got 1 laps"):
        timer.stop(2, items=8)
