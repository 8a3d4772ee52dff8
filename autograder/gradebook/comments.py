"""The comments a result leaves in the gradebook: the hidden tests of a code item, the suggestion of a written
item (formgrader shows them; the Gradescope output reuses them), and how a code item's score is split
into nbgrader's score and extra credit."""

from __future__ import annotations

from autograder.core import numbers
from autograder.core.results import EXECUTED, ItemResult


def code_grade(item: ItemResult, extra_credit: float | None) -> tuple[float, float | None]:
    """(auto_score, extra_credit) of a code item's grade row. An extra-credit item's check cell has
    0 points (so nbgrader's max_score leaves it out) and its test score goes to ``extra_credit``, which
    nbgrader adds to the score; a regular item's score is ``auto_score`` and its ``extra_credit`` (the
    instructor's, from formgrader) is kept."""
    if item.extra_credit:
        return 0.0, float(item.score)
    return float(item.score), extra_credit


def code_comment(item: ItemResult) -> str:
    """The auto comment of a code item: score and each hidden test by name and message."""
    tests = item.tests
    passed = sum(1 for t in tests if t.passed)
    lines = [
        f"Hidden tests ({item.mode or EXECUTED}): {passed}/{len(tests)} passed, "
        + (
            f"extra credit {numbers.score(item.score)} / {numbers.score(item.points)}."
            if item.extra_credit
            else f"score {numbers.score(item.score)} / {numbers.score(item.points)}."
        )
    ]
    for t in tests:
        mark = "PASS" if t.passed else (f"PART {t.credit:.0%}" if t.credit > 0 else "FAIL")
        edge = " (edge case)" if t.edge else ""
        msg = f": {t.message}" if (t.message and not t.passed) else ""
        lines.append(f"- {mark} {t.name}{edge}{msg}")
        for p in t.parts if not t.passed else []:
            lines.append(f"    - {'ok' if p['passed'] else 'wrong'}: {p['name']}")
    if item.message:
        lines.append("")
        lines.append(item.message)
    return "\n".join(lines)


def written_comment(item: ItemResult) -> str:
    """The suggestion shown in formgrader's comment box: the engine's ready text, else one built here."""
    if item.message:
        return item.message
    sugg = item.suggestion if item.suggestion is not None else item.score
    lines = [
        f"Suggested score ({item.mode}): {numbers.score(sugg)} / {numbers.score(item.points)} — please confirm."
    ]
    for ev in item.evidence:
        mark = "met" if ev.get("met") else "not met"
        quote = f" «{ev['quote']}»" if ev.get("quote") else ""
        note = f" {ev['note']}" if ev.get("note") else ""
        lines.append(f"- {ev.get('criterion', '?')}: {mark}.{quote}{note}")
    return "\n".join(lines)
