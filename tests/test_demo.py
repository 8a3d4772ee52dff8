"""`make demo`, the README's main command: a sample class graded end to end, table printed, in < 60 s."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import time
from pathlib import Path

from autograder.core.registry import lesson_of, lessons

GOLDEN_NAME = "demo_grades.csv"  # in each lesson's golden/ folder (autograder/lessons/<id>/golden/)


def test_demo_grades_the_sample_class_in_under_a_minute(tmp_path):
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "demo", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert elapsed < 60, f"make demo took {elapsed:.1f} s"
    table = proc.stdout
    students = [p for p in (tmp_path / "sample-class").iterdir()]
    assert len(students) >= 20
    for student in students:
        assert student.name in table
    assert "PASS" in table and "fail" in table and "?" in table, "pass/fail and provisional marks are shown"
    assert "unreadable" in table
    for assignment_id in lessons():
        assert assignment_id in table
    # one table per assignment, each with its own items: no column of lesson 16 in lesson 03's table
    sections = {}
    for block in table.split("== ")[1:]:
        sections[block.split(":", 1)[0]] = block
    assert set(sections) == set(lessons())
    for assignment_id, directory in ((k, v.directory) for k, v in lessons().items()):
        header = sections[assignment_id].splitlines()[1].split()
        items = [f"{it.id}/{it.points:g}" for it in lesson_of(directory).rubric.items]
        assert header == ["student", *items, "total", "pass", "status"], header
        rows = sections[assignment_id].split("\n\n")[0].splitlines()[3:]
        students = [line.split()[0] for line in rows]
        assert students and all(s.startswith(assignment_id[:2] + "-") for s in students), students
    assert (tmp_path / "grading" / "grades.csv").is_file()
    assert (tmp_path / "grading" / "gradebook.db").is_file()
    # golden files (otter-grader's habit), one per lesson: the sample class's grades are a generated
    # artefact; `make goldens` refreshes them after an intended change, and the diff is reviewed in the
    # commit. A lesson's golden holds its own columns only, so adding a lesson changes no other golden.
    grading = tmp_path / "grading"
    for found in lessons().values():
        produced = (grading / "grades" / f"{found.id}.csv").read_text(encoding="utf-8")
        golden = found.golden / GOLDEN_NAME
        if os.environ.get("UPDATE_GOLDENS"):
            golden.parent.mkdir(parents=True, exist_ok=True)
            golden.write_text(produced, encoding="utf-8")
        assert produced == golden.read_text(encoding="utf-8"), (
            f"{found.id}: the demo class's grades changed; if intended, run `make goldens` and review the diff"
        )
    # the combined view holds the same rows: each lesson's cells under the same column names
    combined = _rows(grading / "grades.csv")
    per_lesson = [
        row for found in lessons().values() for row in _rows(grading / "grades" / f"{found.id}.csv")
    ]
    assert len(combined) == len(per_lesson)
    by_key = {(r["student_id"], r["assignment_id"]): r for r in combined}
    for row in per_lesson:
        whole = by_key[(row["student_id"], row["assignment_id"])]
        assert {k: whole[k] for k in row} == row
        assert not any(whole[k] for k in set(whole) - set(row)), "another lesson's column holds a value"


def _rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))
