"""The grading engine end to end: CI's teeth (reference full marks, release zero), the class CLI,
idempotent re-runs, feedback that leaks nothing, and rubric validation."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.classroom.batch import grade_class
from autograder.core.layout import REPO as LAYOUT
from autograder.core.registry import lessons
from autograder.core.rubric import RubricError
from autograder.grading.assignment import Assignment, load_assignment
from autograder.grading.engine import grade_notebook
from autograder.grading.submission import shutdown_workers
from autograder.sandbox.isolation import resolve_isolation

ROOT = LAYOUT.root

ASSIGNMENTS = sorted(lessons())


@pytest.fixture(scope="module")
def isolation():
    mode, text = resolve_isolation("auto")
    yield mode, text
    shutdown_workers()


@pytest.mark.parametrize("assignment_id", ASSIGNMENTS)
def test_reference_notebook_earns_full_marks(assignment_id, isolation):
    """The source notebook goes through the same path as any student and earns every point,
    written answers included (as suggestions)."""
    a = load_assignment(lessons()[assignment_id].directory)
    res = grade_notebook(a, a.source, "reference", *isolation)
    assert res.status == "ok", res.status
    for it in res.items:
        failed = [f"{t.name}: {t.message}" for t in it.tests if not t.passed]
        assert it.score == it.points, f"{it.id}: {it.score}/{it.points} {failed or it.evidence}"
    assert res.passed and res.total == res.max_total + res.max_extra_credit


@pytest.mark.parametrize("assignment_id", ASSIGNMENTS)
def test_unchanged_release_scores_zero_on_code(assignment_id, isolation):
    a = load_assignment(lessons()[assignment_id].directory)
    res = grade_notebook(a, a.release, "release", *isolation)
    assert res.code_total == 0, [(it.id, it.score) for it in res.items]
    assert all(it.score == 0 for it in res.items if it.kind == "written"), "empty answers must earn nothing"
    assert not res.passed


def _sample_class(tmp_path: Path, names: tuple[str, ...]) -> Path:
    from autograder.authoring.demo import build_sample_class

    full = build_sample_class(tmp_path / "all")
    chosen = tmp_path / "class"
    for student in full.iterdir():
        if any(n in student.name for n in names):
            shutil.copytree(student, chosen / student.name)
    return chosen


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_grade_cli_rows_statuses_and_idempotent_rerun(tmp_path, isolation):
    subs = _sample_class(
        tmp_path, ("reference-notebook", "untouched-release", "syntax-error", "truncated-file")
    )
    before = {p: p.read_bytes() for p in subs.rglob("*") if p.is_file()}
    out = tmp_path / "out"
    flag = "bwrap" if isolation[0] == "bwrap" else "none"  # `grade` never falls back by itself
    cmd = [sys.executable, "-m", "autograder", "grade", str(subs), "--out", str(out), "--isolation", flag]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "isolation:" in first.stderr
    rows = _rows(out / "grades.csv")
    assert len(rows) == len(list(subs.glob("*/*")))
    by_student = {r["student_id"]: r for r in rows}
    for sid, row in by_student.items():
        if "reference-notebook" in sid:
            assert row["status"] == "ok" and row["passed"] == "true" and row["provisional"] == "true"
            assert float(row["code_total"]) == sum(
                it.points
                for it in load_assignment(lessons()[row["assignment_id"]].directory).items
                if it.is_code and not it.extra_credit
            )
        elif "truncated-file" in sid:
            assert row["status"].startswith("unreadable"), row
            assert float(row["total"]) == 0
        else:
            assert float(row["code_total"]) == 0, row
    for sid, row in by_student.items():
        page = out / "feedback" / sid / f"{row['assignment_id']}.html"
        assert page.is_file()
    csv_before = (out / "grades.csv").read_text(encoding="utf-8")
    t0 = time.monotonic()
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert (out / "grades.csv").read_text(encoding="utf-8") == csv_before
    assert "(unchanged)" in second.stderr
    assert time.monotonic() - t0 < 60
    after = {p: p.read_bytes() for p in subs.rglob("*") if p.is_file()}
    assert after == before, "submissions must never be modified"


def test_feedback_never_shows_hidden_inputs_or_test_source(tmp_path, isolation):
    subs = _sample_class(tmp_path, ("sim-ignores-upstream", "untouched-release"))
    out = tmp_path / "out"
    grade_class(subs, out, isolation="auto", quiet=True)
    pages = "".join(p.read_text(encoding="utf-8") for p in (out / "feedback").rglob("*.html"))
    assert "✘" in pages, "a wrong submission must show failing tests"
    for directory in (v.directory for v in lessons().values()):
        for test_file in directory.glob("test_*.py"):
            for line in test_file.read_text(encoding="utf-8").splitlines():
                code = line.strip()
                if (
                    len(code) > 30
                    and not code.startswith(("#", '"', "'", "assert", 'f"', "f'"))
                    and "=" in code
                ):
                    assert code not in pages, f"feedback leaks hidden-test code: {code}"
    assert "random.Random" not in pages and "def test_" not in pages


def _tiny_assignment(tmp_path: Path, tests: str, items: str) -> Path:
    d = tmp_path / "tiny"
    d.mkdir()
    (d / "rubric.yaml").write_text(
        f"assignment: tiny\nnotebook: tiny\npass_line: 1\nitems:\n{items}", encoding="utf-8"
    )
    (d / "test_tiny.py").write_text(tests, encoding="utf-8")
    return d


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")
def test_rubric_rejects_edge_weight_above_a_quarter(tmp_path):
    tests = (
        "from autograder.testing import item\n"
        "@item('a', weight=1)\ndef test_core(sub): pass\n"
        "@item('a', weight=1, edge=True)\ndef test_edge(sub): pass\n"
    )
    d = _tiny_assignment(tmp_path, tests, "  - {id: a, kind: code, points: 2}\n")
    release = tmp_path / "tiny.ipynb"
    release.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    with pytest.raises(RubricError, match="quarter"):
        Assignment.load(d, release=release)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")
def test_rubric_rejects_tests_for_unknown_items_and_items_without_tests(tmp_path):
    release = tmp_path / "tiny.ipynb"
    release.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    d = _tiny_assignment(
        tmp_path,
        "from autograder.testing import item\n@item('zzz')\ndef test_x(sub): pass\n",
        "  - {id: a, kind: code, points: 2}\n",
    )
    with pytest.raises(RubricError, match="zzz"):
        Assignment.load(d, release=release)


def test_check_command_validates_every_rubric():
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "check"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(a in proc.stdout for a in ASSIGNMENTS)


def test_bad_input_gives_clear_errors(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(tmp_path / "nope"), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "not a directory" in proc.stderr


def test_rubric_rejects_written_items_without_criteria(tmp_path):
    release = tmp_path / "tiny.ipynb"
    release.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    d = _tiny_assignment(tmp_path, "", "  - {id: q9, kind: written, points: 2}\n")
    with pytest.raises(RubricError, match="no criteria"):
        Assignment.load(d, release=release)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")
def test_credit_per_part_of_a_test(tmp_path):
    """``@item(parts=...)``: each part of a test earns its share; a failure outside every part (the
    wrong shape, a call that raised) earns nothing; timeouts still end the test."""
    from autograder.grading.scoring import run_tests, score_items

    tests = (
        "from autograder.testing import CallTimeout, item, part\n"
        "@item('a', weight=4, parts={'x': 1, 'y': 3})\n"
        "def test_parts(sub):\n"
        "    for case in range(3):\n"
        "        with part('x'):\n"
        "            assert sub['x'] or case < 2, 'x wrong'\n"
        "        with part('y'):\n"
        "            assert sub['y'], 'y wrong'\n"
        "        if sub['timeout']:\n"
        "            with part('y'):\n"
        "                raise CallTimeout('too slow')\n"
        "@item('a', weight=2, parts={'x': 1, 'y': 1})\n"
        "def test_shape_first(sub):\n"
        "    assert sub['shape'], 'shape wrong'\n"
        "    with part('x'):\n"
        "        assert sub['x']\n"
        "    with part('y'):\n"
        "        assert sub['y']\n"
        "@item('a', weight=2)\n"
        "def test_plain(sub):\n"
        "    assert sub['x'] and sub['y']\n"
    )
    d = _tiny_assignment(tmp_path, tests, "  - {id: a, kind: code, points: 8}\n")
    release = tmp_path / "tiny.ipynb"
    release.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    a = Assignment.load(d, release=release)

    def score(**sub):
        outcomes = run_tests(a, {"x": True, "y": True, "shape": True, "timeout": False, **sub})
        return [o.credit for o in outcomes], score_items(a, outcomes, {})[0].score, outcomes

    assert score()[:2] == ([1.0, 1.0, 1.0], 8.0)
    credits, total, outcomes = score(x=False)  # x fails in the last case only: the whole x part is lost
    assert credits == [0.75, 0.5, 0.0] and total == pytest.approx(8 * (3 + 1) / 8)
    assert not outcomes[0].passed and outcomes[0].message == "x wrong"
    assert [p["passed"] for p in outcomes[0].parts] == [False, True]
    assert score(shape=False)[0] == [1.0, 0.0, 1.0]  # outside every part: nothing
    credits, _, outcomes = score(timeout=True)  # a timeout is never swallowed by a part
    assert credits[0] == 0.0 and "too slow" in outcomes[0].message
