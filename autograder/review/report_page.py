"""The class report's page (``OUT/report/index.html``, :mod:`autograder.review.report` writes it): opened
from disk (no server, no network, no script: every figure is inline SVG drawn by matplotlib, every text from
a submission escaped, a Content-Security-Policy that allows no script, fetch, form or frame). Per
assignment: score distribution per item and of the total; pass rate per hidden test (its difficulty);
discrimination per test and per item; met rate per criterion of each written item; the most common failure
messages with counts; submission times against the due date; similar submissions, side by side.
"""

from __future__ import annotations

import io
import math

from autograder.core import numbers
from autograder.core.safe_text import html_text as esc
from autograder.review.groups import shown
from autograder.review.report_data import WRITTEN_SIMILARITY, AssignmentReport
from autograder.review.similarity import MIN_FINGERPRINTS, THRESHOLD

#: code pairs shown on the page (all of them are in similarity.csv)
MAX_PAIRS = 20
#: CSP of the page: styles of its own, inline SVG; no script, fetch, image, font, form, frame or base
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

__all__ = ["render"]


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
        ax.set_title(f"{st.id} ({st.kind}, {numbers.score(st.points)} pts{extra})", fontsize=9)
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
        return numbers.MISSING
    return f"{x:.{digits}f}"  # statistics (means, correlations), not scores: fixed decimals


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
        f"{_num(rep.total.summary['median'])} of {numbers.score(rep.max_total)}.</p>"
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
            f"<tr><td>{esc(st.id)}</td><td>{esc(kind)}</td><td class='num'>{numbers.score(st.points)}</td>"
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
                f"<tr><td>{esc(t.item)}</td><td>{esc(t.name)}{edge}</td><td class='num'>{numbers.score(t.weight)}</td>"
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
            pts = numbers.score(c.points)
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
