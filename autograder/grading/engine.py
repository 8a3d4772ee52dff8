"""The grading engine: one rubric file and one folder of hidden tests per lesson, nothing lesson-specific here.

Flow for one submission: read the notebook (``notebook.extract``) → open a sandboxed worker that runs its
code (``submission.open_submission``) → run every hidden test in this process against plain data the
child sends back → score each rubric item as the weighted share of its tests passed, and suggest scores
for written answers (``scoring``, ``written.suggest``, static review). ``new_result`` is the one place a
``SubmissionResult`` is started, so every row (graded or not) names its grader.
"""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path

from autograder.core.results import ItemResult, SubmissionResult
from autograder.grading.assignment import Assignment, load_assignment
from autograder.grading.imports import missing_modules
from autograder.grading.notebook import Extracted, UnreadableNotebook, extract
from autograder.grading.scoring import run_tests, score_items, zero_items
from autograder.grading.submission import open_submission
from autograder.sandbox.isolation import resolve_isolation
from autograder.testing.seeding import for_student, grader_fingerprint

LOAD_FAILED = "your code could not be loaded: "
_CELL_RAISED = re.compile(r"^code cell \d+ raised: ")


def new_result(
    assignment: Assignment | None,
    student_id: str,
    isolation_text: str,
    *,
    assignment_id: str = "",
    status: str = "ok",
    graded: bool = True,
    why: str = "",
    secret: bytes | None = None,
) -> SubmissionResult:
    """A result row for ``student_id``: the assignment's notebook, pass line and grader fingerprint (none
    for an unknown assignment, then ``assignment_id`` names it; with a course ``secret``, a hash of it too,
    so shards graded with different secrets never merge); with ``why``, every item at 0 saying so."""
    result = SubmissionResult(
        student_id,
        assignment.id if assignment else assignment_id,
        assignment.notebook if assignment else "",
        status=status,
        isolation=isolation_text,
        pass_line=assignment.pass_line if assignment else 0.0,
        grader=grader_fingerprint(assignment.fingerprint, secret) if assignment else "",
        graded=graded,
    )
    if assignment is not None and why:
        result.items = zero_items(assignment, why)
    return result


def grade_extracted(
    assignment: Assignment,
    extracted: Extracted,
    isolation: str,
    confirmed: dict | None = None,
    *,
    student_id: str = "",
    secret: bytes | None = None,
) -> tuple[list[ItemResult], list[str], dict]:
    """Run the hidden tests on ``extracted``'s code; with a course ``secret``, their random cases are
    ``student_id``'s own (``autograder.testing.seeding``)."""
    sub = open_submission(assignment.limits, extracted.code_cells, isolation)
    try:
        with for_student(secret, student_id):
            outcomes = run_tests(assignment, sub)
    finally:
        report = sub.close()
    notes = []
    for err in sub.cell_errors:
        notes.append(f"code cell {err['cell']} raised: {err['error']}")
    if sub.load_error:
        notes.append(f"{LOAD_FAILED}{sub.load_error}")
    if report.get("output_bytes", 0) > 0:
        notes.append("your code printed output (ignored for grading)")  # no byte count: it is a channel
    notes += unavailable_imports(extracted.code_cells)
    return (
        score_items(assignment, outcomes, extracted.answers, confirmed, extracted.answer_flags),
        notes,
        report,
    )


def unavailable_imports(code_cells: list[tuple[int, str]]) -> list[str]:
    """A note per module the code imports that the grading sandbox does not have (read from the source,
    as the self-check does, so the name is the student's own text, never something a run produced)."""
    notes = []
    for name, cell in missing_modules(code_cells).items():
        why = "（课程库 pipelab 只用于讲解和画图）" if name == "pipelab" else ""
        notes.append(
            f"代码单元 {cell} 导入了 '{name}'：评分时没有这个模块{why}，练习只能用 numpy 和 Python 标准库 / "
            f"code cell {cell} imports '{name}', which is not available when grading"
        )
    return notes


def grade_code(assignment_dir: Path, code: str, isolation: str | None = None) -> dict[str, float]:
    """Grade one piece of exercise code with the assignment's hidden tests (code items only)."""

    assignment = load_assignment(Path(assignment_dir))
    mode = isolation or resolve_isolation("auto")[0]
    items, _, _ = grade_extracted(assignment, Extracted(code_cells=[(0, code)]), mode)
    return {it.id: it.score for it in items if it.kind == "code"}


def grade_notebook(
    assignment: Assignment,
    path: Path,
    student_id: str,
    isolation: str,
    isolation_text: str,
    confirmed: dict | None = None,
    secret: bytes | None = None,
) -> SubmissionResult:
    started = time.monotonic()
    result = new_result(assignment, student_id, isolation_text, secret=secret)
    try:
        extracted = extract(path, assignment.cells, assignment.written_ids)
    except UnreadableNotebook as exc:
        result.status, result.graded = str(exc), False
        result.items = zero_items(assignment, str(exc))
        result.duration_s = round(time.monotonic() - started, 4)
        return result
    result.submission_sha256 = extracted.sha256
    items, notes, _ = grade_extracted(
        assignment, extracted, isolation, confirmed, student_id=student_id, secret=secret
    )
    result.items = items
    result.messages = extracted.problems + notes
    tampered = [p for p in extracted.problems if p.startswith("tampered")]
    if tampered:
        result.status = "tampered: " + "; ".join(p.split(": ", 1)[1] for p in tampered)[:300]
    elif any(n.startswith(LOAD_FAILED) for n in notes):  # graded (zero code points), but say why
        result.status = (
            "code did not load: " + next(n for n in notes if n.startswith(LOAD_FAILED))[len(LOAD_FAILED) :]
        )
    elif (raised := [n for n in notes if _CELL_RAISED.match(n)]) and len(raised) >= sum(
        1 for _, code in extracted.code_cells if _has_code(code)
    ):  # every cell of the student's code failed (e.g. an IndentationError): nothing of it ran
        cell, error = raised[0].split(" raised: ", 1)
        last = next((line.strip() for line in reversed(error.splitlines()) if line.strip()), error)
        result.status = f"code did not load: {cell}: {last}"[:300]
    result.duration_s = round(time.monotonic() - started, 4)
    return result


def _has_code(code: str) -> bool:
    """A cell with a statement (not only comments); one that does not parse counts as code."""
    try:
        return bool(ast.parse(code).body)
    except (SyntaxError, ValueError):
        return True
