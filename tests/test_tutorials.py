"""The course exercises in tutorials/ cannot rot.

* Every grading test passes against the reference solutions (``BATCHVIZ_SOLUTIONS=1``).
* Every grading test *fails* against the untouched stubs, cleanly: with the exercise's own
  ``NotImplementedError("Exercise N: ...")``, never an error in collection or in a fixture
  (a student who has not started must see what to do, not a traceback of the test harness).
* ``python -m batchviz.grade`` adds up the points, and survives a broken student module.
* The teaching assertions of ``tutorials/_grading.py`` say what went wrong.
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import batchviz as bv
from batchviz.schedule import AgendaBatching, PendingView

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"

pytestmark = pytest.mark.slow


def clean_env(solutions: bool) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "BATCHVIZ_SOLUTIONS", "BATCHVIZ_GRADE"))}
    if solutions:
        env["BATCHVIZ_SOLUTIONS"] = "1"
    return env


def run_tutorials(tmp_path, solutions: bool):
    """Run ``pytest tutorials`` the way CI and the README do; return the per-test results
    (from a JUnit XML report) and the output."""
    report = tmp_path / f"tutorials-{'solutions' if solutions else 'stubs'}.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "tutorials", "-q", "-p", "no:cacheprovider",
         f"--junitxml={report}"],
        cwd=ROOT, env=clean_env(solutions), capture_output=True, text=True, timeout=600)
    assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    results = []
    for case in ET.parse(report).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome, message = child.tag, child.get("message", "")
        results.append((f"{case.get('classname')}::{case.get('name')}", outcome, message))
    return results, proc


def counts(results) -> dict:
    out = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
    for _, outcome, _ in results:
        out[outcome] += 1
    return out


@pytest.fixture(scope="module")
def solution_run(tmp_path_factory):
    return run_tutorials(tmp_path_factory.mktemp("solutions"), solutions=True)


@pytest.fixture(scope="module")
def stub_run(tmp_path_factory):
    return run_tutorials(tmp_path_factory.mktemp("stubs"), solutions=False)


def test_every_grading_test_passes_with_the_solutions(solution_run):
    results, proc = solution_run
    c = counts(results)
    assert c["failure"] == 0 and c["error"] == 0 and c["skipped"] == 0, proc.stdout[-4000:]
    assert c["passed"] == len(results) >= 30
    assert proc.returncode == 0
    points = re.search(r"^total\s+(\d+)/(\d+)$", proc.stdout, re.M)
    assert points and points.group(1) == points.group(2), proc.stdout[-2000:]
    assert "challenge leaderboard" in proc.stdout
    # the optimum column: on these graphs lookahead meets the lower bound, so it is the optimum
    assert re.search(r"^graph +agenda +depth +lower bound +optimum +yours +points", proc.stdout, re.M)
    assert re.search(r"^Tree-LSTM, 64 trees, seed 0 +260 +213 +195 +195 +195 ", proc.stdout, re.M)


def test_every_grading_test_fails_cleanly_with_the_stubs(stub_run, solution_run):
    results, proc = stub_run
    c = counts(results)
    assert c["passed"] == 0 and c["error"] == 0 and c["skipped"] == 0, proc.stdout[-4000:]
    assert c["failure"] == len(solution_run[0]), "the same tests run against stubs and solutions"
    for test, _, message in results:
        match = re.match(r"NotImplementedError: Exercise (\d+): ", message)
        assert match, f"{test} failed without its exercise's NotImplementedError: {message}"
        exercise_folder = test.split(".")[1]          # tutorials.03_depth.test_ex03_depth
        assert exercise_folder.startswith(f"{int(match.group(1)):02d}_"), (test, message)
    points = re.search(r"^total\s+(\d+)/(\d+)$", proc.stdout, re.M)
    assert points and points.group(1) == "0" and int(points.group(2)) > 0


def test_every_exercise_folder_has_its_parts():
    folders = sorted(p for p in TUTORIALS.iterdir() if re.match(r"^\d\d_", p.name))
    assert len(folders) >= 6
    for folder in folders:
        n = int(folder.name[:2])
        modules = [p for p in folder.glob("ex*.py")]
        assert (folder / "README.md").exists(), folder
        assert len(modules) == 1, folder
        assert list(folder.glob("test_*.py")), folder
        assert (TUTORIALS / "_solutions" / modules[0].name).exists(), modules[0]
        assert f"Exercise {n}:" in modules[0].read_text(), modules[0]
        assert f"pytest.mark.ex{n}" in next(folder.glob("test_*.py")).read_text()


def test_tests_and_tutorials_collect_in_one_run():
    """``pytest tests tutorials`` collects both folders: they have a ``conftest.py`` each, and
    only one module can be ``conftest`` in ``sys.modules``, so the tests take what they share
    from ``tests/helpers.py``, never ``from conftest import``."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "tests", "tutorials", "-m", "not browser",
         "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=ROOT, env=clean_env(solutions=False), capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert not re.search(r"\berrors?\b", output.splitlines()[-1]), output[-4000:]
    collected = {line.split("::")[0].split("/")[0] for line in proc.stdout.splitlines()
                 if "::" in line}
    assert collected == {"tests", "tutorials"}, collected


