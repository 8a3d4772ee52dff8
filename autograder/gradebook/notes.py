"""The instructor's comments, read back from nbgrader's ``comment`` table: what each feedback page shows
next to the suggestion it replaced (formgrader's comment box, or the answer-groups page)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from autograder.gradebook import coursedir, database


@dataclass(frozen=True)
class Note:
    """What the instructor said about one item of one submission (from nbgrader's ``comment`` table)."""

    comment: str  # the instructor's words ("" if the comment box still holds our suggestion)
    suggestion_text: str = ""  # the latest suggestion we put in the box (auto_comment)
    by_group: bool = False  # written by the answer-groups page (group_review.group_comment)


#: how :func:`autograder.review.groups.group_comment` starts the comment it writes
GROUP_MARK = "[答案组确认 / confirmed with answer group"


def _instructor_words(manual: str | None, auto: str | None) -> str:
    """The comment box's content when it is the instructor's: not empty, not our suggestion."""
    text = (manual or "").strip()
    if not text or text == (auto or "").strip():
        return ""
    return text


def notes_for(out_dir: Path | str, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Note]]:
    """(assignment, student) -> item id -> :class:`Note`, for the items whose comment box holds the
    instructor's words; one read transaction. ``{}`` without a gradebook."""
    from sqlalchemy import select

    keys = list(dict.fromkeys(keys))
    out = Path(out_dir)
    result: dict[tuple[str, str], dict[str, Note]] = {k: {} for k in keys}
    if not keys or not (out / coursedir.DB_NAME).is_file():
        return result
    t = database._tables()
    a, nb, bc = t["assignment"], t["notebook"], t["base_cell"]
    c, sn, sa = t["comment"], t["submitted_notebook"], t["submitted_assignment"]
    students = {k[1] for k in keys}
    query = (
        select(a.c.name, sa.c.student_id, bc.c.name, c.c.manual_comment, c.c.auto_comment)
        .select_from(c)
        .join(bc, c.c.cell_id == bc.c.id)
        .join(sn, c.c.notebook_id == sn.c.id)
        .join(sa, sn.c.assignment_id == sa.c.id)
        .join(nb, sn.c.notebook_id == nb.c.id)
        .join(a, nb.c.assignment_id == a.c.id)
        .where(a.c.name.in_({k[0] for k in keys}), c.c.manual_comment.is_not(None))
    )
    if len(students) <= 500:
        query = query.where(sa.c.student_id.in_(students))
    with database.session(coursedir.db_url_for(out), write=False) as db:
        for assignment_id, student_id, item_id, manual, auto in db.connection().execute(query):
            words = _instructor_words(manual, auto)
            if words and (assignment_id, student_id) in result:
                result[(assignment_id, student_id)][item_id] = Note(
                    words, (auto or "").strip(), words.startswith(GROUP_MARK)
                )
    return result
