"""Scores from test outcomes: each hidden test run against the ``sub`` handle, each code item the weighted
share of its tests passed (credit per part where a test declares parts), each written item the static
review's suggestion unless the instructor confirmed a score."""

from __future__ import annotations

from autograder.core.results import EXECUTED, STATIC_REVIEW, ItemResult, TestOutcome
from autograder.grading.assignment import Assignment
from autograder.grading.lesson_readers import for_lesson
from autograder.grading.submission import Submission
from autograder.grading.written import suggest
from autograder.testing import CallTimeout, WorkerCrashed, recording_parts


def run_tests(assignment: Assignment, sub: Submission) -> list[TestOutcome]:
    outcomes = []
    for test in assignment.tests:
        passed, message, record = False, "", None
        try:
            if test.parts:
                with recording_parts(test.parts) as record:
                    test.fn(sub)
            else:
                test.fn(sub)
            passed = True
        except (CallTimeout, WorkerCrashed) as exc:
            message = str(exc)
        except AssertionError as exc:
            message = str(exc.args[0]) if exc.args else "结果与预期不符"
        except Exception as exc:  # noqa: BLE001 - the student's value had an unexpected shape
            message = f"返回值的结构或类型不符合约定（检查时出现 {type(exc).__name__}）"
        outcome = TestOutcome(test.name, test.item, test.weight, passed, message[:500], test.edge)
        if record is not None:
            outcome.earned = round(record.earned(), 6) if passed else 0.0
            outcome.parts = [
                {
                    "name": name,
                    "weight": weight,
                    "passed": passed and name in record.checked and name not in record.failed,
                    "message": record.failed.get(name, _unchecked(name, record, passed, message))[:500],
                }
                for name, weight in test.parts.items()
            ]
            outcome.passed = outcome.earned == 1.0
            if passed and not outcome.passed:
                outcome.message = next(p["message"] for p in outcome.parts if not p["passed"])
        outcomes.append(outcome)
    return outcomes


def _unchecked(name: str, record, passed: bool, message: str) -> str:
    if not passed:
        return message
    return "" if name in record.checked else "这一部分没有被检查到（测试提前结束）"


def score_items(
    assignment: Assignment,
    outcomes: list[TestOutcome],
    answers: dict[str, str],
    confirmed: dict[str, float | None] | None = None,
    answer_flags: dict[str, list[str]] | None = None,
) -> list[ItemResult]:
    confirmed, answer_flags = confirmed or {}, answer_flags or {}
    items = []
    for spec in assignment.items:
        points = spec.points
        if spec.is_code:
            own = [o for o in outcomes if o.item == spec.id]
            total = sum(o.weight for o in own)
            got = sum(o.weight * o.credit for o in own)
            score = round(points * got / total, 4) if total else 0.0
            items.append(
                ItemResult(
                    spec.id,
                    "code",
                    points,
                    score,
                    EXECUTED,
                    spec.description,
                    tests=own,
                    extra_credit=spec.extra_credit,
                )
            )
        else:
            s = suggest(
                answers.get(spec.id, ""),
                spec.spec,
                flags=answer_flags.get(spec.id, ()),
                anchors=for_lesson(assignment.directory).get(spec.id),
            )
            conf = confirmed.get(spec.id)
            items.append(
                ItemResult(
                    spec.id,
                    "written",
                    points,
                    conf if conf is not None else float(s.score),
                    STATIC_REVIEW,
                    spec.description,
                    evidence=list(s.evidence),
                    suggestion=float(s.score),
                    confirmed=conf,
                    message=s.comment,
                    flags=list(s.flags),
                    doubts=list(s.doubts),
                )
            )
    return items


def zero_items(assignment: Assignment, why: str) -> list[ItemResult]:
    return [
        ItemResult(
            spec.id,
            spec.kind,
            spec.points,
            0.0,
            EXECUTED if spec.is_code else STATIC_REVIEW,
            spec.description,
            suggestion=0.0 if spec.is_written else None,
            message=why,
            extra_credit=spec.extra_credit,
        )
        for spec in assignment.items
    ]
