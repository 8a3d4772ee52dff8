"""The numbers of the class report (:mod:`autograder.review.report`), per assignment, from stored results
alone: items, hidden tests, discrimination, written criteria, failure messages, submission times; and the
similarity findings (code pairs, written answer groups) that :func:`similarity_findings` reads from OUT.

The numbers (all over the *graded* submissions of an assignment; rows that could not be graded are
counted apart):

* **score**: the item's ``score`` as stored (a written item's confirmed score, else the suggestion); the
  total is ``SubmissionResult.total`` (every item, extra credit included, before any late penalty). Mean,
  population standard deviation, min, median, max.
* **pass rate** of a hidden test: the share of submissions whose test passed in full; **mean credit**: the
  mean share of its weight earned (differs from the pass rate only for tests with parts).
* **discrimination**: the *item-rest correlation* (corrected item-total correlation): Pearson's r between a
  test's credit (0/1, so this is the point-biserial correlation; a share for tests with parts) and the rest
  of the submission's total, ``total − the test's own contribution`` (``points × weight × credit / Σ weights``
  of its item); for an item, between its score and ``total − its score``. Empty when fewer than three
  submissions or when either side does not vary.
* **met rate** of a written criterion: the share of submissions whose answer the scorer found met it.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from autograder.core.registry import lessons
from autograder.core.results import SubmissionResult
from autograder.gradebook import coursedir
from autograder.grading.assignment import load_assignment
from autograder.grading.notebook import extract, neutralise_magics, read_notebook_bytes
from autograder.review.groups import review_items
from autograder.review.similarity import THRESHOLD, Document, compare_class, release_exclusion

#: failure messages listed per assignment
TOP_FAILURES = 15
#: written answers listed as alike: TF-IDF cosine similarity of every pair of an answer group at least this
WRITTEN_SIMILARITY = 0.9

__all__ = ["compute", "AssignmentReport", "pearson", "describe", "similarity_findings"]


# ----------------------------------------------------------------------------------------- the numbers
def describe(values: Sequence[float]) -> dict[str, float | None]:
    """n, mean, population sd, min, median, max of ``values`` (None where there are none)."""
    if not values:
        return {"n": 0, "mean": None, "sd": None, "min": None, "median": None, "max": None}
    return {
        "n": len(values),
        "mean": statistics.fmean(values),
        "sd": statistics.pstdev(values),
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
    }


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r of ``x`` and ``y``; None with fewer than 3 pairs or when either does not vary."""
    n = len(x)
    if n < 3 or n != len(y):
        return None
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


@dataclass
class ItemStats:
    id: str
    kind: str
    points: float
    extra_credit: bool
    scores: list[float]
    discrimination: float | None

    @property
    def summary(self) -> dict:
        return describe(self.scores)


@dataclass
class TestStats:
    item: str
    name: str
    weight: float
    edge: bool
    credits: list[float]
    passed: int
    discrimination: float | None

    @property
    def n(self) -> int:
        return len(self.credits)

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.n if self.n else None

    @property
    def mean_credit(self) -> float | None:
        return statistics.fmean(self.credits) if self.credits else None


@dataclass
class CriterionStats:
    item: str
    criterion: str
    points: float | None
    description: str
    n: int
    met: int

    @property
    def met_rate(self) -> float | None:
        return self.met / self.n if self.n else None


@dataclass
class Failure:
    item: str
    test: str
    message: str
    count: int


@dataclass
class AssignmentReport:
    assignment_id: str
    title: str
    graded: list[SubmissionResult]
    ungraded: list[SubmissionResult]
    items: list[ItemStats]
    tests: list[TestStats]
    criteria: list[CriterionStats]
    failures: list[Failure]
    failures_total: int
    total: ItemStats
    times: list[tuple[str, datetime | None]]
    due: datetime | None = None
    grace: timedelta = timedelta(0)
    similarity: object = None  # SimilarityFindings, filled by build()
    similarity_note: str = ""  # why there are no findings

    @property
    def max_total(self) -> float:
        return sum(it.points for it in self.items if not it.extra_credit)


def _contribution(item, test) -> float:
    weights = sum(t.weight for t in item.tests)
    return item.points * test.weight * test.credit / weights if weights else 0.0


