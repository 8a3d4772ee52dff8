"""The class report: what a graded class did and did not understand, and which submissions look alike.

``python -m autograder report --out OUT`` (and every unsharded ``grade`` / ``merge``) reads what grading
saved in OUT and writes

* ``OUT/report/index.html``: one page per class, opened from disk (no server, no network, no script: every
  figure is inline SVG drawn by matplotlib, every text from a submission escaped, a Content-Security-Policy
  that allows no script, fetch, form or frame). Per assignment: score distribution per item and of the
  total; pass rate per hidden test (its difficulty); discrimination per test and per item; met rate per
  criterion of each written item; the most common failure messages with counts; submission times against
  the due date (``OUT/course.yaml``); similar submissions (code and written answers, side by side).
* ``OUT/report/items.csv``: the numbers of the page, one row per total, item, test and criterion.
* ``OUT/report/similarity.csv``: every code pair at or above the threshold and every pair of each written
  answer group.

The numbers are :mod:`autograder.review.report_data`'s (defined in its docstring), the page
:mod:`autograder.review.report_page`'s; this module writes the CSVs and builds all three.

Nothing here writes the gradebook, a result or a grade.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime
from pathlib import Path

from autograder.classroom.confirmed import load_results
from autograder.core import numbers
from autograder.core.registry import lessons
from autograder.core.results import atomic_write_text
from autograder.core.safe_text import csv_cell
from autograder.intake.course import CourseError, load_course
from autograder.review.report_data import AssignmentReport, compute, describe, similarity_findings
from autograder.review.report_page import render

REPORT_DIR = "report"

__all__ = ["build", "items_csv", "similarity_csv", "CSV_HEAD"]


# ---------------------------------------------------------------------------------------------- CSVs
CSV_HEAD = [
    "assignment_id",
    "level",
    "item",
    "id",
    "points",
    "weight",
    "n",
    "mean",
    "sd",
    "min",
    "median",
    "max",
    "pass_rate",
    "mean_credit",
    "discrimination",
    "met_rate",
]


def items_csv(reports: list[AssignmentReport]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEAD)
    for rep in reports:
        aid = csv_cell(rep.assignment_id)
        for st in [rep.total, *rep.items]:
            s = st.summary
            level = "total" if st is rep.total else "item"
            w.writerow(
                [
                    aid,
                    level,
                    "" if level == "total" else csv_cell(st.id),
                    csv_cell(st.id),
                    numbers.score_cell(st.points),
                    "",
                ]
                + [str(s["n"])]
                + [numbers.score_cell(s[k]) for k in ("mean", "sd", "min", "median", "max")]
                + ["", "", numbers.score_cell(st.discrimination), ""]
            )
        for t in rep.tests:
            s = describe(t.credits)
            w.writerow(
                [aid, "test", csv_cell(t.item), csv_cell(t.name), "", numbers.score_cell(t.weight), str(t.n)]
                + [numbers.score_cell(s[k]) for k in ("mean", "sd", "min", "median", "max")]
                + [
                    numbers.score_cell(t.pass_rate),
                    numbers.score_cell(t.mean_credit),
                    numbers.score_cell(t.discrimination),
                    "",
                ]
            )
        for c in rep.criteria:
            w.writerow(
                [
                    aid,
                    "criterion",
                    csv_cell(c.item),
                    csv_cell(c.criterion),
                    numbers.score_cell(c.points),
                    "",
                    str(c.n),
                ]
                + [""] * 5
                + ["", "", "", numbers.score_cell(c.met_rate)]
            )
    return buf.getvalue()


SIMILARITY_HEAD = [
    "assignment_id",
    "kind",
    "item",
    "student_a",
    "student_b",
    "score",
    "cover_a",
    "cover_b",
    "shared",
]


def similarity_csv(reports: list[AssignmentReport]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SIMILARITY_HEAD)
    for rep in reports:
        f = rep.similarity
        if f is None:
            continue
        for p in f.flagged:
            w.writerow(
                [csv_cell(rep.assignment_id), "code", "", csv_cell(p.a.student_id), csv_cell(p.b.student_id)]
                + [
                    numbers.score_cell(p.score),
                    numbers.score_cell(p.cover_a),
                    numbers.score_cell(p.cover_b),
                    str(p.common),
                ]
            )
        for g in f.written:
            for i, a in enumerate(g.members):
                for b in g.members[i + 1 :]:
                    w.writerow(
                        [csv_cell(rep.assignment_id), "written", csv_cell(g.item)]
                        + [
                            csv_cell(a.student_id),
                            csv_cell(b.student_id),
                            numbers.score_cell(g.similarity),
                            "",
                            "",
                            "",
                        ]
                    )
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- build
def _rubrics() -> dict[str, dict]:
    """Each lesson's rubric as ``compute`` reads it (title, and the items as written), from the registry."""
    return {
        aid: {"title": found.rubric.title, "items": [it.spec for it in found.rubric.items]}
        for aid, found in lessons().items()
    }


def build(out_dir: Path | str, similarity: bool = True) -> Path:
    """Write ``OUT/report/index.html``, ``items.csv`` and ``similarity.csv``; return the page's path."""
    import matplotlib

    matplotlib.use("Agg")

    out = Path(out_dir).resolve()
    results = [r for _, r in load_results(out)]
    policies = {}
    if (out / "course.yaml").is_file():
        try:
            policies = load_course(out / "course.yaml")
        except CourseError:
            policies = {}
    reports = compute(results, policies, _rubrics())
    for rep in reports:
        if not similarity:
            rep.similarity_note = "Similarity check skipped (report --no-similarity)."
        elif rep.graded:
            rep.similarity = similarity_findings(out, rep)
            if rep.similarity is None:
                rep.similarity_note = "This assignment is not known to this grader: no similarity check."
    folder = out / REPORT_DIR
    stamp = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    atomic_write_text(folder / "items.csv", items_csv(reports))
    atomic_write_text(folder / "similarity.csv", similarity_csv(reports))
    page = folder / "index.html"
    atomic_write_text(page, render(reports, generated=stamp))
    return page
