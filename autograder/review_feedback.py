"""After review: every feedback page regenerated from the gradebook, in nbgrader's feedback layout.

``python -m autograder feedback --out OUT`` (and ``export``, and formgrader's Generate Feedback button on
the review server) call :func:`regenerate`: each result in ``OUT/results`` takes the scores the
instructor confirmed (formgrader or the answer-groups page, both write nbgrader's ``manual_score``),
its late penalty is recomputed (``OUT/course.yaml``), the JSON is saved, and the page is written with
the instructor's comments (:func:`notes_for`) next to the suggestion they replaced.

Where the pages go (:func:`autograder.feedback.write`):
``OUT/feedback/<student>/<assignment>/<notebook>.html``, nbgrader's ``generate_feedback`` layout, with the ``timestamp.txt`` and ``submission_secret.txt``
nbgrader's ``release_feedback`` reads from that folder: it publishes each page to the exchange as
``md5(secret + notebook id).html``, the name ``fetch_feedback`` looks for with the secret that the
student's ``nbgrader submit`` kept. The secret is the submission's own (``submission_secret.txt`` next to
the submitted notebook, as nbgrader's collect leaves it); a submission that came without one (LMS
zips, copied folders: it was never submitted through the exchange, so no student holds a secret) gets
one derived from its bytes (SHA-512 of student, assignment and the submission's SHA-256), so
release_feedback still runs for the whole class instead of stopping at the first folder without it.
``OUT/feedback/<student>/<assignment>.html`` stays as it was, the same page (links already handed out
keep working).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from . import gradebook
from .results import SubmissionResult

__all__ = ["Note", "notes_for", "regenerate", "refresh", "FeedbackReport"]


@dataclass(frozen=True)
class Note:
    """What the instructor said about one item of one submission (from nbgrader's ``comment`` table)."""

    comment: str  # the instructor's words ("" if the comment box still holds our suggestion)
    suggestion_text: str = ""  # the latest suggestion we put in the box (auto_comment)
    by_group: bool = False  # written by the answer-groups page (group_review.group_comment)


#: how :func:`autograder.group_review.group_comment` starts the comment it writes
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
    if not keys or not (out / gradebook.DB_NAME).is_file():
        return result
    t = gradebook._tables()
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
    with gradebook.session(gradebook.db_url_for(out), write=False) as db:
        for assignment_id, student_id, item_id, manual, auto in db.connection().execute(query):
            words = _instructor_words(manual, auto)
            if words and (assignment_id, student_id) in result:
                result[(assignment_id, student_id)][item_id] = Note(
                    words, (auto or "").strip(), words.startswith(GROUP_MARK)
                )
    return result


def refresh(out_dir: Path | str) -> list[SubmissionResult]:
    """Every stored result with the gradebook's confirmed scores applied, late penalties recomputed
    where they changed, and the changed JSON records saved. Returns all results."""
    from .export import load_results, refresh_confirmed

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
    return results


@dataclass
class FeedbackReport:
    pages: list[Path] = field(default_factory=list)  # the pages in nbgrader's layout
    commented: int = 0  # pages that carry at least one instructor comment
    provisional: int = 0  # pages still showing a suggestion that awaits confirmation

    def summary(self, out_dir: Path | str) -> str:
        feedback_dir = Path(out_dir) / gradebook.FEEDBACK
        return (
            f"{len(self.pages)} feedback pages written to {feedback_dir}/<student>/<assignment>/<notebook>.html "
            f"({self.commented} with instructor comments, {self.provisional} still provisional)"
        )


def write_pages(
    out_dir: Path | str, results: Iterable[SubmissionResult], durable: bool = True
) -> FeedbackReport:
    """The feedback page of each result, with the gradebook's comments (one read for all)."""
    from . import feedback

    results = list(results)
    notes = notes_for(out_dir, [(r.assignment_id, r.student_id) for r in results])
    report = FeedbackReport()
    for r in results:
        mine = notes.get((r.assignment_id, r.student_id), {})
        report.pages.append(feedback.write(out_dir, r, durable, mine))
        report.commented += bool(mine)
        report.provisional += r.provisional
    return report


def regenerate(
    out_dir: Path | str, assignment: str | None = None, student: str | None = None
) -> FeedbackReport:
    """Refresh the results from the gradebook (:func:`refresh`) and write the pages of every result (or
    of one assignment / one student's)."""
    results = refresh(out_dir)
    chosen = [r for r in results if assignment in (None, r.assignment_id) and student in (None, r.student_id)]
    return write_pages(out_dir, chosen)


#: nbgrader's own secrets are ``secrets.token_hex(64)``; anything else in a submission's file (it is
#: student data) is not used
_SECRET_CHARS = frozenset("0123456789abcdefABCDEF")
_SECRET_MAX = 1024


def _read_secret(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_SECRET_MAX + 1)
    except OSError:
        return None
    text = raw.decode("ascii", "replace")
    core = text.rstrip("\r\n")  # kept as written: nbgrader hashes the file's exact content
    if not 16 <= len(core) <= _SECRET_MAX or not set(core) <= _SECRET_CHARS:
        return None
    return text


def write_sidecars(out_dir: Path | str, result: SubmissionResult, folder: Path, durable: bool = True) -> None:
    """``timestamp.txt`` and ``submission_secret.txt`` in a page's folder, as nbgrader's generate_feedback
    copies them from the autograded submission: release_feedback opens both for every page."""
    import hashlib

    from .results import atomic_write_text

    submitted = Path(out_dir) / gradebook.SUBMITTED / result.student_id / result.assignment_id
    secret = _read_secret(submitted / "submission_secret.txt")
    if secret is None:
        # no exchange submission: a name only the submitted bytes determine (a sharded run and its merge
        # name a page alike; nobody without the notebook can guess it). A row without readable bytes
        # (its page says only why it could not be graded) is named by its ids and status
        basis = result.submission_sha256 or f"ungraded\0{result.status}"
        key = f"autograder-feedback\0{result.student_id}\0{result.assignment_id}\0{basis}"
        secret = hashlib.sha512(key.encode()).hexdigest()
    try:
        stamp = (submitted / "timestamp.txt").read_text(encoding="utf-8", errors="replace")[:64].strip()
    except OSError:
        stamp = result.submitted_at
    stamp = "".join(ch for ch in stamp if ch.isprintable())  # student data: release_feedback logs it
    for name, text in (("submission_secret.txt", secret), ("timestamp.txt", stamp)):
        target = folder / name
        try:
            if target.read_text(encoding="utf-8") == text:
                continue
        except OSError:
            pass
        atomic_write_text(target, text, durable)
