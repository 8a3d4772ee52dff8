"""After review: every feedback page regenerated from the gradebook, in nbgrader's feedback layout.

``python -m autograder feedback --out OUT`` (and ``export``, and formgrader's Generate Feedback button on
the review server) call :func:`regenerate`: each result in ``OUT/results`` takes the scores the
instructor confirmed (formgrader or the answer-groups page, both write nbgrader's ``manual_score``),
its late penalty is recomputed (``OUT/course.yaml``), the JSON is saved, and the page is written with
the instructor's comments (:func:`notes_for`) next to the suggestion they replaced.

Where the pages go (:func:`autograder.reporting.feedback.write`): ``OUT/feedback/<student>/<assignment>/<notebook>.html``,
nbgrader's ``generate_feedback`` layout, with the ``timestamp.txt`` and ``submission_secret.txt``
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

from autograder.classroom.confirmed import refresh
from autograder.core.results import SubmissionResult
from autograder.gradebook import coursedir
from autograder.gradebook.notes import notes_for
from autograder.reporting import feedback


@dataclass
class FeedbackReport:
    pages: list[Path] = field(default_factory=list)  # the pages in nbgrader's layout
    commented: int = 0  # pages that carry at least one instructor comment
    provisional: int = 0  # pages still showing a suggestion that awaits confirmation

    def summary(self, out_dir: Path | str) -> str:
        feedback_dir = Path(out_dir) / coursedir.FEEDBACK
        return (
            f"{len(self.pages)} feedback pages written to {feedback_dir}/<student>/<assignment>/<notebook>.html "
            f"({self.commented} with instructor comments, {self.provisional} still provisional)"
        )


def write_pages(
    out_dir: Path | str, results: Iterable[SubmissionResult], durable: bool = True
) -> FeedbackReport:
    """The feedback page of each result, with the gradebook's comments (one read for all)."""
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
