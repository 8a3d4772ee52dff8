"""Small things that misled: the progress line's rate before it means anything ("1/10 123.4/s"), a
submission whose only code is an IndentationError shown as status "ok", `make lint` running the format
check twice."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from autograder.authoring.demo import reference_cells, with_code
from autograder.classroom import batch
from autograder.classroom.batch import Progress
from autograder.core.registry import lessons
from autograder.grading.assignment import load_assignment
from autograder.grading.engine import grade_notebook
from autograder.grading.submission import shutdown_workers

ROOT = Path(__file__).resolve().parent.parent
A = "16-asymmetric-pipeline"


def test_progress_shows_a_rate_only_once_it_means_something(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(batch.time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    p = Progress(10, stream)
    for i in range(3):  # unchanged submissions: instant, not grading
        now[0] += 0.001
        p.step(f"s{i} (unchanged)", graded=False)
    first = stream.getvalue().splitlines()[0]
    assert re.search(r"\] 1/10  s0 \(unchanged\)$", first), first
    assert "/s" not in stream.getvalue()
    now[0] += 0.5
    p.step("s3 9/10")
    assert p.rate_text() == ""  # one graded submission in half a second: no rate yet
    now[0] += 1.5  # 2 graded in 2 s since the start
    p.done = 9
    p.step("s4 8/10")
    last = stream.getvalue().splitlines()[-1]
    assert "10/10 · 1.0/s  s4 8/10" in last, last  # done: no time left to show
    p2 = Progress(10, io.StringIO())
    p2.graded, p2.done = 4, 4
    now[0] = p2.start + 2.0
    assert p2.rate_text() == " · 2.0/s · ~3 s left"


@pytest.fixture(scope="module")
def assignment():
    yield load_assignment(lessons()[A].directory)
    shutdown_workers()


def _grade(assignment, nb: dict, tmp_path: Path):
    path = tmp_path / A / "asymmetric_pipeline.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return grade_notebook(assignment, path, "s", "auto", "test")


def test_indentation_error_only_is_not_ok(assignment, tmp_path):
    release = json.loads(assignment.release.read_text(encoding="utf-8"))
    broken = "class AsymmetricPipelineScheduler:\n    def f(self):\n        return 1\n      x = 2\n"
    result = _grade(assignment, with_code(release, broken), tmp_path)
    assert result.status.startswith("code did not load: code cell ") and "IndentationError" in result.status
    assert result.code_total == 0


def test_one_broken_cell_beside_working_code_stays_graded(assignment, tmp_path):
    """Only the challenge cell is broken: the rest loads and scores, so the status stays "ok" (the
    cell's error is in the notes)."""
    code = reference_cells(Path(assignment.directory))["exercise"]
    nb = with_code(json.loads(assignment.release.read_text(encoding="utf-8")), code)
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "challenge-exercise":
            cell["source"] = "def simulate_1f1b(f, b, m):\n  return 1\n    x = 2\n"
    result = _grade(assignment, nb, tmp_path)
    assert result.status == "ok" and result.code_total == 4
    assert any("IndentationError" in m for m in result.messages)


def test_make_lint_checks_the_format_once():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    lint = re.search(r"^lint:.*?\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert lint.count("ruff format --check") == 1 and lint.count("ruff check") == 1, lint
