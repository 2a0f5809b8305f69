"""The command line: `batchviz explain script.py`, `batchviz demo`, exit codes and errors."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import batchviz as bv
from batchviz.cli import main
from batchviz.graph import graph_scope
from batchviz.runtime import forget_asked, last_asked
from batchviz.examples import figure1
from batchviz.expression import Expression

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path, body: str, name="script.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


FIGURE1_SCRIPT = """
    import sys
    import batchviz as bv
    from batchviz.examples import figure1

    graph, loss, model = figure1("agenda", lengths=tuple(int(a) for a in sys.argv[1:]) or (2, 3, 4))
    print("loss", loss.value())
    loss.backward()
    with bv.Graph():  # a later value() must not hide the loss backward() was called on
        bv.sum_elems(bv.input([1.0, 2.0])).value()
"""


def test_explain_a_script(tmp_path, capsys):
    script = write(tmp_path, FIGURE1_SCRIPT)
    npvalue, backward = Expression.npvalue, Expression.backward
    assert main(["explain", script]) == 0
    out = capsys.readouterr().out
    assert out.startswith("loss ")  # the script's own output comes first
    assert "batchviz explain: 61 nodes in 10 signatures" in out
    assert "lower bound: 23 batches" in out and "verdict: agenda needs" in out
    assert "\x1b[" not in out  # not a terminal: plain text
    assert (Expression.npvalue, Expression.backward) == (npvalue, backward)  # hooks removed


def test_script_arguments_and_json(tmp_path, capsys):
    script = write(tmp_path, FIGURE1_SCRIPT)
    assert main(["explain", "--json", script, "3", "3"]) == 0
    captured = capsys.readouterr()
    d = json.loads(captured.out)  # the script's print went to stderr
    assert captured.err.startswith("loss ")
    with bv.recording_sources():  # as the command records the script's graphs
        g, loss, _ = figure1("agenda", lengths=(3, 3))
    loss.value()  # as the script did: agenda is shown as it ran
    assert d["sources_recorded"] is True and d["strategies"]["agenda"]["ran"]
    assert d == {**bv.explain(loss).to_dict(), "explain_seconds": d["explain_seconds"]}
    # two sequences of one length: nothing to split, so no line is named
    assert d["split_by_line"] == {"depth": [], "agenda": []}


def test_json_on_stdout_is_json_alone_when_the_script_prints(tmp_path):
    """``batchviz explain --json script.py > report.json``: the script's prints (Python's, and
    ones written straight to file descriptor 1) go to stderr, stdout parses as JSON."""
    script = write(tmp_path, FIGURE1_SCRIPT + """
    import os
    sys.stdout.write("progress: done\\n")
    os.write(1, b"written to fd 1\\n")
    """)
    env = {**os.environ, "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "batchviz", "explain", "--json", script],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert d["strategies"]["agenda"]["batches"] == 23
    for line in ("loss ", "progress: done", "written to fd 1"):
        assert line in done.stderr and line not in done.stdout


def test_html_report(tmp_path, capsys):
    script = write(tmp_path, FIGURE1_SCRIPT)
    report = tmp_path / "report.html"
    assert main(["explain", "--html", str(report), script]) == 0
    assert report.read_text().startswith("<!DOCTYPE html>")
    assert "report written to" in capsys.readouterr().err


def test_the_last_scalar_built_when_no_value_is_asked(tmp_path, capsys):
    script = write(tmp_path, """
        import numpy as np
        import batchviz as bv
        x = bv.input(np.ones(3))
        loss = bv.sum_elems(bv.tanh(x) * 2.0)
    """)
    assert main(["explain", script]) == 0
    assert "4 nodes in 4 signatures" in capsys.readouterr().out


def test_missing_script(tmp_path, capsys):
    assert main(["explain", str(tmp_path / "nope.py")]) == 2
    assert "no such script:" in capsys.readouterr().err


def test_failing_script(tmp_path, capsys):
    script = write(tmp_path, "raise RuntimeError('broken on purpose')\n")
    assert main(["explain", script]) == 1
    err = capsys.readouterr().err
    assert "RuntimeError: broken on purpose" in err and "raised an exception" in err


def test_script_exit_status_is_passed_on(tmp_path, capsys):
    assert main(["explain", write(tmp_path, "import sys\nsys.exit(3)\n")]) == 3
    assert "exited with status 3" in capsys.readouterr().err
    assert main(["explain", write(tmp_path, textwrap.dedent(FIGURE1_SCRIPT) + "sys.exit(0)\n",
                                  "ok.py")]) == 0


def test_script_without_a_loss(tmp_path, capsys):
    assert main(["explain", write(tmp_path, "print('hello')\n")]) == 1
    assert "built no scalar expression" in capsys.readouterr().err


def test_unknown_strategy(tmp_path, capsys):
    script = write(tmp_path, FIGURE1_SCRIPT)
    assert main(["explain", "--strategies", "agenda,fastest", script]) == 2
    assert "unknown strategy 'fastest'" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main([])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit) as exit_:
        main(["explain"])
    assert exit_.value.code == 2


def test_demo(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Figure 1" in out and "lengths 2, 3, 4" in out
    assert "61 nodes" in out and "verdict: agenda needs" in out
    assert main(["demo", "--lengths", "5", "5"]) == 0
    assert "agenda and depth need the same number of launches" in capsys.readouterr().out


def same(a, b) -> bool:
    return (a.graph, a.node) == (b.graph, b.node)


def test_the_loss_asked_for_prefers_backward_then_scalars():
    g, loss, _ = figure1()
    forget_asked()
    assert last_asked() is None
    loss.npvalue()
    vector = Expression(g, 7)
    vector.npvalue()
    assert same(last_asked(), loss)  # the last *scalar* value beats a later vector value
    with graph_scope(g):
        scalar = bv.sum_elems(vector)
    scalar.value()
    assert same(last_asked(), scalar)
    loss.backward()
    scalar.value()
    assert same(last_asked(), loss)  # backward() marks the loss for good
    forget_asked()
    assert last_asked() is None


@pytest.mark.parametrize("command", [[sys.executable, "-m", "batchviz"],
                                     [str(Path(sys.executable).with_name("batchviz"))]])
def test_entry_points(command, tmp_path):
    if not Path(command[0]).exists():
        pytest.skip("console script not installed in this environment")
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(command + ["demo"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "verdict: agenda needs" in done.stdout
    missing = subprocess.run(command + ["explain", "missing.py"], capture_output=True, text=True,
                             env=env, cwd=tmp_path, timeout=120)
    assert missing.returncode == 2 and "no such script: missing.py" in missing.stderr
