"""Per-student feedback pages. They show test names and messages, never hidden inputs or test code.

Every text on the page goes through :func:`autograder.core.safe_text.html_text` (escaped, always encodable);
the page has no script and a Content-Security-Policy that forbids any (``default-src 'none'``).

After review the page also carries the instructor's comments (``notes``: item id ->
:class:`autograder.classroom.review_feedback.Note`, read from the gradebook) next to the suggestion they replaced.
:func:`write` puts it in nbgrader's feedback layout (see :mod:`autograder.classroom.review_feedback`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from autograder.core import numbers
from autograder.core.files import atomic_write_text
from autograder.core.results import EXECUTED, SubmissionResult
from autograder.core.safe_text import html_text as escape
from autograder.gradebook import coursedir

STYLE = """
body{font-family:system-ui,"Noto Sans CJK SC",sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem} h2{font-size:1.1rem;margin-top:1.6rem}
.tag{display:inline-block;padding:.05rem .45rem;border-radius:.3rem;font-size:.8rem;margin-left:.4rem}
.executed{background:#e3f2e1;color:#1b5e20}.static{background:#fff3cd;color:#7a5b00}
.extra{background:#e3ecfa;color:#0d3c8a}
.pass{color:#1b5e20}.fail{color:#b71c1c} table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.3rem .4rem;text-align:left;vertical-align:top}
blockquote{margin:.3rem 0;padding:.2rem .6rem;border-left:3px solid #bbb;color:#444;background:#fafafa}
.note{color:#555;font-size:.9rem}
.comment{margin:.4rem 0;padding:.4rem .7rem;border-left:3px solid #0d3c8a;background:#eef3fb;white-space:pre-wrap}
"""


#: no script, no remote fetch, no form, no frame: the page is text and its own style sheet
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def render(result: SubmissionResult, notes: dict | None = None) -> str:
    r, notes = result, notes or {}
    verdict = "通过 / passed" if r.passed else "未通过 / not passed"
    parts = [
        "<!doctype html><html lang='zh'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
        f"<title>{escape(r.assignment_id)} — {escape(r.student_id)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(r.assignment_id)} · {escape(r.student_id)}</h1>",
        f"<p><b>{numbers.score(r.final_total)} / {numbers.score(r.max_total)}</b>（及格线 {numbers.score(r.pass_line)}）— {verdict}",
        (
            f"<br><span class='note'>含附加分 / includes extra credit {numbers.score(r.extra_credit)} / "
            f"{numbers.score(r.max_extra_credit)}：附加分计入总分与及格判断，满分不变 / extra credit counts towards the "
            "total and the pass line; the maximum stays the same</span>"
        )
        if r.max_extra_credit
        else "",
        " · <i>暂定 / provisional：问答题仍待教师确认</i>" if r.provisional else "",
        "</p>",
        (
            f"<p>迟交规则 / late policy: {escape(r.late_note)}<br>原始总分 / raw total {numbers.score(r.total)} − "
            f"扣分 / penalty {numbers.score(r.late_penalty)} = <b>最终 / final {numbers.score(r.final_total)}</b></p>"
        )
        if r.late_note
        else "",
        f"<p class='note'>状态 / status: {escape(r.status)}<br>隔离方式 / isolation: {escape(r.isolation)}</p>",
    ]
    if r.messages:
        parts.append("<h2>提示 / notes</h2><ul>")
        parts += [f"<li>{escape(m)}</li>" for m in r.messages]
        parts.append("</ul>")
    for it in r.items:
        label = "executed" if it.mode == EXECUTED else "static"
        mode = "已运行 / executed" if it.mode == EXECUTED else "静态审查 / static review"
        bonus = "<span class='tag extra'>附加分 / extra credit</span>" if it.extra_credit else ""
        parts.append(
            f"<h2>{escape(it.id)} — {numbers.score(it.score)} / {numbers.score(it.points)}"
            f"<span class='tag {label}'>{mode}</span>{bonus}</h2>"
        )
        if it.description:
            parts.append(f"<p class='note'>{escape(it.description)}</p>")
        if it.kind == "code" and it.extra_credit and unattempted(it):
            parts.append(f"<p>{UNATTEMPTED}</p>")  # one line, not a row of ✘ per hidden test
        elif it.kind == "code":
            parts.append("<table><tr><th>测试 / test</th><th>结果</th><th>说明 / message</th></tr>")
            for t in it.tests:
                ok = "<span class='pass'>✔</span>" if t.passed else "<span class='fail'>✘</span>"
                if not t.passed and t.credit > 0:  # credit per part of the contract
                    got = "、".join(escape(p["name"]) for p in t.parts if p["passed"])
                    ok = f"<span class='pass'>◐ {t.credit:.0%}</span><br><span class='note'>✔ {got}</span>"
                kind = "（边界/校验）" if t.edge else ""
                parts.append(
                    f"<tr><td>{escape(t.name)}{kind}</td><td>{ok}</td><td>{escape(t.message)}</td></tr>"
                )
            parts.append("</table>")
            if not it.tests and it.message:
                parts.append(f"<p>{escape(it.message)}</p>")
            if it.id in notes:
                parts.append(_comment(notes[it.id]))
        else:
            if it.confirmed is not None:
                parts.append(
                    f"<p>教师确认 / confirmed: <b>{numbers.score(it.confirmed)}</b>"
                    f"（建议 / suggested {numbers.score(it.suggestion or 0)}）</p>"
                )
            else:
                parts.append(
                    f"<p>建议得分 / suggested: <b>{numbers.score(it.suggestion or 0)}</b>（待教师确认）</p>"
                )
            # a written item's comment counts once its score is confirmed (an answer changed since the
            # review reopens it: the old comment was about the old answer)
            if it.id in notes and it.confirmed is not None:
                parts.append(_comment(notes[it.id]))
            if it.evidence and it.confirmed is not None:
                parts.append("<p class='note'>建议分数的依据 / what the suggested score was based on:</p>")
            for ev in it.evidence:
                mark = "✔" if ev.get("met") else "✘"
                parts.append(
                    f"<p>{mark} <b>{escape(str(ev.get('criterion', '')))}</b> "
                    f"<span class='note'>{escape(str(ev.get('note', '')))}</span></p>"
                )
                if ev.get("quote"):
                    parts.append(f"<blockquote>{escape(str(ev['quote']))}</blockquote>")
    parts.append("</body></html>\n")
    return "".join(parts)


def _comment(note) -> str:
    who = "答案组确认 / answer-group review" if note.by_group else "教师评语 / instructor's comment"
    return f"<p class='note'>{who}:</p><div class='comment'>{escape(note.comment)}</div>"


UNATTEMPTED = "挑战题未作答：不扣分 / challenge not attempted: no points lost"


def unattempted(item) -> bool:
    """A code item left as the release's stub: nothing earned, and most of its tests stopped at the
    stub's NotImplementedError (the others, e.g. "rejects invalid input", fail because of it)."""
    tests = item.tests
    stopped = sum("NotImplementedError" in t.message for t in tests)
    return (
        bool(tests)
        and item.score == 0
        and not any(t.passed or t.credit > 0 for t in tests)
        and (2 * stopped > len(tests))
    )


def paths(out_dir: Path | str, result: SubmissionResult) -> tuple[Path | None, Path]:
    """(nbgrader's ``feedback/<student>/<assignment>/<notebook>.html`` or None for a result without a
    notebook name, the earlier ``feedback/<student>/<assignment>.html``)."""
    base = Path(out_dir) / "feedback" / result.student_id
    notebook = Path(result.notebook or "").name.removesuffix(".ipynb")
    layout = base / result.assignment_id / f"{notebook}.html" if notebook else None
    return layout, base / f"{result.assignment_id}.html"


def write(out_dir: Path, result: SubmissionResult, durable: bool = True, notes: dict | None = None) -> Path:
    """Write the page at both :func:`paths` (with nbgrader's sidecar files next to the first) and return
    the one in nbgrader's layout (the earlier path when there is none)."""
    page = render(result, notes)
    layout, legacy = paths(out_dir, result)
    if layout is not None:
        atomic_write_text(layout, page, durable)
        write_sidecars(out_dir, result, layout.parent, durable)
    atomic_write_text(legacy, page, durable)
    return layout or legacy


#: nbgrader's own secrets are ``secrets.token_hex(64)``; anything else in a submission's file (it is
#: student data) is not used
_SECRET_CHARS = frozenset("0123456789abcdefABCDEF")
_SECRET_MAX = 1024


def _read_secret(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_SECRET_MAX + 1)
    except OSError:
        return None
    text = raw.decode("ascii", "replace")
    core = text.rstrip("\r\n")  # kept as written: nbgrader hashes the file's exact content
    if not 16 <= len(core) <= _SECRET_MAX or not set(core) <= _SECRET_CHARS:
        return None
    return text


def write_sidecars(out_dir: Path | str, result: SubmissionResult, folder: Path, durable: bool = True) -> None:
    """``timestamp.txt`` and ``submission_secret.txt`` in a page's folder, as nbgrader's generate_feedback
    copies them from the autograded submission: release_feedback opens both for every page."""
    submitted = Path(out_dir) / coursedir.SUBMITTED / result.student_id / result.assignment_id
    secret = _read_secret(submitted / "submission_secret.txt")
    if secret is None:
        # no exchange submission: a name only the submitted bytes determine (a sharded run and its merge
        # name a page alike; nobody without the notebook can guess it). A row without readable bytes
        # (its page says only why it could not be graded) is named by its ids and status
        basis = result.submission_sha256 or f"ungraded\0{result.status}"
        key = f"autograder-feedback\0{result.student_id}\0{result.assignment_id}\0{basis}"
        secret = hashlib.sha512(key.encode()).hexdigest()
    try:
        stamp = (submitted / "timestamp.txt").read_text(encoding="utf-8", errors="replace")[:64].strip()
    except OSError:
        stamp = result.submitted_at
    stamp = "".join(ch for ch in stamp if ch.isprintable())  # student data: release_feedback logs it
    for name, text in (("submission_secret.txt", secret), ("timestamp.txt", stamp)):
        target = folder / name
        try:
            if target.read_text(encoding="utf-8") == text:
                continue
        except OSError:
            pass
        atomic_write_text(target, text, durable)
