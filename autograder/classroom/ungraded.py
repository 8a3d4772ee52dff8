"""Submissions that could not be graded, said where an instructor looks (formgrader's start-up lines, the
answer groups page, the LMS export): formgrader lists only what is in the gradebook, so a folder with
no notebook, several notebooks or an unreadable one would otherwise simply be absent there."""

from __future__ import annotations

from pathlib import Path

from autograder.classroom.confirmed import load_results
from autograder.core.results import SubmissionResult
from autograder.core.safe_text import terminal_text


def not_recorded(result: SubmissionResult) -> bool:
    """No notebook of this submission was read (so none is in the gradebook or formgrader)."""
    return not result.graded and not result.submission_sha256


def lines(out_dir: Path | str) -> list[str]:
    """One line per submission in OUT that formgrader does not show, with its status."""
    missing = [r for _, r in load_results(out_dir) if not_recorded(r)]
    if not missing:
        return []
    head = f"not in formgrader ({len(missing)} submission{'s' if len(missing) != 1 else ''} not graded):"
    return [head] + [
        f"  {terminal_text(r.student_id, 64)} {terminal_text(r.assignment_id, 64)}: {terminal_text(r.status, 300)}"
        for r in sorted(missing, key=lambda r: (r.assignment_id, r.student_id))
    ]
