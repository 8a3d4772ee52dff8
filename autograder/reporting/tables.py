"""The class tables ``grade``, ``merge`` and ``demo`` print: one per assignment, one row per student, then
the notes the status column cut short (misnamed notebooks graded anyway, in full)."""

from __future__ import annotations

from pathlib import Path

from autograder.core import numbers
from autograder.core.results import MISNAMED_NOTE
from autograder.core.safe_text import terminal_text

__all__ = ["class_table"]


def _status_notes(group) -> list[str]:
    """What the table's status column cut short, and misnamed notebooks that were graded, in full."""

    notes = []
    for r in group:
        sid = terminal_text(r.student_id, 64)
        if r.status != "ok" and len(terminal_text(r.status, 10_000)) > 48:
            notes.append(f"  {sid}: {terminal_text(r.status, 400)}")
        notes += [
            f"  {sid}: {terminal_text(m.split(' / ', 1)[-1], 400)}"
            for m in r.messages
            if m.startswith(MISNAMED_NOTE)
        ]
    return notes


def class_table(results, out: Path) -> str:
    """The class tables: one per assignment, each with its own items (the rubric's, in its order, with
    their points), one row per student; provisional marks flagged. Student text (ids, statuses) goes
    through :func:`autograder.core.safe_text.terminal_text`."""

    by_assignment: dict[str, list] = {}
    for r in results:
        by_assignment.setdefault(r.assignment_id, []).append(r)
    lines: list[str] = []
    for assignment_id in sorted(by_assignment):
        group = sorted(by_assignment[assignment_id], key=lambda r: r.student_id)
        points = {}
        for r in group:
            for it in r.items:
                points.setdefault(it.id, it.points)
        head = [
            "student",
            *(terminal_text(f"{c}/{numbers.score(p)}", 32) for c, p in points.items()),
            "total",
            "pass",
            "status",
        ]
        rows = []
        for r in group:
            scores = {it.id: it for it in r.items}
            cells = [terminal_text(r.student_id, 64)]
            for c in points:
                it = scores.get(c)
                if it is None:
                    cells.append(numbers.MISSING)
                elif it.kind == "written" and it.confirmed is None:
                    cells.append(f"{numbers.score(it.score)}?")
                elif it.extra_credit:
                    cells.append(f"+{numbers.score(it.score)}")
                else:
                    cells.append(numbers.score(it.score))
            late = (
                f" (-{numbers.score(r.late_penalty)} late)" if r.late_penalty else ""
            )  # total shown is final_total
            cells.append(
                f"{numbers.score(r.final_total)}/{numbers.score(r.max_total)}"
                + ("?" if r.provisional else "")
                + late
            )
            cells.append("PASS" if r.passed else "fail")
            cells.append(terminal_text(r.status, 48))
            rows.append(cells)
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=False)]
        n_pass = sum(r.passed for r in group)
        pass_line = max((r.pass_line for r in group), default=0)
        lines.append(
            f"== {terminal_text(assignment_id, 64)}: {len(group)} submissions, {n_pass} pass "
            f"(pass line {numbers.score(pass_line)}) =="
        )
        lines.append("  ".join(str(x).ljust(w) for x, w in zip(head, widths, strict=False)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
        lines += [
            "  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=False)).rstrip() for row in rows
        ]
        lines += _status_notes(group)
        lines.append("")
    n_pass = sum(r.passed for r in results)
    lines.append(
        f"{len(results)} submissions, {n_pass} pass. '?' = provisional: a written answer's suggested "
        "score (static review) awaits confirmation in formgrader."
    )
    if any(it.extra_credit for r in results for it in r.items):
        lines.append(
            "'+' = extra credit: added to the total (which may exceed the maximum) and counted towards "
            "the pass line."
        )
    lines.append(
        f"grades: {out / 'grades.csv'}   feedback: {out / 'feedback'}   gradebook: {out / 'gradebook.db'}"
    )
    return "\n".join(lines)
