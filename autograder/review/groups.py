"""Review a graded class's written answers by answer groups, and confirm a group into nbgrader's gradebook.

``review_items(OUT)`` reads a grading output directory: each student's result
(``OUT/results/<student>/<assignment>.json``: the scorer's suggestion and which criteria it found met),
the answer text from the submission copy formgrader shows (``OUT/submitted/<student>/<assignment>/<nb>.ipynb``,
read with the grader's own :func:`autograder.grading.notebook.extract`), and the gradebook's state of each written
cell (confirmed or not, and the submitted-notebook id formgrader's pages use). It returns, per written item,
the answer groups of :mod:`autograder.review.answer_groups`.

``confirm_group(OUT, assignment, item, key, score, comment)`` writes, in one gradebook transaction, each
member's ``manual_score`` (and ``needs_manual_grade = False``) and ``manual_comment`` — exactly what setting
the score in formgrader does — so formgrader shows the scores, ``python -m autograder export`` takes them,
and any member can still be changed on its own in formgrader. Members the instructor already confirmed
are left as they are unless ``overwrite=True``. The group is recomputed from the current data and must
still have the ``key`` the page showed; otherwise :class:`StaleGroup` is raised and nothing is written.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.classroom.confirmed import load_results
from autograder.classroom.ungraded import not_recorded
from autograder.core.numbers import score as fmt
from autograder.core.registry import lessons
from autograder.core.rubric import Item
from autograder.core.safe_text import terminal_text
from autograder.gradebook import coursedir, database, reading
from autograder.gradebook.notes import GROUP_MARK
from autograder.grading.assignment import load_lesson
from autograder.grading.notebook import UnreadableNotebook, extract
from autograder.review.answer_groups import SIMILARITY, Answer, AnswerGroup, answer_of, group_answers

__all__ = [
    "shown",
    "ItemReview",
    "StaleGroup",
    "ConfirmReport",
    "review_items",
    "confirm_group",
    "group_comment",
]


def shown(text) -> str:
    """Submission text as a page or terminal shows it: line breaks kept, every other control, format
    (bidi override, zero-width) or separator character a visible escape (:func:`safe_text.terminal_text`),
    so nothing in an answer can hide, reorder or recolour what the reviewer reads. HTML escaping is the
    template engine's (autoescape)."""
    lines = str(text).replace("\r\n", "\n").replace("\r", "\n").expandtabs(4).split("\n")
    return "\n".join(terminal_text(line) for line in lines)


class StaleGroup(Exception):
    """The group was not found as shown: answers were regraded or changed since the page was loaded."""


@dataclass
class ItemReview:
    """One written item of one assignment: its rubric entry and its class's answer groups."""

    assignment_id: str
    item: Item  # the rubric entry
    groups: list[AnswerGroup] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # students whose answers could not be read

    @property
    def item_id(self) -> str:
        return self.item.id

    @property
    def answers(self) -> int:
        return sum(g.size for g in self.groups)

    @property
    def multi(self) -> list[AnswerGroup]:
        """Groups of two or more answers."""
        return [g for g in self.groups if not g.outlier]

    @property
    def outliers(self) -> list[AnswerGroup]:
        return [g for g in self.groups if g.outlier]

    @property
    def reviews(self) -> int:
        """What an instructor reviews: one decision per group plus one per outlier."""
        return len(self.groups)

    @property
    def confirmed(self) -> int:
        return sum(len(g.confirmed) for g in self.groups)


@dataclass
class ConfirmReport:
    key: str
    score: float
    written: list[str]  # students whose score was written
    kept: list[str]  # students already confirmed, left as they were


