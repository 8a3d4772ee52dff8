"""The grading data model: what one submission earned, item by item, as plain JSON-able data."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path

from autograder.core.files import atomic_write_text

EXECUTED = "executed"
STATIC_REVIEW = "static review"
#: how the message of a misnamed notebook that was graded anyway begins (``classroom.discovery`` writes it;
#: the class table prints it in full, the batch regrades when it no longer matches the folder)
MISNAMED_NOTE = "评分的是文件夹里唯一的 notebook "


@dataclass
class TestOutcome:
    """One hidden test: its name, the rubric item it belongs to, and what the student should read."""

    name: str
    item: str
    weight: float
    passed: bool
    message: str = ""
    edge: bool = False
    earned: float | None = None  # share of the weight earned (tests with parts); None: all or nothing
    parts: list[dict] = field(default_factory=list)  # [{"name", "weight", "passed", "message"}]

    @property
    def credit(self) -> float:
        """The share of this test's weight the submission earned (0..1)."""
        if self.earned is not None:
            return float(self.earned)
        return 1.0 if self.passed else 0.0


@dataclass
class ItemResult:
    """One rubric item. ``score`` is what counts now: the test score for code, and for written answers
    the confirmed score if the instructor set one, else the suggestion. An ``extra_credit`` item (rubric
    ``extra_credit: true``) adds its score to the total without adding its points to the maximum."""

    id: str
    kind: str  # "code" | "written"
    points: float
    score: float
    mode: str  # EXECUTED | STATIC_REVIEW
    description: str = ""
    tests: list[TestOutcome] = field(default_factory=list)
    evidence: list[dict] = field(default_factory=list)  # written: [{"criterion", "met", "quote", "note"}]
    suggestion: float | None = None
    confirmed: float | None = None
    message: str = ""
    extra_credit: bool = False
    flags: list[str] = field(default_factory=list)  # written: what the review must check by hand
    doubts: list[str] = field(default_factory=list)  # written: why the suggestion's reading is doubtful


@dataclass
class SubmissionResult:
    student_id: str
    assignment_id: str
    notebook: str
    status: str = "ok"  # "ok" or a short reason the notebook could not be (fully) graded
    isolation: str = ""
    items: list[ItemResult] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # notes for the student (cell errors, tampering, ...)
    submission_sha256: str = ""
    duration_s: float = 0.0
    pass_line: float = 0.0
    grader: str = ""  # fingerprint of the rubric, hidden tests and release that produced this result
    # late policy (course.yaml; autograder.intake.course): empty/0 when the assignment has none
    submitted_at: str = ""  # ISO 8601, UTC, from the submission's timestamp.txt
    late_days: int = 0
    late_penalty: float = 0.0
    late_note: str = ""  # how the penalty was computed ("" = no late policy for this assignment)
    graded: bool = True  # False: could not be graded or recorded (unknown assignment, unreadable, error)

    # -- derived values -------------------------------------------------------------------------
    def item(self, item_id: str) -> ItemResult:
        for it in self.items:
            if it.id == item_id:
                return it
        raise KeyError(item_id)

    # How extra credit counts (nbgrader's rule: a grade's score is manual-or-auto score + extra credit,
    # and the notebook's max_score sums only the cells' points):
    #   code_total   = regular code items;   extra_credit = extra-credit items (max: max_extra_credit)
    #   total        = every item's score, extra credit included (so it can exceed max_total)
    #   max_total    = points of the regular items only (the pass line is set against it)
    #   passed       = final_total >= pass_line: extra credit counts towards passing, a late penalty against
    @property
    def code_total(self) -> float:
        return round(sum(it.score for it in self.items if it.kind == "code" and not it.extra_credit), 4)

    @property
    def extra_credit(self) -> float:
        return round(sum(it.score for it in self.items if it.extra_credit), 4)

    @property
    def max_extra_credit(self) -> float:
        return sum(it.points for it in self.items if it.extra_credit)

    @property
    def total(self) -> float:
        return round(sum(it.score for it in self.items), 4)

    @property
    def max_total(self) -> float:
        return sum(it.points for it in self.items if not it.extra_credit)

    @property
    def final_total(self) -> float:
        """``total`` minus the late penalty (equal to ``total`` without a late policy)."""
        return round(self.total - self.late_penalty, 4)

    @property
    def passed(self) -> bool:
        """Reached the pass line; a row that could not be graded never passes (even with no pass line)."""
        return self.graded and bool(self.items) and self.final_total >= self.pass_line - 1e-9

    @property
    def provisional(self) -> bool:
        return any(it.kind == "written" and it.confirmed is None for it in self.items)

    # -- serialisation ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return _plain(self)

    @classmethod
    def from_dict(cls, data: dict) -> SubmissionResult:
        items = []
        for it in data.get("items", []):
            it = dict(it)
            it["tests"] = [TestOutcome(**t) for t in it.get("tests", [])]
            items.append(ItemResult(**it))
        return cls(**{**data, "items": items})

    def save(self, path: Path, durable: bool = True) -> None:
        # compact: json's C encoder (indent forces the pure-Python one, ~10x slower at class scale)
        atomic_write_text(
            path, json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n", durable
        )

    @classmethod
    def load(cls, path: Path) -> SubmissionResult:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def _plain(obj):
    """``dataclasses.asdict`` without its deep copy of every leaf (strings and numbers are immutable):
    fresh dicts and lists all the way down."""
    if is_dataclass(obj) and not isinstance(obj, type):
        return {name: _plain(getattr(obj, name)) for name in _field_names(type(obj))}
    if isinstance(obj, list | tuple):
        return [_plain(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return obj
