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
    with pytest.raises(SystemExit) as exit_:
        main(["explain", "--strategies", "agenda,fastest", script])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unknown strategy 'fastest'" in err
    assert "known strategies: none, depth, agenda" in err


# a script that leaves a mark when it runs: a check made "before the script runs" must
# find no mark
MARKING_SCRIPT = FIGURE1_SCRIPT.replace(
    "import sys\n", "import sys\n    open(sys.argv[0] + '.ran', 'w').write(repr(sys.argv[1:]))\n", 1)


def run_cli(args, tmp_path, **kwargs):
    """``python -m batchviz ARGS`` in a subprocess, as a user runs it."""
    env = {**os.environ, "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "batchviz", *args], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120, **kwargs)


def test_options_after_the_script_are_batchviz_options(tmp_path):
    """``batchviz explain prog.py --json | python -m json.tool``: --json after the script is
    batchviz's (it used to reach the script silently, and text came out); the script's own
    words still reach it."""
    script = write(tmp_path, MARKING_SCRIPT)
    done = run_cli(["explain", script, "--json", "3", "--strategies", "depth,agenda", "3"],
                   tmp_path)
    assert done.returncode == 0, done.stderr
    d = json.loads(done.stdout)
    assert list(d["strategies"]) == ["depth", "agenda"]
    assert Path(script + ".ran").read_text() == "['3', '3']"
    g, loss, _ = figure1("agenda", lengths=(3, 3))  # the script's graph, from its words
    expected = bv.explain(loss, ["depth", "agenda"]).to_dict()
    assert d["nodes"] == expected["nodes"]
    assert d["strategies"]["depth"]["batches"] == expected["strategies"]["depth"]["batches"]


def test_words_after_a_double_dash_go_to_the_script(tmp_path, capsys):
    script = write(tmp_path, MARKING_SCRIPT.replace(
        "tuple(int(a) for a in sys.argv[1:])", "tuple(int(a) for a in sys.argv[1:] if a.isdigit())"))
    assert main(["explain", script, "2", "--", "--json", "--strategies", "x"]) == 0
    assert Path(script + ".ran").read_text() == "['2', '--json', '--strategies', 'x']"
    assert "batchviz explain:" in capsys.readouterr().out  # text, not JSON


def test_a_script_option_is_not_taken_for_an_abbreviated_batchviz_option(tmp_path, capsys):
    script = write(tmp_path, MARKING_SCRIPT.replace(
        "tuple(int(a) for a in sys.argv[1:])", "tuple(int(a) for a in sys.argv[2:])"))
    assert main(["explain", script, "--opt", "2"]) == 0
    assert Path(script + ".ran").read_text() == "['--opt', '2']"


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_misspelt_strategy_fails_before_the_script_runs(tmp_path, where):
    script = write(tmp_path, MARKING_SCRIPT)
    option = ["--strategies", "depth,agnda"]
    done = run_cli(["explain", *option, script] if where == "before"
                   else ["explain", script, *option], tmp_path)
    assert done.returncode == 2
    assert "unknown strategy 'agnda' (did you mean 'agenda'?)" in done.stderr
    assert "known strategies: none, depth, agenda, lookahead, layout" in done.stderr
    assert not Path(script + ".ran").exists()  # the script never ran
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("seconds", ["-1", "0", "nan", "soon"])
def test_a_bad_time_limit_fails_before_the_script_runs(tmp_path, capsys, seconds):
    script = write(tmp_path, MARKING_SCRIPT)
    with pytest.raises(SystemExit) as exit_:
        main(["explain", script, "--optimum", "--optimum-seconds", seconds])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --optimum-seconds:" in err and repr(seconds) in err
    assert not Path(script + ".ran").exists()


@pytest.mark.parametrize("json_", [False, True])
def test_a_closed_pipe_ends_quietly(tmp_path, json_):
    """``batchviz explain prog.py | head``: the reader goes away before the report is
    written; no BrokenPipeError traceback, and the exit status a shell shows for a tool that
    SIGPIPE stopped (141)."""
    script = write(tmp_path, MARKING_SCRIPT)
    env = {**os.environ, "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "batchviz", "explain", script] + (["--json"] * json_)
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=tmp_path)
    proc.stdout.close()  # as `| head -0` does: nothing will be read
    _, err = proc.communicate(timeout=120)
    err = err.decode()
    assert Path(script + ".ran").exists()  # the script ran; its output met the closed pipe
    assert proc.returncode == 141, err
    assert "BrokenPipeError" not in err and "Traceback" not in err


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