def _gradebook_state(out: Path, assignment_id: str) -> dict[tuple[str, str], tuple[float | None, str]]:
    """(student, item) -> (confirmed score or None, submitted-notebook id), in one read transaction."""
    from nbgrader.api import Assignment, BaseCell, Grade, SubmittedAssignment, SubmittedNotebook

    if not (out / coursedir.DB_NAME).is_file():
        return {}
    state = {}
    with database.session(coursedir.db_url_for(out), write=False) as db:
        rows = (
            db.query(
                SubmittedAssignment.student_id,
                BaseCell.name,
                Grade.manual_score,
                Grade.extra_credit,
                Grade.needs_manual_grade,
                SubmittedNotebook.id,
            )
            .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
            .join(SubmittedNotebook, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
            .join(Grade, Grade.notebook_id == SubmittedNotebook.id)
            .join(BaseCell, BaseCell.id == Grade.cell_id)
            .filter(Assignment.name == assignment_id)
        )
        for student, cell, manual, extra, needs, snb_id in rows:
            grade = {"manual_score": manual, "extra_credit": extra, "needs_manual_grade": needs}
            state[(student, cell)] = (reading.confirmed_value(grade), snb_id)
    return state


_extracted: dict[Path, tuple[tuple, dict[str, str]]] = {}  # path -> (file identity, answers)


def _answers_of(path: Path, assignment) -> dict[str, str]:
    """The written answers of a submission copy, as the grader reads them (``notebook.extract``); kept
    per file identity (inode, size, mtime) so a review server re-reads only what changed."""
    try:
        st = path.stat()
    except OSError:
        raise UnreadableNotebook(f"{path} is missing") from None
    identity = (st.st_ino, st.st_size, st.st_mtime_ns, assignment.fingerprint)
    hit = _extracted.get(path)
    if hit is not None and hit[0] == identity:
        return hit[1]
    answers = extract(path, assignment.cells, assignment.written_ids).answers
    _extracted[path] = (identity, answers)
    return answers


def _rubric_items(assignment_id: str):
    """The assignment as the grader loads it (rubric and release cells), or None if it is unknown."""

    return load_lesson(assignment_id) if assignment_id in lessons() else None


def review_items(
    out_dir: Path | str,
    assignment_id: str | None = None,
    item_id: str | None = None,
    threshold: float = SIMILARITY,
) -> list[ItemReview]:
    """The answer groups of every written item graded in OUT (or of one assignment / one item)."""
    out = Path(out_dir).resolve()
    by_assignment: dict[str, list] = {}
    for _, result in load_results(out):
        if assignment_id is None or result.assignment_id == assignment_id:
            by_assignment.setdefault(result.assignment_id, []).append(result)

    reviews = []
    for aid in sorted(by_assignment):
        assignment = _rubric_items(aid)
        if assignment is None:
            continue
        specs = [it for it in assignment.items if it.is_written and item_id in (None, it.id)]
        if not specs:
            continue
        state = _gradebook_state(out, aid)
        answers: dict[str, list[Answer]] = {it.id: [] for it in specs}
        unreadable: list[str] = []
        for result in sorted(by_assignment[aid], key=lambda r: r.student_id):
            path = out / coursedir.SUBMITTED / result.student_id / aid / f"{assignment.notebook}.ipynb"
            # not recorded (batch._commit), so a copy in OUT may be an old one: say why instead
            if result.status.startswith("unreadable") or not_recorded(result):
                unreadable.append(f"{result.student_id} ({result.status})")
                continue
            try:
                texts = _answers_of(path, assignment)
            except UnreadableNotebook:
                unreadable.append(f"{result.student_id} (unreadable copy in {coursedir.SUBMITTED}/)")
                continue
            for spec in specs:
                try:
                    it = result.item(spec.id)
                except KeyError:
                    continue
                confirmed, snb_id = state.get((result.student_id, spec.id), (None, ""))
                answers[spec.id].append(
                    answer_of(
                        result.student_id,
                        texts.get(spec.id, ""),
                        it.points,
                        it.suggestion if it.suggestion is not None else it.score,
                        it.evidence,
                        confirmed=confirmed,
                        submission_id=snb_id,
                        flags=it.flags,
                        doubts=it.doubts,
                    )
                )
        for spec in specs:
            groups = group_answers(spec.id, answers[spec.id], threshold)
            reviews.append(ItemReview(aid, spec, groups, unreadable))
    return reviews


def group_comment(key: str, score: float, points: float, comment: str, suggestion_text: str) -> str:
    """The comment a member gets: who decided, the score, then the instructor's words (or, without any,
    the member's own static-review evidence)."""
    head = f"{GROUP_MARK} {key}] {fmt(score)}/{fmt(points)}"
    body = comment.strip() or (suggestion_text or "").strip()
    return head + ("\n" + body if body else "")


def find_group(out_dir: Path | str, assignment_id: str, item_id: str, key: str) -> AnswerGroup:
    for review in review_items(out_dir, assignment_id, item_id):
        for group in review.groups:
            if group.key == key:
                return group
    raise StaleGroup(
        f"answer group {key} of {assignment_id}/{item_id} is not there any more (answers were regraded or "
        "changed since the page was loaded): reload the page and review the group again"
    )


def confirm_group(
    out_dir: Path | str,
    assignment_id: str,
    item_id: str,
    key: str,
    score: float,
    comment: str = "",
    overwrite: bool = False,
) -> ConfirmReport:
    """Write ``score`` (and a comment) as the manual grade of every member of the group ``key``."""
    from nbgrader.api import (
        Assignment,
        BaseCell,
        Comment,
        Grade,
        Notebook,
        SubmittedAssignment,
        SubmittedNotebook,
    )

    out = Path(out_dir).resolve()
    group = find_group(out, assignment_id, item_id, key)
    score = float(score)
    if not math.isfinite(score) or not 0 <= score <= group.points:
        raise ValueError(f"score must be between 0 and {fmt(group.points)}, not {score!r}")
    members = {a.student_id for a in group.members}
    written, kept = [], []
    with database.session(coursedir.db_url_for(out)) as db:
        cells = [  # the item's grade cell and solution cell (same name)
            c
            for (c,) in db.query(BaseCell.id)
            .join(Notebook, Notebook.id == BaseCell.notebook_id)
            .join(Assignment, Assignment.id == Notebook.assignment_id)
            .filter(Assignment.name == assignment_id, BaseCell.name == item_id)
        ]
        notebooks = dict(
            db.query(SubmittedAssignment.student_id, SubmittedNotebook.id)
            .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
            .join(SubmittedNotebook, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
            .filter(Assignment.name == assignment_id, SubmittedAssignment.student_id.in_(sorted(members)))
            .all()
        )
        for student in sorted(members):
            snb = notebooks.get(student)
            grade = db.query(Grade).filter(Grade.notebook_id == snb, Grade.cell_id.in_(cells)).one_or_none()
            if grade is None:
                raise StaleGroup(
                    f"{student} has no gradebook entry for {assignment_id}/{item_id}: regrade first"
                )
            as_row = {k: getattr(grade, k) for k in ("manual_score", "extra_credit", "needs_manual_grade")}
            if reading.confirmed_value(as_row) is not None and not overwrite:
                kept.append(student)
                continue
            grade.manual_score = score
            grade.needs_manual_grade = False
            com = (
                db.query(Comment).filter(Comment.notebook_id == snb, Comment.cell_id.in_(cells)).one_or_none()
            )
            if com is not None:
                com.manual_comment = group_comment(key, score, group.points, comment, com.auto_comment or "")
            written.append(student)
    return ConfirmReport(key, score, written, kept)


def summary_rows(reviews: Iterable[ItemReview]) -> list[dict]:
    """One row per item: answers, groups of two or more, outliers, reviews, confirmed answers."""
    return [
        {
            "assignment": r.assignment_id,
            "item": r.item_id,
            "answers": r.answers,
            "groups": len(r.multi),
            "in_groups": sum(g.size for g in r.multi),
            "outliers": len(r.outliers),
            "reviews": r.reviews,
            "confirmed": r.confirmed,
        }
        for r in reviews
    ]


def format_groups(reviews: list[ItemReview], detail: bool = False, width: int = 70) -> str:
    """The terminal table of :func:`summary_rows` and a total line; with ``detail``, every group too
    (answer text shown with control characters made visible, cut to ``width``)."""
    rows = summary_rows(reviews)
    head = ["assignment", "item", "answers", "groups", "in groups", "outliers", "reviews", "confirmed"]
    cells = [
        [
            str(r[k])
            for k in (
                "assignment",
                "item",
                "answers",
                "groups",
                "in_groups",
                "outliers",
                "reviews",
                "confirmed",
            )
        ]
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *cells, strict=False)]
    lines = [
        "  ".join(
            x.ljust(w) if i < 2 else x.rjust(w) for i, (x, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in [head, *cells]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    answers = sum(r["answers"] for r in rows)
    total = sum(r["reviews"] for r in rows)
    groups, outliers = sum(r["groups"] for r in rows), sum(r["outliers"] for r in rows)
    lines.append("")
    lines.append(
        f"{answers} answers -> {total} reviews ({groups} groups + {outliers} outliers)"
        + (f", {answers / total:.1f} answers per review" if total else "")
    )
    if detail:
        for r in reviews:
            lines.append("")
            lines.append(f"{r.assignment_id} {r.item_id}:")
            for n, g in enumerate(r.groups, 1):
                kind = "outlier" if g.outlier else f"group {n}"
                text = terminal_text(" ".join(g.representative.text.split()), limit=width)
                met = ",".join(g.met) or "-"
                lines.append(
                    f"  {kind:>9}  n={g.size:<3} suggested {fmt(g.suggestion)}/{fmt(g.points)}  "
                    f"met {met}  [{g.key}]  {text}"
                )
    return "\n".join(lines)
