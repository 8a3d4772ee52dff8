"""The class report: what a graded class did and did not understand, and which submissions look alike.

``python -m autograder report --out OUT`` (and every unsharded ``grade`` / ``merge``) reads what grading
saved in OUT and writes

* ``OUT/report/index.html``: one page per class, opened from disk (no server, no network, no script: every
  figure is inline SVG drawn by matplotlib, every text from a submission escaped, a Content-Security-Policy
  that allows no script, fetch, form or frame). Per assignment: score distribution per item and of the
  total; pass rate per hidden test (its difficulty); discrimination per test and per item; met rate per
  criterion of each written item; the most common failure messages with counts; submission times against
  the due date (``OUT/course.yaml``); similar submissions (code and written answers, side by side).
* ``OUT/report/items.csv``: the numbers of the page, one row per total, item, test and criterion.
* ``OUT/report/similarity.csv``: every code pair at or above the threshold and every pair of each written
  answer group.

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

Nothing here writes the gradebook, a result or a grade.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from autograder.classroom.confirmed import load_results
from autograder.core.registry import lessons
from autograder.core.results import SubmissionResult, atomic_write_text
from autograder.core.safe_text import csv_cell
from autograder.core.safe_text import html_text as esc
from autograder.gradebook import coursedir
from autograder.grading.assignment import load_assignment
from autograder.grading.notebook import extract, neutralise_magics, read_notebook_bytes
from autograder.intake.course import CourseError, load_course
from autograder.review.groups import review_items, shown
from autograder.review.similarity import (
    MIN_FINGERPRINTS,
    THRESHOLD,
    Document,
    compare_class,
    release_exclusion,
)

REPORT_DIR = "report"
#: failure messages listed per assignment
TOP_FAILURES = 15
#: code pairs shown on the page (all of them are in similarity.csv)
MAX_PAIRS = 20
#: written answers listed as alike: TF-IDF cosine similarity of every pair of an answer group at least this
WRITTEN_SIMILARITY = 0.9
#: CSP of the page: styles of its own, inline SVG; no script, fetch, image, font, form, frame or base
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

__all__ = ["build", "compute", "AssignmentReport", "pearson", "describe", "CSV_HEAD"]


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


# -------------------------------------------------------------------------------------------- figures
def _svg(fig, salt: str) -> str:
    import matplotlib
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt, "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _figure(name: str, svg: str, caption: str) -> str:
    return f"<figure class='fig' data-figure='{esc(name)}'>{svg}<figcaption>{caption}</figcaption></figure>"


def _score_figure(rep: AssignmentReport) -> str:
    import matplotlib.pyplot as plt
    import numpy as np

    panels = [*rep.items, rep.total]
    cols = min(4, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.4 * rows), squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, st in zip(axes.flat, panels, strict=False):
        top = max([st.points, *st.scores]) or 1.0
        bins = np.linspace(0, top, 9 if st.id != "total" else 11)
        ax.hist(st.scores, bins=bins, color="#4c72b0" if st.id != "total" else "#dd8452", edgecolor="white")
        extra = ", extra credit" if st.extra_credit else ""
        ax.set_title(f"{st.id} ({st.kind}, {st.points:g} pts{extra})", fontsize=9)
        ax.set_xlim(0, top)
        ax.tick_params(labelsize=8)
        ax.set_xlabel("score", fontsize=8)
        ax.set_ylabel("submissions", fontsize=8)
    fig.tight_layout()
    return _svg(fig, f"{rep.assignment_id}-scores")


def _barh(labels, values, salt, xlabel, xlim=(0, 1), ref=None, colors=None) -> str:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.28 * len(labels) + 1.0))
    y = list(range(len(labels)))
    ax.barh(y, [0 if v is None else v for v in values], color=colors or "#4c72b0")
    for yi, v in zip(y, values, strict=True):
        ax.text(0 if v is None else v, yi, "  n/a" if v is None else f" {v:.2f}", va="center", fontsize=7)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(*xlim)
    if ref is not None:
        ax.axvline(ref, color="#999", linestyle="--", linewidth=1)
    ax.axvline(0, color="#333", linewidth=0.8)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    return _svg(fig, salt)


_PALETTE = ["#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd", "#dd8452"]


def _item_colors(rep: AssignmentReport, item_ids) -> list[str]:
    order = {it.id: i for i, it in enumerate(rep.items)}
    return [_PALETTE[order.get(i, 0) % len(_PALETTE)] for i in item_ids]


def _times_figure(rep: AssignmentReport) -> str | None:
    import matplotlib.pyplot as plt

    known = [t for _, t in rep.times if t is not None]
    if not known:
        return None
    fig, ax = plt.subplots(figsize=(8, 2.6))
    if rep.due is not None:
        hours = [(t - rep.due).total_seconds() / 3600 for t in known]
        ax.hist(hours, bins=min(30, max(5, len(hours))), color="#4c72b0", edgecolor="white")
        ax.axvline(0, color="#c44e52", linewidth=1.5, label="due")
        if rep.grace:
            ax.axvline(rep.grace.total_seconds() / 3600, color="#ccb974", linestyle="--", label="due + grace")
        ax.set_xlabel("hours relative to the due date (negative: before it)", fontsize=8)
        ax.legend(fontsize=7)
    else:
        first = min(known)
        hours = [(t - first).total_seconds() / 3600 for t in known]
        ax.hist(hours, bins=min(30, max(5, len(hours))), color="#4c72b0", edgecolor="white")
        ax.set_xlabel("hours after the first submission (no due date in OUT/course.yaml)", fontsize=8)
    ax.set_ylabel("submissions", fontsize=8)
    ax.tick_params(labelsize=8)
    fig.tight_layout()
    return _svg(fig, f"{rep.assignment_id}-times")


# ------------------------------------------------------------------------------------------- the page
STYLE = """
body{font-family:system-ui,"Noto Sans CJK SC",sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem} h2{font-size:1.25rem;margin-top:2.4rem;border-bottom:2px solid #ddd}
h3{font-size:1.05rem;margin-top:1.6rem}
table{border-collapse:collapse;margin:.4rem 0} td,th{border-bottom:1px solid #ddd;padding:.25rem .5rem;
text-align:left;vertical-align:top;font-size:.9rem} td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
figure.fig{margin:.8rem 0} figure.fig svg{max-width:100%;height:auto} figcaption{font-size:.85rem;color:#555}
.note{color:#555;font-size:.9rem} .warn{background:#fff3cd;padding:.5rem .8rem;border-radius:.3rem}
details{margin:.3rem 0;border:1px solid #ddd;border-radius:.3rem;padding:.2rem .5rem}
summary{cursor:pointer} .sbs{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}
.sbs pre,pre.answer{margin:0;padding:.4rem;background:#fafafa;border:1px solid #eee;font-size:.75rem;
overflow:auto;max-height:40rem;white-space:pre-wrap;word-break:break-word} .hit{background:#ffe08a}
"""


def _said(text) -> str:
    """Text that came from a submission (ids, failure messages that quote the student's exception, code,
    answers): control, bidi and zero-width characters made visible (``group_review.shown``), then escaped."""

    return esc(shown(text))


def _num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "—"
    return f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def _code_view(doc, lines: set[int]) -> str:
    out = []
    for n, line in enumerate(doc.text.split("\n"), start=1):
        text = _said(line) or " "
        out.append(f"<span class='hit'>{text}</span>" if n in lines else text)
    return "<pre>" + "\n".join(out) + "</pre>"


def _similarity_section(rep: AssignmentReport) -> list[str]:

    f = rep.similarity
    parts = ["<h3>相似的提交 / similar submissions</h3>"]
    parts.append(
        "<p class='note'><b>What a high score means:</b> two submissions share long runs of the same code "
        "once names, literals, comments, docstrings and layout are ignored and the release's own code is "
        "removed; the highlighted lines are the shared runs. It is a reason to look at the two side by side, "
        "<b>not</b> evidence of copying: short exercises have few natural solutions, students may work from "
        "the same lecture example or discuss an approach as allowed, and code from a common outside source "
        "matches too. A low score does <b>not</b> prove independence: code rewritten by hand (other control "
        "flow, other algorithm) or generated anew is not found. Nothing here changes a grade; any decision is "
        "the instructor's, after reading both submissions and talking to the students.</p>"
    )
    if f is None:
        parts.append(f"<p>{esc(rep.similarity_note or 'No similarity check.')}</p>")
        return parts
    parts.append(
        f"<p>Code: winnowing over normalised Python tokens (<code>autograder/review/similarity.py</code>); score = "
        f"share of the two submissions' fingerprints they have in common; pairs at or above "
        f"<b>{THRESHOLD:g}</b> are listed. {len(f.pairs)} pair(s) share anything; "
        f"{len(f.flagged)} at or above the threshold.</p>"
    )
    if f.small:
        parts.append(
            f"<p class='note'>{len(f.small)} submission(s) with fewer than {MIN_FINGERPRINTS} fingerprints of "
            f"their own (little code beyond the release) were not compared.</p>"
        )
    if f.unread:
        parts.append(f"<p class='note'>{len(f.unread)} submission copy(ies) could not be read.</p>")
    below = [p for p in f.pairs if p.score < THRESHOLD]
    if below:
        p = below[0]
        parts.append(
            f"<p class='note'>Highest pair below the threshold: {_num(p.score)} "
            f"({_said(p.a.student_id)} / {_said(p.b.student_id)}).</p>"
        )
    shown_pairs = f.flagged[:MAX_PAIRS]
    if shown_pairs:
        parts.append(
            "<table><tr><th>#</th><th>A</th><th>B</th><th class='num'>score</th>"
            "<th class='num'>A found in B</th><th class='num'>B found in A</th><th class='num'>shared</th></tr>"
        )
        for n, p in enumerate(shown_pairs, 1):
            shared = p.shared
            parts.append(
                f"<tr data-pair='{n}'><td>{n}</td><td>{_said(p.a.student_id)}</td><td>{_said(p.b.student_id)}</td>"
                f"<td class='num'>{_num(p.score)}</td><td class='num'>{_pct(p.cover_a)}</td>"
                f"<td class='num'>{_pct(p.cover_b)}</td><td class='num'>{p.common}</td></tr>"
            )
        parts.append("</table>")
        if len(f.flagged) > MAX_PAIRS:
            parts.append(f"<p class='note'>{len(f.flagged) - MAX_PAIRS} more in similarity.csv.</p>")
        for n, p in enumerate(shown_pairs, 1):
            shared = p.shared
            parts.append(
                f"<details class='pair'><summary>#{n} {_said(p.a.student_id)} ↔ {_said(p.b.student_id)}: "
                f"{_num(p.score)}</summary><div class='sbs'>"
                f"<div><b>{_said(p.a.student_id)}</b>{_code_view(p.a, p.a.lines_of(shared))}</div>"
                f"<div><b>{_said(p.b.student_id)}</b>{_code_view(p.b, p.b.lines_of(shared))}</div>"
                "</div></details>"
            )
    parts.append(
        f"<p>Written answers: answer groups (<code>autograder/review/answer_groups.py</code>: same criteria met, "
        f"character n-gram TF-IDF cosine similarity ≥ <b>{WRITTEN_SIMILARITY:g}</b> for every pair); blank "
        f"answers and the release's placeholder are left out. {len(f.written)} group(s).</p>"
    )
    for g in f.written:
        names = ", ".join(_said(a.student_id) for a in g.members)
        body = "".join(
            f"<div><b>{_said(a.student_id)}</b><pre class='answer'>{_said(a.text)}</pre></div>"
            for a in g.members[:4]
        )
        more = f"<p class='note'>… and {len(g.members) - 4} more.</p>" if len(g.members) > 4 else ""
        parts.append(
            f"<details class='written-group'><summary>{esc(g.item)}: {len(g.members)} answers, lowest "
            f"similarity {_num(g.similarity)} — {names}</summary><div class='sbs'>{body}</div>{more}</details>"
        )
    return parts


def _assignment_section(rep: AssignmentReport) -> list[str]:
    parts = [f"<h2 id='{esc(rep.assignment_id)}'>{esc(rep.assignment_id)} {esc(rep.title)}</h2>"]
    n = len(rep.graded)
    passed = sum(r.passed for r in rep.graded)
    parts.append(
        f"<p>{n} graded submission(s), {passed} pass; {len(rep.ungraded)} could not be graded "
        f"(not counted below). Total: mean {_num(rep.total.summary['mean'])}, median "
        f"{_num(rep.total.summary['median'])} of {rep.max_total:g}.</p>"
    )
    if any(it.kind == "written" for it in rep.items) and any(r.provisional for r in rep.graded):
        parts.append(
            "<p class='note'>Written scores not yet confirmed in formgrader count as their static-review "
            "suggestion.</p>"
        )
    if not n:
        return parts
    # scores
    parts.append("<h3>分数分布 / score distribution</h3>")
    parts.append(_figure("scores", _score_figure(rep), "Histogram of each item's score and of the total."))
    parts.append(
        "<table><tr><th>item</th><th>kind</th><th class='num'>points</th><th class='num'>mean</th>"
        "<th class='num'>sd</th><th class='num'>min</th><th class='num'>median</th><th class='num'>max</th>"
        "<th class='num'>discrimination</th></tr>"
    )
    for st in [*rep.items, rep.total]:
        s = st.summary
        kind = st.kind + (" (extra credit)" if st.extra_credit else "")
        parts.append(
            f"<tr><td>{esc(st.id)}</td><td>{esc(kind)}</td><td class='num'>{st.points:g}</td>"
            + "".join(f"<td class='num'>{_num(s[k])}</td>" for k in ("mean", "sd", "min", "median", "max"))
            + f"<td class='num'>{_num(st.discrimination)}</td></tr>"
        )
    parts.append("</table>")
    # tests
    if rep.tests:
        labels = [f"{t.item}: {t.name}" for t in rep.tests]
        colors = _item_colors(rep, [t.item for t in rep.tests])
        parts.append("<h3>隐藏测试通过率 / pass rate per hidden test (difficulty)</h3>")
        parts.append(
            _figure(
                "pass-rate",
                _barh(
                    labels,
                    [t.pass_rate for t in rep.tests],
                    f"{rep.assignment_id}-pass",
                    "pass rate",
                    colors=colors,
                ),
                "Share of graded submissions that passed each hidden test in full (colour: item).",
            )
        )
        parts.append("<h3>区分度 / discrimination (item-rest correlation)</h3>")
        disc_labels = labels + [f"item {it.id}" for it in rep.items]
        disc_values = [t.discrimination for t in rep.tests] + [it.discrimination for it in rep.items]
        parts.append(
            _figure(
                "discrimination",
                _barh(
                    disc_labels,
                    disc_values,
                    f"{rep.assignment_id}-disc",
                    "item-rest correlation (Pearson r)",
                    xlim=(-1, 1),
                    ref=0.2,
                    colors=colors + ["#555"] * len(rep.items),
                ),
                "Pearson r between a test's credit (0/1: point-biserial) and the rest of the total (total minus "
                "the test's own contribution); for an item, its score against the total minus it. Near 0 or "
                "negative: the test does not separate students who did well elsewhere from those who did not "
                "(too easy, too hard, or testing something else); the dashed line marks 0.2, a common rule "
                "of thumb for a useful item. n/a: fewer than 3 submissions or no variation.",
            )
        )
        parts.append(
            "<table><tr><th>item</th><th>test</th><th class='num'>weight</th><th class='num'>n</th>"
            "<th class='num'>pass rate</th><th class='num'>mean credit</th><th class='num'>discrimination</th></tr>"
        )
        for t in rep.tests:
            edge = " (edge)" if t.edge else ""
            parts.append(
                f"<tr><td>{esc(t.item)}</td><td>{esc(t.name)}{edge}</td><td class='num'>{t.weight:g}</td>"
                f"<td class='num'>{t.n}</td><td class='num'>{_pct(t.pass_rate)}</td>"
                f"<td class='num'>{_pct(t.mean_credit)}</td><td class='num'>{_num(t.discrimination)}</td></tr>"
            )
        parts.append("</table>")
    # criteria
    if rep.criteria:
        parts.append("<h3>问答题得分要点 / met rate per criterion of the written items</h3>")
        parts.append(
            _figure(
                "criteria",
                _barh(
                    [f"{c.item}: {c.criterion}" for c in rep.criteria],
                    [c.met_rate for c in rep.criteria],
                    f"{rep.assignment_id}-criteria",
                    "met rate (static review)",
                    colors=_item_colors(rep, [c.item for c in rep.criteria]),
                ),
                "Share of graded submissions whose answer the scorer found to meet each criterion.",
            )
        )
        parts.append(
            "<table><tr><th>item</th><th>criterion</th><th class='num'>points</th><th class='num'>met</th>"
            "<th class='num'>met rate</th><th>description</th></tr>"
        )
        for c in rep.criteria:
            pts = "—" if c.points is None else f"{c.points:g}"
            parts.append(
                f"<tr><td>{esc(c.item)}</td><td>{esc(c.criterion)}</td><td class='num'>{pts}</td>"
                f"<td class='num'>{c.met}/{c.n}</td><td class='num'>{_pct(c.met_rate)}</td>"
                f"<td class='note'>{esc(c.description)}</td></tr>"
            )
        parts.append("</table>")
    # failures
    parts.append("<h3>最常见的失败信息 / most common failure messages</h3>")
    if rep.failures:
        parts.append(
            f"<p class='note'>{rep.failures_total} failed test runs in all; the {len(rep.failures)} most "
            "common (test, message) pairs:</p>"
        )
        parts.append("<table><tr><th class='num'>count</th><th>item</th><th>test</th><th>message</th></tr>")
        for fl in rep.failures:
            parts.append(
                f"<tr><td class='num'>{fl.count}</td><td>{esc(fl.item)}</td><td>{esc(fl.test)}</td>"
                f"<td>{_said(fl.message)}</td></tr>"
            )
        parts.append("</table>")
    else:
        parts.append("<p>No hidden test failed.</p>")
    # times
    parts.append("<h3>提交时间 / submission times</h3>")
    svg = _times_figure(rep)
    no_time = sum(t is None for _, t in rep.times)
    if svg is None:
        parts.append("<p>No submission has a time (nbgrader's timestamp.txt; see <code>collect</code>).</p>")
    else:
        parts.append(_figure("times", svg, "When the submissions came in."))
        if rep.due is not None:
            known = [t for _, t in rep.times if t is not None]
            on_time = sum(t <= rep.due for t in known)
            in_grace = sum(rep.due < t <= rep.due + rep.grace for t in known)
            late = len(known) - on_time - in_grace
            parts.append(
                f"<p>Due {esc(rep.due.isoformat())} (grace {esc(str(rep.grace))}): {on_time} on time, "
                f"{in_grace} within the grace period, {late} late, {no_time} without a time.</p>"
            )
        elif no_time:
            parts.append(f"<p>{no_time} submission(s) without a time.</p>")
    parts += _similarity_section(rep)
    return parts


def render(reports: list[AssignmentReport], generated: str = "") -> str:
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
        "<meta name='referrer' content='no-referrer'>",
        f"<title>Class report</title><style>{STYLE}</style></head><body>",
        "<h1>班级报告 / class report</h1>",
        "<p class='note'>Built from the results saved by <code>grade</code> "
        + (f"({esc(generated)})" if generated else "")
        + ". Numbers are over graded submissions; items.csv holds them all. Discrimination is the "
        "item-rest correlation (see each section). Written scores are the confirmed ones where the "
        "instructor confirmed them, else the static-review suggestion.</p>",
    ]
    if reports:
        parts.append("<ul>")
        parts += [f"<li><a href='#{esc(r.assignment_id)}'>{esc(r.assignment_id)}</a></li>" for r in reports]
        parts.append("</ul>")
    else:
        parts.append("<p>No results in this directory.</p>")
    for rep in reports:
        parts += _assignment_section(rep)
    parts.append("</body></html>\n")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------- CSVs
CSV_HEAD = [
    "assignment_id",
    "level",
    "item",
    "id",
    "points",
    "weight",
    "n",
    "mean",
    "sd",
    "min",
    "median",
    "max",
    "pass_rate",
    "mean_credit",
    "discrimination",
    "met_rate",
]


def _f(x) -> str:
    if x is None:
        return ""
    return f"{round(float(x), 4):g}"


def items_csv(reports: list[AssignmentReport]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEAD)
    for rep in reports:
        aid = csv_cell(rep.assignment_id)
        for st in [rep.total, *rep.items]:
            s = st.summary
            level = "total" if st is rep.total else "item"
            w.writerow(
                [aid, level, "" if level == "total" else csv_cell(st.id), csv_cell(st.id), _f(st.points), ""]
                + [str(s["n"])]
                + [_f(s[k]) for k in ("mean", "sd", "min", "median", "max")]
                + ["", "", _f(st.discrimination), ""]
            )
        for t in rep.tests:
            s = describe(t.credits)
            w.writerow(
                [aid, "test", csv_cell(t.item), csv_cell(t.name), "", _f(t.weight), str(t.n)]
                + [_f(s[k]) for k in ("mean", "sd", "min", "median", "max")]
                + [_f(t.pass_rate), _f(t.mean_credit), _f(t.discrimination), ""]
            )
        for c in rep.criteria:
            w.writerow(
                [aid, "criterion", csv_cell(c.item), csv_cell(c.criterion), _f(c.points), "", str(c.n)]
                + [""] * 5
                + ["", "", "", _f(c.met_rate)]
            )
    return buf.getvalue()


SIMILARITY_HEAD = [
    "assignment_id",
    "kind",
    "item",
    "student_a",
    "student_b",
    "score",
    "cover_a",
    "cover_b",
    "shared",
]


def similarity_csv(reports: list[AssignmentReport]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SIMILARITY_HEAD)
    for rep in reports:
        f = rep.similarity
        if f is None:
            continue
        for p in f.flagged:
            w.writerow(
                [csv_cell(rep.assignment_id), "code", "", csv_cell(p.a.student_id), csv_cell(p.b.student_id)]
                + [_f(p.score), _f(p.cover_a), _f(p.cover_b), str(p.common)]
            )
        for g in f.written:
            for i, a in enumerate(g.members):
                for b in g.members[i + 1 :]:
                    w.writerow(
                        [csv_cell(rep.assignment_id), "written", csv_cell(g.item)]
                        + [csv_cell(a.student_id), csv_cell(b.student_id), _f(g.similarity), "", "", ""]
                    )
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- build
def _rubrics() -> dict[str, dict]:
    """Each lesson's rubric as ``compute`` reads it (title, and the items as written), from the registry."""
    return {
        aid: {"title": found.rubric.title, "items": [it.spec for it in found.rubric.items]}
        for aid, found in lessons().items()
    }


def build(out_dir: Path | str, similarity: bool = True) -> Path:
    """Write ``OUT/report/index.html``, ``items.csv`` and ``similarity.csv``; return the page's path."""
    import matplotlib

    matplotlib.use("Agg")

    out = Path(out_dir).resolve()
    results = [r for _, r in load_results(out)]
    policies = {}
    if (out / "course.yaml").is_file():
        try:
            policies = load_course(out / "course.yaml")
        except CourseError:
            policies = {}
    reports = compute(results, policies, _rubrics())
    for rep in reports:
        if not similarity:
            rep.similarity_note = "Similarity check skipped (report --no-similarity)."
        elif rep.graded:
            rep.similarity = similarity_findings(out, rep)
            if rep.similarity is None:
                rep.similarity_note = "This assignment is not known to this grader: no similarity check."
    folder = out / REPORT_DIR
    stamp = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    atomic_write_text(folder / "items.csv", items_csv(reports))
    atomic_write_text(folder / "similarity.csv", similarity_csv(reports))
    page = folder / "index.html"
    atomic_write_text(page, render(reports, generated=stamp))
    return page
