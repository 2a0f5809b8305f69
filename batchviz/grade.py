"""Points for the course exercises in ``tutorials/``: a pytest plugin and a summary command.

Every grading test carries two markers: its exercise (``@pytest.mark.ex3``) and what it is
worth (``@pytest.mark.points(2)``). :class:`PointsReport` is a pytest plugin (registered by
``tutorials/conftest.py``) that adds up the points of the passed tests per exercise and
prints them at the end of the run, with the challenge's leaderboard when exercise 6 ran::

    pytest tutorials/03_depth            # one exercise: its tests, then its points
    python -m batchviz.grade tutorials    # every exercise, one pytest run each, and a total

The summary command runs each exercise folder in its own pytest process, so that a broken
exercise (say, a syntax error in a student's module) costs that exercise's points and no
others. ``BATCHVIZ_SOLUTIONS=1`` grades the reference solutions instead of the stubs.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

#: where a PointsReport also writes its results as JSON (used by the summary command)
REPORT_ENV = "BATCHVIZ_GRADE_REPORT"
_EXERCISE = re.compile(r"^ex(\d+)$")


@dataclass
class TestResult:
    nodeid: str
    exercise: str          # "ex3"
    folder: str            # "03_depth"
    points: float
    outcome: str = "not run"   # passed / failed / error / skipped / not run
    message: str = ""


@dataclass
class LeaderboardRow:
    """One graph of the challenge: batch counts of the baselines and of the student, the
    lower bound and, where it is known, the optimum (``bv.optimal_schedule``)."""

    graph: str
    agenda: int
    depth: int | None = None
    lower_bound: int | None = None
    optimum: int | None = None
    student: int | None = None
    note: str = ""
    points: float = 0.0
    possible: float = 0.0


@dataclass
class Totals:
    earned: float = 0.0
    possible: float = 0.0
    passed: int = 0
    tests: int = 0


def _points_of(item) -> float:
    marker = item.get_closest_marker("points")
    if marker is None:
        return 1.0
    if len(marker.args) != 1 or not isinstance(marker.args[0], (int, float)):
        raise ValueError(f"{item.nodeid}: write @pytest.mark.points(n) with one number")
    return float(marker.args[0])


def _exercise_of(item) -> str:
    names = [m.name for m in item.iter_markers() if _EXERCISE.match(m.name)]
    return names[0] if names else "ex?"


class PointsReport:
    """pytest plugin: points per exercise from ``@pytest.mark.points(n)`` and ``exN`` markers."""

    def __init__(self):
        self.results: dict[str, TestResult] = {}
        self.leaderboard: dict[str, LeaderboardRow] = {}
        self._board_tests: dict[str, str] = {}   # nodeid -> leaderboard graph

    # --- hooks -------------------------------------------------------------------------------
    def pytest_collection_finish(self, session):
        for item in session.items:           # after -m / -k deselection
            folder = Path(str(item.fspath)).parent.name
            self.results[item.nodeid] = TestResult(item.nodeid, _exercise_of(item), folder,
                                                   _points_of(item))
            board = item.get_closest_marker("leaderboard")
            if board is not None:
                self._board_tests[item.nodeid] = board.args[0]

    def pytest_runtest_logreport(self, report):
        result = self.results.get(report.nodeid)
        if result is None:
            return
        if report.when == "call":
            result.outcome = report.outcome
        elif report.failed:            # setup or teardown broke: an error, not a failure
            result.outcome = "error"
        elif report.skipped and report.when == "setup":
            result.outcome = "skipped"
        if report.failed and not result.message:
            result.message = _short_message(report)

    def pytest_terminal_summary(self, terminalreporter):
        if not self.results:
            return
        write = terminalreporter.write_line
        for graph, row in self._board_points().items():
            self.leaderboard[graph].points, self.leaderboard[graph].possible = row
        terminalreporter.section("batchviz points")
        for line in format_points(self.per_exercise()):
            write(line)
        if self.leaderboard:
            terminalreporter.section("challenge leaderboard (batches per graph, fewer is better)")
            for line in format_leaderboard(list(self.leaderboard.values())):
                write(line)
        path = os.environ.get(REPORT_ENV)
        if path:
            Path(path).write_text(json.dumps(self.to_dict(), indent=1))

    # --- results -----------------------------------------------------------------------------
    def record_leaderboard(self, row: LeaderboardRow) -> None:
        self.leaderboard[row.graph] = row

    def _board_points(self) -> dict:
        earned: dict[str, list] = {}
        for nodeid, graph in self._board_tests.items():
            result = self.results[nodeid]
            e = earned.setdefault(graph, [0.0, 0.0])
            e[1] += result.points
            if result.outcome == "passed":
                e[0] += result.points
        return {g: tuple(v) for g, v in earned.items() if g in self.leaderboard}

    def per_exercise(self) -> dict:
        """``{(exercise, folder): Totals}`` in exercise order."""
        totals: dict[tuple, Totals] = {}
        for r in self.results.values():
            t = totals.setdefault((r.exercise, r.folder), Totals())
            t.possible += r.points
            t.tests += 1
            if r.outcome == "passed":
                t.earned += r.points
                t.passed += 1
        return dict(sorted(totals.items(), key=lambda kv: _exercise_number(kv[0][0])))

    def to_dict(self) -> dict:
        return {
            "tests": [vars(r) for r in self.results.values()],
            "leaderboard": [vars(r) for r in self.leaderboard.values()],
        }


def _exercise_number(name: str) -> int:
    m = _EXERCISE.match(name)
    return int(m.group(1)) if m else 10**6


def _short_message(report) -> str:
    text = str(report.longrepr) if report.longrepr is not None else ""
    for line in reversed(text.splitlines()):
        if line.startswith("E "):
            return line[1:].strip()[:300]
    return text.strip().splitlines()[-1][:300] if text.strip() else ""


def _number(x: float) -> str:
    return f"{x:g}"


def format_points(per_exercise: dict) -> list[str]:
    rows = [("exercise", "tests passed", "points")]
    earned = possible = 0.0
    for (exercise, folder), t in per_exercise.items():
        rows.append((f"{exercise} {folder}", f"{t.passed}/{t.tests}",
                     f"{_number(t.earned)}/{_number(t.possible)}"))
        earned += t.earned
        possible += t.possible
    rows.append(("total", "", f"{_number(earned)}/{_number(possible)}"))
    return _table(rows)


def format_leaderboard(rows: list) -> list[str]:
    """The challenge's table: one row per graph, a header for every column (the ``note``
    column - "optimal", "beats agenda", the error a strategy raised - only where a row has
    one)."""
    def cell(x):
        return "-" if x is None else str(x)
    notes = any(r.note for r in rows)
    table = [("graph", "agenda", "depth", "lower bound", "optimum", "yours", "points")
             + (("note",) if notes else ())]
    for r in rows:
        table.append((r.graph, cell(r.agenda), cell(r.depth), cell(r.lower_bound), cell(r.optimum),
                      cell(r.student), f"{_number(r.points)}/{_number(r.possible)}")
                     + ((r.note,) if notes else ()))
    return _table(table)


def _table(rows: list) -> list[str]:
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    if len(lines) > 3 and rows[-1][0] == "total":
        lines.insert(len(lines) - 1, "  ".join("-" * w for w in widths))
    return lines


# --- the summary command ---------------------------------------------------------------------

def exercise_folders(root: Path) -> list[Path]:
    """The exercise folders under ``root``: ``NN_name`` directories with test files."""
    folders = [p for p in sorted(root.iterdir())
               if p.is_dir() and re.match(r"^\d+_", p.name) and any(p.glob("test_*.py"))]
    if not folders:
        raise SystemExit(f"no exercise folders (like 03_depth/ with test_*.py files) in {root}")
    return folders


def grade(root: Path, pytest_args=(), echo=print) -> dict:
    """Run pytest on each exercise folder of ``root``; return the merged results."""
    import tempfile

    merged = {"tests": [], "leaderboard": []}
    for folder in exercise_folders(root):
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "points.json"
            env = dict(os.environ, **{REPORT_ENV: str(report)})
            cmd = [sys.executable, "-m", "pytest", str(folder), "-q", "-p", "no:cacheprovider",
                   "--no-header", "-rN", *pytest_args]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if report.exists():
                data = json.loads(report.read_text())
                merged["tests"] += data["tests"]
                merged["leaderboard"] += data["leaderboard"]
                outcomes = Counter(t["outcome"] for t in data["tests"])
                echo(f"{folder.name}: " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items())))
            else:
                echo(f"{folder.name}: pytest could not run the exercise (exit code "
                     f"{done.returncode}):")
                echo("\n".join(done.stdout.strip().splitlines()[-15:]))
                merged["tests"].append(vars(TestResult(str(folder), "ex?", folder.name, 0.0, "error",
                                                       "collection failed")))
    return merged


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m batchviz.grade",
        description="Grade the batchviz course exercises: run each exercise's tests, print points.")
    parser.add_argument("root", nargs="?", default="tutorials", help="the tutorials folder")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also list every test that did not pass, with its message")
    args = parser.parse_args(argv)
    root = Path(args.root)
    if not root.is_dir():
        parser.error(f"{root} is not a folder; pass the path of the tutorials folder")
    who = "reference solutions" if os.environ.get("BATCHVIZ_SOLUTIONS") == "1" else "your code"
    print(f"grading {who} in {root}/ ...")
    merged = grade(root)
    report = PointsReport()
    for t in merged["tests"]:
        report.results[t["nodeid"]] = TestResult(**t)
    print()
    print("\n".join(format_points(report.per_exercise())))
    if merged["leaderboard"]:
        print()
        print("challenge leaderboard (batches per graph, fewer is better)")
        print("\n".join(format_leaderboard([LeaderboardRow(**r) for r in merged["leaderboard"]])))
    if args.verbose:
        lost = [t for t in merged["tests"] if t["outcome"] != "passed"]
        if lost:
            print()
            for t in lost:
                print(f"{t['outcome'].upper():7} {t['nodeid']}: {t['message']}")
    total = sum(t.earned for t in report.per_exercise().values())
    possible = sum(t.possible for t in report.per_exercise().values())
    return 0 if total == possible else 1


if __name__ == "__main__":
    sys.exit(main())
