"""Which submissions a class holds: one :class:`Job` per ``SUBMISSIONS/<student>/<assignment>/`` folder
(:func:`discover`), at least one per student folder, with the problem that keeps a folder from being
graded, or the note on a misnamed notebook that is graded anyway. :mod:`autograder.classroom.batch` grades
the jobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.core.registry import lessons
from autograder.core.results import MISNAMED_NOTE
from autograder.core.safe_text import encodable
from autograder.core.untrusted import describe_name, display_id, id_problem

NO_ASSIGNMENT = "(none)"  # the assignment column of a student folder that holds no assignment folder


@dataclass
class Job:
    student_id: str
    assignment_id: str
    path: Path | None
    problem: str = ""
    note: str = ""  # graded, with a note for student and instructor (a misnamed notebook)


def _folders(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))


def discover(submissions: Path, only: list[str] | None = None) -> list[Job]:
    """One job per (student, assignment) folder, and at least one per student folder, with a problem
    noted where no notebook can be graded. Ids follow ``collect``'s rule (``untrusted.id_problem``); an
    unsafe folder name gets a row under a safe stand-in id (``untrusted.display_id``)."""
    if not submissions.is_dir():
        raise SystemExit(
            f"error: {submissions} is not a directory (expected <student>/<assignment>/<nb>.ipynb)"
        )
    assignments = lessons()
    jobs = []
    for student in _folders(submissions):
        sid = display_id(student.name)
        try:
            folders = [f for f in _folders(student) if not only or f.name in only]
        except OSError as exc:
            jobs.append(Job(sid, NO_ASSIGNMENT, None, f"unreadable student folder ({exc.strerror})"))
            continue
        problem = id_problem(student.name)
        if problem:
            problem = f"student folder {describe_name(student.name)}: {problem}; rename it"
        if not folders:  # still a row: a student folder never silently disappears from grades.csv
            for aid in only or [NO_ASSIGNMENT]:
                where = "no assignment folder" if aid == NO_ASSIGNMENT else f"no {aid} folder"
                why = problem or f"{where} (expected {sid}/<assignment>/<notebook>.ipynb)"
                jobs.append(Job(sid, aid if aid == NO_ASSIGNMENT else display_id(aid), None, why))
            continue
        for folder in folders:
            aid = display_id(folder.name)
            if problem or id_problem(folder.name):
                why = problem or f"assignment folder {describe_name(folder.name)}: {id_problem(folder.name)}"
                jobs.append(Job(sid, aid, None, encodable(why)))
                continue
            if folder.name not in assignments:
                jobs.append(Job(sid, aid, None, f"unknown assignment '{folder.name}'"))
                continue
            rubric_nb = assignments[folder.name].notebook
            path = folder / f"{rubric_nb}.ipynb"
            if path.is_symlink():
                jobs.append(Job(sid, aid, None, "unreadable: the notebook is a symlink"))
            elif not path.is_file():
                jobs.append(_misnamed(sid, aid, folder, rubric_nb))
            else:
                jobs.append(Job(sid, aid, path))
    return jobs


def _misnamed(sid: str, aid: str, folder: Path, rubric_nb: str) -> Job:
    """A folder without the rubric's notebook name: its only notebook is graded, with a note (the
    browser's ``<notebook> (1).ipynb``); none or several is a status that says which."""
    found = sorted(
        p for p in folder.glob("*.ipynb") if not p.name.startswith(".") and (p.is_symlink() or p.is_file())
    )
    names = ", ".join(describe_name(p.name) for p in found[:5]) + (", ..." if len(found) > 5 else "")
    if not found:
        return Job(sid, aid, None, f"no notebook: expected {rubric_nb}.ipynb in {aid}/")
    if len(found) > 1:
        return Job(sid, aid, None, f"{len(found)} notebooks, none named {rubric_nb}.ipynb: {names}")
    if found[0].is_symlink():
        return Job(sid, aid, None, "unreadable: the notebook is a symlink")
    note = (
        f"{MISNAMED_NOTE}{names}，它应当命名为 {rubric_nb}.ipynb / graded the only notebook "
        f"in the folder, {names}, as {rubric_nb}.ipynb"
    )
    return Job(sid, aid, found[0], note=encodable(note))
