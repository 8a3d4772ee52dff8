"""``grades.csv``: one row per student and assignment, with the scores the instructor confirmed in formgrader.

``export(OUT)`` is the final step after review: it reads every ``OUT/results/<student>/<assignment>.json``,
takes the confirmed written scores from the gradebook (``autograder.gradebook.confirmed_scores``), stores
them back into the result JSON and writes ``OUT/grades.csv``. ``write_grades_csv`` is the shared writer
that ``grade`` uses too.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path

from . import gradebook
from .results import SubmissionResult, atomic_write_text
from .safe_text import csv_cell

FIXED_HEAD = ["student_id", "assignment_id"]
# code_total: regular code items; extra_credit: extra-credit items; total = every item's score (extra credit
# included, so it can exceed max_total); max_total: regular items' points; passed: total >= pass line.
# with a late policy (course.yaml), after total (the raw total): the submission time (UTC), started days
# late, the penalty in points and final_total = total - late_penalty (passed is judged on final_total)
LATE_COLUMNS = ["submitted_at", "late_days", "late_penalty", "final_total"]
FIXED_TAIL = ["code_total", "extra_credit", "total", "max_total", "passed", "provisional", "status"]
# when some written answer was flagged (hidden content, invisible characters, duplicated cells, not scored),
# a last column lists each row's flags as "<item>: <flag>; ..."
FLAGS_COLUMN = "review_flags"


def _flags(r: SubmissionResult) -> str:
    return "; ".join(f"{it.id}: {f}" for it in r.items for f in it.flags)


def _num(x: float | None) -> str:
    if x is None:
        return ""
    return f"{round(float(x), 4):g}"


def _bool(b: bool) -> str:
    return "true" if b else "false"


def write_grades_csv(out_dir: Path | str, results: Iterable[SubmissionResult]) -> Path:
    """Write ``OUT/grades.csv`` atomically. Item columns are the results' item ids in rubric order (the
    order of ``SubmissionResult.items``); with several assignments, each new id is appended in order of
    first appearance and a row leaves the columns of other assignments' items empty. Text cells go through
    :func:`autograder.safe_text.csv_cell` (no spreadsheet formulas, no control characters)."""
    results = sorted(results, key=lambda r: (r.assignment_id, r.student_id))
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
            + [_num(scores.get(c)) for c in item_cols]
            + [
                _num(r.code_total),
                _num(r.extra_credit),
                _num(r.total),
            ]
            + (
                [csv_cell(r.submitted_at), str(r.late_days), _num(r.late_penalty), _num(r.final_total)]
                if late
                else []
            )
            + [
                _num(r.max_total),
                _bool(r.passed),
                _bool(r.provisional),
                csv_cell(r.status),
            ]
            + ([csv_cell(_flags(r))] if flagged else [])
        )
    path = Path(out_dir) / "grades.csv"
    atomic_write_text(path, buf.getvalue())
    return path


def load_results(out_dir: Path | str) -> list[tuple[Path, SubmissionResult]]:
    """Every stored result under ``OUT/results/<student>/<assignment>.json``."""
    root = Path(out_dir) / "results"
    return [(p, SubmissionResult.load(p)) for p in sorted(root.glob("*/*.json"))]


def refresh_confirmed(out_dir: Path | str, results: Iterable[SubmissionResult]) -> list[SubmissionResult]:
    """Apply the gradebook's confirmed written scores to the results in place; returns those that changed."""
    results = list(results)
    confirmed = gradebook.confirmed_scores_many(
        gradebook.db_url_for(out_dir), [(r.assignment_id, r.student_id) for r in results]
    )
    return [r for r in results if gradebook.apply_confirmed(r, confirmed[(r.assignment_id, r.student_id)])]


def export(out_dir: Path | str) -> Path:
    """After review in formgrader: update each result JSON's confirmed scores and write ``grades.csv``."""
    out = Path(out_dir)
    pairs = load_results(out)
    results = [r for _, r in pairs]
    if (out / gradebook.DB_NAME).exists():
        changed = {id(r) for r in refresh_confirmed(out, results)}
        if changed:
            from .course import reapply

            reapply(out, [r for r in results if id(r) in changed])
        for path, r in pairs:
            if id(r) in changed:
                r.save(path)
    return write_grades_csv(out, results)