def compute(
    results: Iterable[SubmissionResult], policies: dict | None = None, rubrics: dict[str, dict] | None = None
) -> list[AssignmentReport]:
    """The numbers of the report, per assignment (sorted by id), from stored results alone. ``policies``:
    the course file's late policies (due dates); ``rubrics``: {assignment id: rubric} for titles and the
    criteria's points and descriptions (optional)."""
    policies, rubrics = policies or {}, rubrics or {}
    by_assignment: dict[str, list[SubmissionResult]] = {}
    for r in results:
        by_assignment.setdefault(r.assignment_id, []).append(r)
    reports = []
    for aid in sorted(by_assignment):
        group = sorted(by_assignment[aid], key=lambda r: r.student_id)
        graded = [r for r in group if r.graded and r.items]
        ungraded = [r for r in group if not (r.graded and r.items)]
        rubric = rubrics.get(aid) or {}
        totals = [r.total for r in graded]

        # items, in the order of the results (the rubric's)
        specs: dict[str, object] = {}
        for r in graded:
            for it in r.items:
                specs.setdefault(it.id, it)
        items = []
        for iid, spec in specs.items():
            pairs = [(it.score, r.total - it.score) for r in graded for it in r.items if it.id == iid]
            items.append(
                ItemStats(
                    iid,
                    spec.kind,
                    spec.points,
                    spec.extra_credit,
                    [p[0] for p in pairs],
                    pearson([p[0] for p in pairs], [p[1] for p in pairs]),
                )
            )
        total = ItemStats(
            "total", "total", sum(i.points for i in items if not i.extra_credit), False, totals, None
        )

        # hidden tests, in the order they ran
        test_rows: dict[tuple[str, str], list[tuple[float, float, bool, object]]] = {}
        for r in graded:
            for it in r.items:
                for t in it.tests:
                    test_rows.setdefault((it.id, t.name), []).append(
                        (t.credit, r.total - _contribution(it, t), t.passed, t)
                    )
        tests = []
        for (iid, name), rows in test_rows.items():
            first = rows[0][3]
            credits = [row[0] for row in rows]
            tests.append(
                TestStats(
                    iid,
                    name,
                    first.weight,
                    first.edge,
                    credits,
                    sum(row[2] for row in rows),
                    pearson(credits, [row[1] for row in rows]),
                )
            )

        # written criteria
        rubric_items = {str(it.get("id")): it for it in rubric.get("items", [])}
        crit_rows: dict[tuple[str, str], list[bool]] = {}
        for r in graded:
            for it in r.items:
                if it.kind != "written":
                    continue
                for ev in it.evidence:
                    crit_rows.setdefault((it.id, str(ev.get("criterion", ""))), []).append(
                        bool(ev.get("met"))
                    )
        criteria = []
        for (iid, cid), mets in crit_rows.items():
            spec = next(
                (c for c in rubric_items.get(iid, {}).get("criteria", []) if str(c.get("id")) == cid), {}
            )
            criteria.append(
                CriterionStats(
                    iid,
                    cid,
                    float(spec["points"]) if "points" in spec else None,
                    str(spec.get("description", "")),
                    len(mets),
                    sum(mets),
                )
            )

        # failure messages
        counts: Counter = Counter()
        for r in graded:
            for it in r.items:
                for t in it.tests:
                    if not t.passed:
                        counts[(it.id, t.name, t.message or "(no message)")] += 1
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        failures = [Failure(i, t, m, c) for (i, t, m), c in ranked[:TOP_FAILURES]]

        times = [(r.student_id, _parse_time(r.submitted_at)) for r in group]
        policy = policies.get(aid)
        reports.append(
            AssignmentReport(
                aid,
                str(rubric.get("title", "")),
                graded,
                ungraded,
                items,
                tests,
                criteria,
                failures,
                sum(counts.values()),
                total,
                times,
                policy.due if policy is not None else None,
                policy.grace if policy is not None else timedelta(0),
            )
        )
    return reports


def _parse_time(text: str) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------- similarity
@dataclass
class WrittenGroup:
    item: str
    members: list  # answer_groups.Answer
    similarity: float


@dataclass
class SimilarityFindings:
    pairs: list  # similarity.Pair, all sharing a fingerprint, highest first
    small: list[str]  # students with too little code of their own to compare
    unread: list[str]  # students whose submission copy could not be read
    written: list[WrittenGroup] = field(default_factory=list)

    @property
    def flagged(self) -> list:

        return [p for p in self.pairs if p.score >= THRESHOLD]


def similarity_findings(out: Path, report: AssignmentReport) -> SimilarityFindings | None:
    """Code pairs (winnowing, :mod:`autograder.review.similarity`) and written answer groups of near-identical
    answers (:mod:`autograder.review.answer_groups`) for one assignment graded in ``out``; None when the
    assignment is not known to this grader (no release to exclude)."""

    directory = {k: v.directory for k, v in lessons().items()}.get(report.assignment_id)
    if directory is None:
        return None
    assignment = load_assignment(directory)
    release = read_notebook_bytes(assignment.release)
    release_code = [
        neutralise_magics("".join(c["source"]) if isinstance(c["source"], list) else c["source"])[0]
        for c in release.get("cells", [])
        if c.get("cell_type") == "code"
    ]
    exclude = release_exclusion(release_code)
    docs, unread = [], []
    for r in report.graded:
        path = out / coursedir.SUBMITTED / r.student_id / r.assignment_id / f"{assignment.notebook}.ipynb"
        try:
            extracted = extract(path, assignment.cells, assignment.written_ids)
        except Exception:  # noqa: BLE001 - missing or unreadable copy: listed, never fatal
            unread.append(r.student_id)
            continue
        docs.append(Document.of(r.student_id, [code for _, code in extracted.code_cells], exclude))
    pairs, small = compare_class(docs)
    findings = SimilarityFindings(pairs, [d.student_id for d in small], unread)

    if any(it.kind == "written" for it in report.items):
        placeholders = {
            " ".join(c.source.lower().split()) for c in assignment.cells.cells if c.role == "answer"
        }
        for review in review_items(out, report.assignment_id, threshold=WRITTEN_SIMILARITY):
            for g in review.groups:
                members = [a for a in g.members if a.canonical.strip() and a.canonical not in placeholders]
                if len(members) >= 2:
                    findings.written.append(WrittenGroup(review.item_id, members, g.similarity))
    return findings