# --- the grade command ----------------------------------------------------------------------

def mini_tutorials(tmp_path, folders=("01_lazy",)) -> Path:
    """A copy of the tutorials with only the exercise ``folders`` (exercise 1's)."""
    root = tmp_path / "tutorials"
    root.mkdir()
    for name in ("conftest.py", "_grading.py", "_graphs.py"):
        shutil.copy(TUTORIALS / name, root / name)
    shutil.copytree(TUTORIALS / "_solutions", root / "_solutions")
    for folder in folders:
        shutil.copytree(TUTORIALS / folder, root / folder)
    return root


def grade(root, solutions):
    return subprocess.run([sys.executable, "-m", "batchviz.grade", str(root)], cwd=root.parent,
                          env=clean_env(solutions), capture_output=True, text=True, timeout=300)


def test_grade_command_adds_up_points(tmp_path):
    root = mini_tutorials(tmp_path)
    done = grade(root, solutions=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ex1 01_lazy\s+4/4\s+10/10$", done.stdout, re.M), done.stdout
    assert re.search(r"^total\s+10/10$", done.stdout, re.M), done.stdout


def test_grade_command_survives_a_broken_student_module(tmp_path):
    root = mini_tutorials(tmp_path)
    (root / "01_lazy" / "ex01_lazy.py").write_text("def tanh_layer(:\n")  # a syntax error
    done = grade(root, solutions=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"^total\s+0/10$", done.stdout, re.M), done.stdout


def columns_of(lines) -> list:
    """The ``(start, end)`` of each column of a table of batchviz.grade, from its line of
    dashes (every column has one, whatever its header)."""
    return [m.span() for m in re.finditer(r"-+", lines[1])]


@pytest.mark.parametrize("note", ["", "beats agenda"])
def test_every_leaderboard_column_has_a_header(note):
    """``python -m batchviz.grade`` printed an eighth column (the note) with no header: every
    column has a header now, and no cell lies outside the columns."""
    from batchviz.grade import LeaderboardRow, format_leaderboard

    lines = format_leaderboard([
        LeaderboardRow("Tree-LSTM, 64 trees, seed 0", agenda=260, depth=213, lower_bound=195,
                       optimum=195, student=201, note=note, points=2, possible=3),
        LeaderboardRow("parser", agenda=9, lower_bound=7, note="")])
    spans = columns_of(lines)
    headers = [lines[0][a:b].strip() for a, b in spans]
    assert all(headers), headers
    assert headers == re.split(r" {2,}", lines[0].strip())  # the header count is the column count
    assert headers[-1] == ("note" if note else "points")
    for line in lines[2:]:
        cells = [m.span() for m in re.finditer(r"\S+(?: \S+)*", line)]
        assert len(cells) <= len(spans)
        for a, b in cells:
            assert any(a >= start and b <= end for start, end in spans), (line, a, b)
    if note:
        assert lines[2].endswith("beats agenda")


# --- a newcomer's answers ---------------------------------------------------------------------

#: exercise 4 as a newcomer writes it from the text of ex04_agenda.py alone: counts of pending
#: arguments, the agenda as a dict by signature, ``min`` by priority, and ``view.users()[node]``
#: (documented as ``{node: [users]}``; it raised KeyError for a node without users)
NATURAL_EX4 = """
import batchviz as bv


def average_depths(view):
    depths = {}
    for i in view.nodes:
        depths.setdefault(view.signature[i], []).append(view.depth[i])
    return {s: sum(d) / len(d) for s, d in depths.items()}


def priority(view, sig, average_depth):
    return (average_depth, not view.is_cheap(sig), sig)


class AgendaStrategy(bv.Strategy):
    name = "student-agenda"

    def schedule(self, view):
        users = view.users()
        counts = {i: len(view.pending_args(i)) for i in view.nodes}
        agenda = {}
        for i in view.nodes:
            if counts[i] == 0:
                agenda.setdefault(view.signature[i], []).append(i)
        averages = average_depths(view)
        batches = []
        while agenda:
            sig = min(agenda, key=lambda s: priority(view, s, averages[s]))
            batch = agenda.pop(sig)
            batches.append(batch)
            for node in batch:
                for user in users[node]:
                    counts[user] -= 1
                    if counts[user] == 0:
                        agenda.setdefault(view.signature[user], []).append(user)
        return batches
"""


def grade_exercise_4(tmp_path, answer: str):
    root = mini_tutorials(tmp_path, folders=("04_agenda",))
    (root / "04_agenda" / "ex04_agenda.py").write_text(answer)
    return grade(root, solutions=False)


def test_a_natural_exercise_4_answer_passes(tmp_path):
    done = grade_exercise_4(tmp_path, NATURAL_EX4)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ex4 04_agenda\s+5/5\s+10/10$", done.stdout, re.M), done.stdout


def test_a_broken_schedule_costs_its_points_once(tmp_path):
    """A schedule() that fails loses the schedule's tests (6 points), not the tie-breaks'
    too: the priority test grades priority() alone."""
    broken = NATURAL_EX4.replace("for user in users[node]:", "for user in users[node + 10**6]:")
    done = grade_exercise_4(tmp_path, broken)
    assert done.returncode == 1
    assert re.search(r"^ex4 04_agenda\s+2/5\s+4/10$", done.stdout, re.M), done.stdout


# --- a pytest from outside the venv -----------------------------------------------------------

@pytest.mark.parametrize("missing", ["batchviz", "numpy"])
def test_a_pytest_that_cannot_import_batchviz_says_to_use_the_venv(missing):
    """``pytest tutorials/03_depth`` with a system pytest: simulated by a Python in which
    ``import batchviz`` (or NumPy) fails. One line saying which pytest to use, exit status 4
    (pytest's usage error), no ModuleNotFoundError traceback."""
    code = (f"import sys; sys.modules[{missing!r}] = None; import pytest; "
            "sys.exit(pytest.main(['tutorials/03_depth', '-q', '-p', 'no:cacheprovider']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean_env(False),
                          capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 4, output
    assert f"the tutorials cannot import {missing!r} with the Python that runs this pytest" \
        in output
    assert "`.venv/bin/python -m pytest tutorials/03_depth`" in output
    assert "Traceback" not in output and "ModuleNotFoundError" not in output


# --- the teaching assertions ----------------------------------------------------------------

@pytest.fixture(scope="module")
def grading():
    sys.path.insert(0, str(TUTORIALS))
    try:
        import _grading
        import _graphs
        yield _grading, _graphs
    finally:
        sys.path.remove(str(TUTORIALS))


def figure1_view(_graphs):
    graph, _, _ = _graphs.figure1()
    return graph, PendingView(graph)


def message_of(check, *args):
    with pytest.raises(AssertionError) as info:
        check(*args)
    return str(info.value)


def test_mixed_batch_names_both_nodes_and_signatures(grading):
    _grading, _graphs = grading
    graph, view = figure1_view(_graphs)
    batches = AgendaBatching().schedule(view)
    tanh = next(b for b in batches if graph.ops[b[0]].name == "tanh")
    matmul = next(b for b in batches if graph.ops[b[0]].name == "matmul")
    tanh.append(matmul.pop())
    msg = message_of(_grading.assert_valid_schedule, view, [b for b in batches if b])
    assert re.search(r"batch \d+ mixes node \d+ \(tanh\) and node \d+ \(matmul-W#\d+-7x1\): a batch "
                     r"must share one signature", msg), msg


def test_argument_after_its_user_is_explained(grading):
    _grading, _graphs = grading
    graph, view = figure1_view(_graphs)
    batches = AgendaBatching().schedule(view)
    batches[3], batches[4] = batches[4], batches[3]   # concatenate after its users' matmul
    msg = message_of(_grading.assert_valid_schedule, view, batches)
    assert re.search(r"node \d+ \(matmul-W#\d+-7x1\) runs in batch 3 but its argument node \d+ "
                     r"\(concatenate-4x1\+3x1\) runs in batch 4", msg), msg


def test_scheduling_a_parameter_or_a_node_twice_is_explained(grading):
    _grading, _graphs = grading
    graph, view = figure1_view(_graphs)
    batches = AgendaBatching().schedule(view)
    param = next(iter(graph.param_of_node))
    msg = message_of(_grading.assert_valid_schedule, view, [[param]] + batches)
    assert "parameters are never scheduled" in msg
    msg = message_of(_grading.assert_valid_schedule, view, batches + [batches[0]])
    assert "is scheduled twice" in msg


def test_wrong_partition_is_explained(grading):
    _grading, _graphs = grading
    graph, view = figure1_view(_graphs)
    msg = message_of(_grading.assert_same_partition, graph, view.nodes,
                     lambda n: graph.ops[n].name, "Figure 1")
    assert "cannot be batched" in msg and "shapes differ" in msg
    msg = message_of(_grading.assert_same_partition, graph, view.nodes, lambda n: n, "Figure 1")
    assert "have the same signature in the runtime" in msg


def test_different_agenda_step_shows_the_agenda(grading):
    _grading, _graphs = grading
    graph, view = figure1_view(_graphs)
    batches = AgendaBatching().schedule(view)
    changed = batches[:1] + [batches[2], batches[1]] + batches[3:]
    msg = message_of(_grading.assert_same_schedule, view, batches, changed, "Figure 1")
    assert "batch 1 differs" in msg and "average depth" in msg


def test_grading_helpers_accept_the_runtime_itself(grading):
    _grading, _graphs = grading
    graph, loss, _ = _graphs.parser(n_sentences=3)
    view = PendingView(graph)
    batches = _grading.assert_valid_schedule(view, AgendaBatching().schedule(view))
    _grading.assert_same_schedule(view, batches, AgendaBatching().schedule(view), "parser")
    _grading.assert_same_partition(graph, view.nodes, lambda n: graph.sigs[n], "parser")
    assert np.isfinite(loss.value())
    assert bv.last_run_stats().forward.batches == len(batches)
