"""Grades as CSV: one row per student and assignment, with the scores the instructor confirmed in formgrader.

Two views of the same rows, written together:

* ``OUT/grades/<assignment>.csv``: one file per assignment, with that assignment's item columns only. Its
  layout depends on that lesson's rubric alone, so adding a lesson to the course changes nothing in it:
  read these in scripts.
* ``OUT/grades.csv``: the combined view (every assignment's rows, sorted by assignment then student; the
  item columns are the union of the assignments' items, so a lesson's row leaves the others' columns
  empty, and two lessons' items with the same id share a column). Kept as it always was for existing users.

``export(OUT)`` is the final step after review: it reads every ``OUT/results/<student>/<assignment>.json``,
takes the confirmed written scores from the gradebook (``autograder.gradebook.reading.confirmed_scores``), stores
them back into the result JSON, regenerates the feedback pages and writes both views. ``write_grades_csv``
is the shared writer that ``grade`` uses too.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from autograder.classroom.confirmed import refresh
from autograder.classroom.review_feedback import write_pages
from autograder.core import numbers
from autograder.core.files import atomic_write_text
from autograder.core.layout import CourseDir
from autograder.core.registry import lessons
from autograder.core.results import SubmissionResult
from autograder.core.safe_text import csv_cell
from autograder.intake.course import CourseError, load_course

FIXED_HEAD = ["student_id", "assignment_id"]
# code_total: regular code items; extra_credit: extra-credit items; total = every item's score (extra credit
# included, so it can exceed max_total); max_total: regular items' points; passed: total >= pass line.
# with a late policy (course.yaml), after total (the raw total): the submission time (UTC, then in the
# course's timezone with its offset), started days late, the penalty in points and
# final_total = total - late_penalty (passed is judged on final_total)
LATE_COLUMNS = ["submitted_at", "submitted_local", "late_days", "late_penalty", "final_total"]
FIXED_TAIL = ["code_total", "extra_credit", "total", "max_total", "passed", "provisional", "status"]
# when some written answer was flagged (hidden content, invisible characters, duplicated cells, not scored),
# a last column lists each row's flags as "<item>: <flag>; ..."
FLAGS_COLUMN = "review_flags"


def _flags(r: SubmissionResult) -> str:
    return "; ".join(f"{it.id}: {f}" for it in r.items for f in it.flags)


def _bool(b: bool) -> str:
    return "true" if b else "false"


def _course_zone(out: Path):
    try:
        return load_course(out / "course.yaml").zone if (out / "course.yaml").is_file() else None
    except CourseError:
        return None


def _local(submitted_at: str, zone) -> str:
    """The UTC submission time in the course's zone (``2026-12-07T21:10:00+08:00``)."""
    if not submitted_at or zone is None:
        return ""
    return datetime.fromisoformat(submitted_at).astimezone(zone).isoformat()


def write_grades_csv(out_dir: Path | str, results: Iterable[SubmissionResult]) -> Path:
    """Write ``OUT/grades.csv`` and ``OUT/grades/<assignment>.csv`` for every registered lesson among
    ``results`` (atomically, each); returns the combined file's path."""
    results = sorted(results, key=lambda r: (r.assignment_id, r.student_id))
    course = CourseDir(Path(out_dir))
    known = lessons()
    by_assignment: dict[str, list[SubmissionResult]] = {}
    for r in results:
        if r.assignment_id in known:
            by_assignment.setdefault(r.assignment_id, []).append(r)
    zone = _course_zone(course.root)
    for assignment_id, rows in by_assignment.items():
        atomic_write_text(course.assignment_grades_csv(assignment_id), grades_csv_text(rows, zone))
    atomic_write_text(course.grades_csv, grades_csv_text(results, zone))
    return course.grades_csv


def grades_csv_text(results: list[SubmissionResult], zone=None) -> str:
    """The CSV of ``results`` (in the given order). Item columns are the results' item ids in rubric order
    (the order of ``SubmissionResult.items``); with several assignments, each new id is appended in order
    of first appearance and a row leaves the columns of other assignments' items empty. Text cells go
    through :func:`autograder.core.safe_text.csv_cell` (no spreadsheet formulas, no control characters)."""
    item_cols: list[str] = []
    for r in results:
        for it in r.items:
            if it.id not in item_cols:
                item_cols.append(it.id)
    late = any(r.late_note for r in results)  # a course file gave some assignment a late policy
    tail = FIXED_TAIL[:3] + LATE_COLUMNS + FIXED_TAIL[3:] if late else FIXED_TAIL
    flagged = any(it.flags for r in results for it in r.items)
    tail = tail + [FLAGS_COLUMN] if flagged else tail
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([csv_cell(c) for c in FIXED_HEAD + item_cols + tail])
    for r in results:
        scores = {it.id: it.score for it in r.items}
        w.writerow(
            [csv_cell(r.student_id), csv_cell(r.assignment_id)]
            + [numbers.score_cell(scores.get(c)) for c in item_cols]
            + [
                numbers.score_cell(r.code_total),
                numbers.score_cell(r.extra_credit),
                numbers.score_cell(r.total),
            ]
            + (
                [
                    csv_cell(r.submitted_at),
                    csv_cell(_local(r.submitted_at, zone)),
                    str(r.late_days),
                    numbers.score_cell(r.late_penalty),
                    numbers.score_cell(r.final_total),
                ]
                if late
                else []
            )
            + [
                numbers.score_cell(r.max_total),
                _bool(r.passed),
                _bool(r.provisional),
                csv_cell(r.status),
            ]
            + ([csv_cell(_flags(r))] if flagged else [])
        )
    return buf.getvalue()


def export(out_dir: Path | str) -> Path:
    """After review in formgrader: update each result JSON's confirmed scores, regenerate every feedback
    page with them and the instructor's comments (:mod:`autograder.classroom.review_feedback`), write
    ``grades.csv``."""
    out = Path(out_dir)
    results = refresh(out)
    write_pages(out, results)
    return write_grades_csv(out, results)
