"""Scores read back from the gradebook: what the instructor confirmed (``manual_score``), applied to results."""

from __future__ import annotations

from collections.abc import Iterable

from autograder.core.results import SubmissionResult
from autograder.gradebook.database import _chunks, _tables, session


def confirmed_value(grade: dict) -> float | None:
    """The instructor's score of a written cell (a grade row), or None while it still needs manual grading."""
    if grade["manual_score"] is None or grade["needs_manual_grade"]:
        return None
    return float(grade["manual_score"]) + float(grade["extra_credit"] or 0.0)


def apply_confirmed(result: SubmissionResult, confirmed: dict) -> bool:
    """Put confirmed scores on the written items: ``confirmed`` and ``score`` (confirmed, else the
    suggestion). Returns True if anything changed."""
    changed = False
    for item in result.items:
        if item.kind != "written" or item.id not in confirmed:
            continue
        value = confirmed[item.id]
        fallback = item.suggestion if item.suggestion is not None else item.score
        score = value if value is not None else fallback
        if item.confirmed != value or item.score != score:
            item.confirmed, item.score = value, score
            changed = True
    return changed


def confirmed_scores(gb_url: str, assignment_id: str, student_id: str) -> dict[str, float | None]:
    """Written item id -> the score the instructor set in formgrader (manual score + extra credit), or
    None while unconfirmed (no manual score yet, or flagged for re-review because the answer changed).
    Written items are the manually graded cells: grade cells that are also solution cells."""
    return confirmed_scores_many(gb_url, [(assignment_id, student_id)])[(assignment_id, student_id)]


def confirmed_scores_many(
    gb_url: str, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], dict[str, float | None]]:
    """:func:`confirmed_scores` for many (assignment, student) pairs, in three queries."""
    from sqlalchemy import select

    keys = list(dict.fromkeys(keys))
    out: dict[tuple[str, str], dict[str, float | None]] = {k: {} for k in keys}
    if not keys:
        return out
    t = _tables()
    a, nb, bc = t["assignment"], t["notebook"], t["base_cell"]
    g, sn, sa = t["grade"], t["submitted_notebook"], t["submitted_assignment"]
    with session(gb_url, write=False) as db:
        conn = db.connection()
        cells = (
            conn.execute(
                select(a.c.name.label("assignment"), bc.c.id, bc.c.name, bc.c.notebook_id, bc.c.type)
                .join(nb, bc.c.notebook_id == nb.c.id)
                .join(a, nb.c.assignment_id == a.c.id)
                .where(a.c.name.in_({k[0] for k in keys}), bc.c.type.in_(("GradeCell", "SolutionCell")))
            )
            .mappings()
            .all()
        )
        solutions = {(r["notebook_id"], r["name"]) for r in cells if r["type"] == "SolutionCell"}
        written = {
            r["id"]: r
            for r in cells
            if r["type"] == "GradeCell" and (r["notebook_id"], r["name"]) in solutions
        }
        for key in keys:
            out[key] = {r["name"]: None for r in written.values() if r["assignment"] == key[0]}
        students = {k[1] for k in keys}
        for part in _chunks(sorted(written)):
            rows = conn.execute(
                select(
                    sa.c.student_id, g.c.cell_id, g.c.manual_score, g.c.extra_credit, g.c.needs_manual_grade
                )
                .join(sn, g.c.notebook_id == sn.c.id)
                .join(sa, sn.c.assignment_id == sa.c.id)
                .where(
                    g.c.cell_id.in_(part), *([sa.c.student_id.in_(students)] if len(students) <= 500 else [])
                )
            ).mappings()
            for r in rows:
                cell = written[r["cell_id"]]
                key = (cell["assignment"], r["student_id"])
                if key in out:
                    out[key][cell["name"]] = confirmed_value(r)
    return out
