"""`make demo`, the README's main command: a sample class graded end to end, table printed, in < 60 s."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from autograder.batch import known_assignments

GOLDEN = Path(__file__).parent / "golden" / "demo" / "grades.csv"


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
    for assignment_id in known_assignments():
        assert assignment_id in table
    # one table per assignment, each with its own items: no column of lesson 16 in lesson 03's table
    sections = {}
    for block in table.split("== ")[1:]:
        sections[block.split(":", 1)[0]] = block
    assert set(sections) == set(known_assignments())
    for assignment_id, directory in known_assignments().items():
        header = sections[assignment_id].splitlines()[1].split()
        rubric = yaml.safe_load((directory / "rubric.yaml").read_text(encoding="utf-8"))
        items = [f"{it['id']}/{float(it['points']):g}" for it in rubric["items"]]
        assert header == ["student", *items, "total", "pass", "status"], header
        rows = sections[assignment_id].split("\n\n")[0].splitlines()[3:]
        students = [line.split()[0] for line in rows]
        assert students and all(s.startswith(assignment_id[:2] + "-") for s in students), students
    assert (tmp_path / "grading" / "grades.csv").is_file()
    assert (tmp_path / "grading" / "gradebook.db").is_file()
    # golden file (otter-grader's habit): the sample class's grades are a generated artefact;
    # `make goldens` refreshes it after an intended change, and the diff is reviewed in the commit.
    produced = (tmp_path / "grading" / "grades.csv").read_text(encoding="utf-8")
    if os.environ.get("UPDATE_GOLDENS"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(produced, encoding="utf-8")
    assert produced == GOLDEN.read_text(encoding="utf-8"), (
        "the demo class's grades changed; if intended, run `make goldens` and review the diff"
    )
