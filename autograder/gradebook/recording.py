"""Record grading results in nbgrader's SQLite gradebook, so instructors review written answers in formgrader.

The grading output directory ``OUT`` is an nbgrader course directory (``nbgrader_config.py``,
``gradebook.db``, ``autograded/``, ``feedback/``). We write nbgrader's own tables through its ORM models
(``nbgrader.api``), so formgrader, ``nbgrader export`` and ``nbgrader generate_feedback`` read our rows as
if ``nbgrader autograde`` had written them.

How results land in the gradebook: ``record_many`` writes a batch of submissions (``grade`` commits what
finished in the last half second) in ONE SQLite transaction (``BEGIN IMMEDIATE``) with a fixed number of
bulk statements per assignment (SQLAlchemy Core on nbgrader's tables: select what exists, insert what is
missing, one executemany UPDATE per table), instead of nbgrader's ORM round trips per cell (a 320-student
class took ~8,000 queries and 4,800 flushes that way). Per submission:

* code items (``grade: true, solution: false`` check cells): ``auto_score`` = the hidden-test score,
  ``needs_manual_grade`` False, and a ``Comment`` row on the check cell whose ``auto_comment`` lists the
  hidden tests (names and messages; hidden inputs never appear in either).
* written items (markdown ``grade: true, solution: true`` answer cells): ``auto_score`` = the suggested
  score and ``needs_manual_grade`` stays True until the instructor sets ``manual_score`` (the only
  confirmation: ``confirmed_value``). So nbgrader's totals are what grades.csv says (provisional
  suggestions included, as the terminal's ``?`` marks), and formgrader's score box shows the
  suggestion as its placeholder, which the review server offers to accept in one click
  (``autograder/review/static/accept_suggestion.js``). The suggestion text (``ItemResult.message``) goes into the answer cell's comment: ``auto_comment`` always
  holds the latest suggestion (formgrader shows it as the comment box's placeholder and nbgrader's
  ``Comment.comment`` falls back to it), and ``manual_comment`` is pre-filled with the same text so it is
  the editable content of formgrader's comment box.

* extra-credit code items (rubric ``extra_credit: true``; the check cell has 0 points, so nbgrader's
  ``max_score`` leaves them out): ``auto_score`` = 0 and ``extra_credit`` = the hidden-test score, which
  nbgrader adds to the cell's, the notebook's and the assignment's score (``code_grade``).

Re-runs never undo the instructor's work: ``manual_score`` is never written, nor ``extra_credit`` of a
regular item; a
``manual_comment`` is only refreshed while it still equals the suggestion we wrote last time (kept in
``auto_comment``) and the item is unconfirmed (or its answer changed); ``needs_manual_grade`` of a
confirmed written item is only
set again when the student's answer text changed since the last recording (nbgrader's ``--force``
resets it unconditionally; we do not)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from autograder.core.files import atomic_copy, atomic_write_text
from autograder.core.results import ItemResult, SubmissionResult
from autograder.core.timestamps import TimestampError, read_submission_time
from autograder.gradebook.comments import code_comment, code_grade, written_comment
from autograder.gradebook.coursedir import AUTOGRADED, SUBMITTED, db_url_for, source_directory
from autograder.gradebook.database import (
    _insert_many,
    _new_id,
    _select_in,
    _tables,
    _update_many,
    session,
)
from autograder.gradebook.reading import apply_confirmed, confirmed_value
from autograder.gradebook.structure import ensure_assignment, notebook_id_of
from autograder.grading import review_copy
from autograder.grading.notebook import UnreadableNotebook, read_notebook_bytes


def _answer_sources(nb_path: Path) -> dict[str, str]:
    """grade_id -> source of the manually graded answer cells of a notebook ({} if unreadable/missing)."""
    return _answers_in(_parsed(nb_path) or {})


def _parsed(nb_path: Path) -> dict | None:
    """The notebook parsed as the grader reads it (capped, its text made encodable: lone surrogates,
    NUL), or None if it is missing or unreadable."""

    try:
        return read_notebook_bytes(nb_path)
    except (OSError, ValueError, UnreadableNotebook):
        return None


def _answers_in(data: dict) -> dict[str, str]:
    """grade_id -> source of the manually graded answer cells of a parsed notebook."""
    try:
        out = {}
        for cell in data.get("cells", []):
            meta = (cell.get("metadata") or {}).get("nbgrader") or {}
            if meta.get("grade") and meta.get("solution") and meta.get("grade_id"):
                src = cell.get("source", "")
                out[meta["grade_id"]] = "".join(src) if isinstance(src, list) else str(src)
        return out
    except (AttributeError, TypeError):
        return {}


def _autograded_path(out: Path, result: SubmissionResult) -> Path:
    nb_id = notebook_id_of(result.notebook)
    return out / AUTOGRADED / result.student_id / result.assignment_id / f"{nb_id}.ipynb"


def _write_autograded(dest: Path, review, durable: bool = True) -> None:
    """Place the review copy (:mod:`autograder.grading.review_copy`: the submission made inert, never a byte copy)
    where formgrader looks for it."""

    # nbformat.writes without its schema validation and its indented (pure-Python) JSON encoder: ~30 ms a
    # notebook at class scale; review_copy builds valid cells (tests/test_review_copy.py validates them)
    atomic_write_text(dest, json.dumps(review, ensure_ascii=False, sort_keys=True), durable)


def _mirror_submitted(out: Path, result: SubmissionResult, submitted: Path, durable: bool = True) -> None:
    """Copy the submission (and its timestamp.txt, submission_secret.txt) to OUT/submitted/..., where
    nbgrader's formgrader counts submissions and decides that a gradebook entry is "autograded" (equal
    timestamps)."""
    dest = (
        out
        / SUBMITTED
        / result.student_id
        / result.assignment_id
        / f"{notebook_id_of(result.notebook)}.ipynb"
    )
    if dest.exists() and dest.resolve() == submitted.resolve():
        return
    atomic_copy(submitted, dest, durable)
    ts_dest = dest.parent / "timestamp.txt"
    stamp = _read_timestamp(submitted, result)
    if stamp is not None:  # in UTC, as nbgrader reads it (its parse_utc would take "CST" for UTC)
        atomic_write_text(ts_dest, stamp.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC\n", durable)
    elif ts_dest.exists():
        ts_dest.unlink()
    # submission_secret.txt (nbgrader submit's, kept by collect) names the released feedback
    # (autograder.classroom.review_feedback). A small regular file only: it is the student's folder
    src, copy = submitted.parent / "submission_secret.txt", dest.parent / "submission_secret.txt"
    if src.is_file() and not src.is_symlink() and src.stat().st_size <= 4096:
        atomic_copy(src, copy, durable)
    elif copy.exists():
        copy.unlink()


def _read_timestamp(submitted: Path, result: SubmissionResult | None = None):
    """The submission time as nbgrader stores it (naive UTC): the one ``grade`` read in the course's
    zone (``result.submitted_at``, autograder.intake.course), else timestamp.txt if its zone is unambiguous."""
    if result is not None and result.submitted_at:
        return datetime.fromisoformat(result.submitted_at).astimezone(UTC).replace(tzinfo=None)
    try:
        when = read_submission_time(submitted.parent)
    except TimestampError:  # a bad or ambiguous timestamp file must not stop grading
        return None
    return when.replace(tzinfo=None) if when is not None else None


@dataclass
class _Pending:
    """One submission to record, with what was read from disk before the transaction."""

    result: SubmissionResult
    submitted: Path
    dest: Path
    previous_answers: dict[str, str]
    current_answers: dict[str, str]
    timestamp: object
    review: object = None  # the review copy (nbformat NotebookNode) placed in OUT/autograded
    review_answers: dict[str, str] = field(default_factory=dict)
    confirmed: dict[str, float | None] = field(default_factory=dict)


def _record_assignment(conn, assignment_id: str, pending: list[_Pending]) -> None:
    """Every row ``Gradebook.add_submission`` would create (student, submitted assignment and notebooks,
    one grade per grade/task cell, one comment per solution/task cell and per code item's check cell),
    inserted only where missing, then the scores and comments of ``pending``, with a fixed number of
    statements whatever the number of students."""
    from sqlalchemy import select

    t = _tables()
    a_id = conn.execute(
        select(t["assignment"].c.id).where(t["assignment"].c.name == assignment_id)
    ).scalar_one()
    notebooks = {
        r.name: r.id
        for r in conn.execute(
            select(t["notebook"].c.id, t["notebook"].c.name).where(t["notebook"].c.assignment_id == a_id)
        )
    }
    cells: dict[str, dict[str, dict[str, str]]] = {
        nb: {} for nb in notebooks.values()
    }  # nb -> type -> name -> id
    bc = t["base_cell"]
    for r in _select_in(
        conn, [bc.c.id, bc.c.name, bc.c.notebook_id, bc.c.type], bc.c.notebook_id, notebooks.values()
    ):
        cells[r["notebook_id"]].setdefault(r["type"], {})[r["name"]] = r["id"]

    # students and submitted assignments
    students = [p.result.student_id for p in pending]
    have = {r["id"] for r in _select_in(conn, [t["student"].c.id], t["student"].c.id, students)}
    _insert_many(conn, t["student"], [{"id": s} for s in dict.fromkeys(students) if s not in have])
    sa = t["submitted_assignment"]
    subs = {
        r["student_id"]: r["id"]
        for r in _select_in(
            conn, [sa.c.id, sa.c.student_id], sa.c.student_id, students, sa.c.assignment_id == a_id
        )
    }
    new_subs = []
    for p in pending:
        if p.result.student_id not in subs:
            subs[p.result.student_id] = _new_id()
            new_subs.append(
                {
                    "id": subs[p.result.student_id],
                    "assignment_id": a_id,
                    "student_id": p.result.student_id,
                    "timestamp": p.timestamp,
                }
            )
    _insert_many(conn, sa, new_subs)
    fresh = {r["id"] for r in new_subs}
    _update_many(
        conn,
        sa,
        ("timestamp",),
        [
            {"id": subs[p.result.student_id], "timestamp": p.timestamp}
            for p in pending
            if p.timestamp is not None and subs[p.result.student_id] not in fresh
        ],
    )

    # submitted notebooks, grades and comments (missing ones first)
    sn = t["submitted_notebook"]
    snbs = {
        (r["assignment_id"], r["notebook_id"]): r["id"]
        for r in _select_in(
            conn, [sn.c.id, sn.c.assignment_id, sn.c.notebook_id], sn.c.assignment_id, subs.values()
        )
    }
    new_snbs = []
    for sub_id in dict.fromkeys(subs[p.result.student_id] for p in pending):
        for nb_id in notebooks.values():
            if (sub_id, nb_id) not in snbs:
                snbs[(sub_id, nb_id)] = _new_id()
                new_snbs.append({"id": snbs[(sub_id, nb_id)], "assignment_id": sub_id, "notebook_id": nb_id})
    _insert_many(conn, sn, new_snbs)

    wanted_grades, wanted_comments = set(), set()
    for p in pending:
        nb_id = notebooks.get(notebook_id_of(p.result.notebook))
        for (sub_id, snb_nb), snb_id in snbs.items():
            if sub_id != subs[p.result.student_id]:
                continue
            kinds = cells[snb_nb]
            wanted_grades |= {
                (snb_id, c) for k in ("GradeCell", "TaskCell") for c in kinds.get(k, {}).values()
            }
            wanted_comments |= {
                (snb_id, c) for k in ("SolutionCell", "TaskCell") for c in kinds.get(k, {}).values()
            }
            if snb_nb == nb_id:  # the check cell of each code item carries the hidden tests' comment
                grade_cells = kinds.get("GradeCell", {})
                wanted_comments |= {
                    (snb_id, grade_cells[it.id])
                    for it in p.result.items
                    if it.kind != "written" and it.id in grade_cells
                }
    snb_ids = {snb for snb, _ in wanted_grades | wanted_comments}
    g, c = t["grade"], t["comment"]
    grades = {
        (r["notebook_id"], r["cell_id"]): dict(r)
        for r in _select_in(conn, list(g.c), g.c.notebook_id, snb_ids)
    }
    comments = {
        (r["notebook_id"], r["cell_id"]): dict(r)
        for r in _select_in(conn, list(c.c), c.c.notebook_id, snb_ids)
    }
    new_grades = [
        {
            "id": _new_id(),
            "notebook_id": snb,
            "cell_id": cell,
            "auto_score": None,
            "manual_score": None,
            "extra_credit": None,
            "needs_manual_grade": True,
        }
        for snb, cell in sorted(wanted_grades - set(grades))
    ]
    new_comments = [
        {"id": _new_id(), "notebook_id": snb, "cell_id": cell, "auto_comment": None, "manual_comment": None}
        for snb, cell in sorted(wanted_comments - set(comments))
    ]
    _insert_many(conn, g, new_grades)
    _insert_many(conn, c, new_comments)
    grades.update({(r["notebook_id"], r["cell_id"]): r for r in new_grades})
    comments.update({(r["notebook_id"], r["cell_id"]): r for r in new_comments})

    # the scores and comments, decided row by row in memory, written back in one statement per table
    before_g = {k: dict(v) for k, v in grades.items()}
    before_c = {k: dict(v) for k, v in comments.items()}
    for p in pending:
        result = p.result
        nb_name = notebook_id_of(result.notebook)
        if nb_name not in notebooks:
            raise KeyError(f"notebook {nb_name!r} is not part of {assignment_id!r} in the gradebook")
        nb_id = notebooks[nb_name]
        snb_id = snbs[(subs[result.student_id], nb_id)]
        grade_cells = cells[nb_id].get("GradeCell", {})
        solution_cells = cells[nb_id].get("SolutionCell", {})
        for item in result.items:
            if item.id not in grade_cells:
                raise KeyError(
                    f"rubric item {item.id!r} is not a grade cell of {assignment_id}/{nb_name} "
                    f"(grade cells: {sorted(grade_cells)})"
                )
            grade = grades[(snb_id, grade_cells[item.id])]
            if item.kind == "written":
                _apply_written(p, item, grade, comments.get((snb_id, solution_cells.get(item.id))))
                p.confirmed[item.id] = confirmed_value(grade)
            else:
                _apply_code(item, grade, comments[(snb_id, grade_cells[item.id])])
    _update_many(
        conn,
        g,
        ("auto_score", "extra_credit", "needs_manual_grade"),
        [r for k, r in grades.items() if r != before_g.get(k)],
    )
    _update_many(
        conn, c, ("auto_comment", "manual_comment"), [r for k, r in comments.items() if r != before_c.get(k)]
    )


def _apply_written(p: _Pending, item: ItemResult, grade: dict, com: dict | None) -> None:
    """A written item: the suggestion as auto score (it still waits for the instructor), the suggestion
    text in the comment box unless the instructor's own words are there, and re-review only when the
    answer changed."""
    grade["auto_score"] = None if item.suggestion is None else float(item.suggestion)
    old_answer = p.previous_answers.get(item.id)
    # unchanged if the copy in OUT holds the answer as submitted (an OUT from before review copies) or as
    # its review copy renders it
    changed = old_answer is not None and old_answer not in (
        p.current_answers.get(item.id),
        p.review_answers.get(item.id),
    )
    if grade["manual_score"] is None or changed:
        grade["needs_manual_grade"] = True
    if com is None:
        return
    text = written_comment(item)
    # auto_comment = the text we last put in the box; equal => the instructor left it alone
    untouched = com["manual_comment"] is None or com["manual_comment"] == com["auto_comment"]
    if not untouched:  # the instructor's words stay; the new suggestion is kept aside
        com["auto_comment"] = text
    elif grade["manual_score"] is None or changed:
        com["manual_comment"] = com["auto_comment"] = text
    # else: confirmed with our text: keep the text the instructor confirmed against


def _apply_code(item: ItemResult, grade: dict, com: dict) -> None:
    """A code item: the hidden-test score as auto score (as extra credit for an extra-credit item, see
    :func:`code_grade`); an instructor's override of an older test score is flagged for re-check when
    the test score moves."""
    auto, extra = code_grade(item, grade["extra_credit"])
    if grade["manual_score"] is not None and (grade["auto_score"], grade["extra_credit"]) != (auto, extra):
        grade["needs_manual_grade"] = True
    elif grade["manual_score"] is None:
        grade["needs_manual_grade"] = False
    grade["auto_score"], grade["extra_credit"] = auto, extra
    com["auto_comment"] = code_comment(item)


def record_many(
    out_dir: Path | str, entries: Iterable[tuple[SubmissionResult, Path | str]], durable: bool = True
) -> list[dict]:
    """Record graded submissions in OUT's gradebook in ONE transaction, with a fixed number of bulk
    statements per assignment (SQLAlchemy Core on nbgrader's tables), then place their copies for
    formgrader (``OUT/autograded/<student>/<assignment>/<nb>.ipynb``, and ``OUT/submitted/...`` unless
    that is where a submission already is).

    Returns, per entry, the instructor-confirmed scores of its written items (see
    :func:`confirmed_scores`) and applies them to each result in place (``confirmed``, and ``score`` =
    confirmed else suggestion), so the caller's JSON and CSV show what the instructor already decided.
    Submission files are never modified. Assignments not in the gradebook yet are registered from the
    source notebooks named in OUT's nbgrader_config.py. Each (student, assignment) may appear once.
    ``durable=False`` skips the fsync of the copies (the gradebook commit itself is always durable;
    a re-run rewrites the copies)."""
    from sqlalchemy import select

    out = Path(out_dir).resolve()
    url = db_url_for(out)
    pending = []
    sources = source_directory(out)
    for result, path in entries:
        submitted, dest = Path(path), _autograded_path(out, result)
        source_nb = sources / result.assignment_id / f"{notebook_id_of(result.notebook)}.ipynb"
        parsed = _parsed(submitted)  # read once: its answers and its review copy come from the same parse
        review = review_copy.of_submission(parsed, source_nb, result.status)
        pending.append(
            _Pending(
                result,
                submitted,
                dest,
                _answer_sources(dest),
                _answers_in(parsed or {}),
                _read_timestamp(submitted, result),
                review,
                _answers_in(review),
            )
        )
    keys = [(p.result.student_id, p.result.assignment_id) for p in pending]
    if len(set(keys)) != len(keys):
        raise ValueError("record_many: a (student, assignment) appears more than once")
    if not pending:
        return []

    t = _tables()
    wanted = {(p.result.assignment_id, notebook_id_of(p.result.notebook)) for p in pending}
    with session(url, write=False) as db:
        a, nb = t["assignment"], t["notebook"]
        query = select(a.c.name, nb.c.name).join(nb, nb.c.assignment_id == a.c.id)
        known = {(row[0], row[1]) for row in db.connection().execute(query)}
    for assignment_id, nb_id in sorted(wanted - known):
        ensure_assignment(url, assignment_id, sources / assignment_id / f"{nb_id}.ipynb")

    by_assignment: dict[str, list[_Pending]] = {}
    for p in pending:
        by_assignment.setdefault(p.result.assignment_id, []).append(p)
    with session(url) as db:
        conn = db.connection()
        for assignment_id, group in sorted(by_assignment.items()):
            _record_assignment(conn, assignment_id, group)

    # the notebooks formgrader shows, placed after the commit (a crash in between is repaired by a re-run;
    # placing them later keeps the previous copy as the reference for "answer changed" until we committed)
    for p in pending:
        _write_autograded(p.dest, p.review, durable)
        _mirror_submitted(out, p.result, p.submitted, durable)
        apply_confirmed(p.result, p.confirmed)
    return [p.confirmed for p in pending]


def record(out_dir: Path | str, result: SubmissionResult, submitted_notebook_path: Path | str) -> dict:
    """Record one graded submission (:func:`record_many` with one entry); returns its confirmed scores."""
    return record_many(out_dir, [(result, submitted_notebook_path)])[0]
