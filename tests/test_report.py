"""The class report (autograder/review/report.py): its numbers against hand-computed ones, its page inert, and
``grade`` writing it and printing its path on a class graded for real."""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring.demo import reference_code, with_answers, with_code
from autograder.core.layout import REPO as LAYOUT
from autograder.review.report import build
from autograder.review.report_data import pearson
from autograder.review.similarity import THRESHOLD
from autograder.sandbox.isolation import resolve_isolation
from tests.report_class import ASSIGNMENT, FIXTURES, HOSTILE, M1, NOTEBOOK, hand_class


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _row(rows, level, ident):
    (row,) = [r for r in rows if r["level"] == level and r["id"] == ident]
    return row


def test_pearson_by_hand():
    # x = [1, 1, 0, 0], y = [2.5, 1, 0.5, 1]: sxy = 1, sxx = 1, syy = 2.25, r = 1 / 1.5
    assert pearson([1, 1, 0, 0], [2.5, 1, 0.5, 1]) == pytest.approx(2 / 3)
    assert pearson([1, 1, 1], [1, 2, 3]) is None  # no variation: undefined, not 0
    assert pearson([0, 1], [0, 1]) is None  # fewer than 3


def test_numbers_equal_hand_computed(tmp_path):
    """The five-student class of tests/report_class.py, every number worked out by hand below."""
    hand_class(tmp_path)
    page = build(tmp_path)
    assert page == tmp_path / "report" / "index.html"
    rows = _rows(tmp_path / "report" / "items.csv")
    assert {r["assignment_id"] for r in rows} == {ASSIGNMENT}

    # totals s1..s4 = 4, 2.5, 0.5, 1 (s5 not graded, left out): mean 2, median (1 + 2.5) / 2 = 1.75,
    # population sd = sqrt((2² + 0.5² + 1.5² + 1²) / 4) = sqrt(1.875)
    total = _row(rows, "total", "total")
    assert total["n"] == "4"
    assert float(total["mean"]) == 2 and float(total["median"]) == 1.75
    assert float(total["sd"]) == pytest.approx(math.sqrt(1.875), abs=1e-4)
    assert (float(total["min"]), float(total["max"]), float(total["points"])) == (0.5, 4, 4)

    # simulator = 2, 1.5, 0.5, 0: mean 1, sd sqrt((1 + .25 + .25 + 1) / 4) = sqrt(0.625)
    sim = _row(rows, "item", "simulator")
    assert float(sim["mean"]) == 1 and float(sim["median"]) == 1
    assert float(sim["sd"]) == pytest.approx(math.sqrt(0.625), abs=1e-4)
    # item-rest: simulator against the rest (q1 = 2, 1, 0, 1): deviations (1, .5, -.5, -1) and
    # (1, 0, -1, 0): sxy = 1.5, sxx = 2.5, syy = 2 -> r = 1.5 / sqrt(5); q1 against simulator, the same
    assert float(sim["discrimination"]) == pytest.approx(1.5 / math.sqrt(5), abs=1e-4)
    assert float(_row(rows, "item", "q1")["discrimination"]) == pytest.approx(1.5 / math.sqrt(5), abs=1e-4)

    # test_core passed by s1, s2: pass rate 0.5. Its contribution is 2 * 3/4 = 1.5 points, so the rest is
    # (4 - 1.5, 2.5 - 1.5, 0.5, 1) = (2.5, 1, 0.5, 1) against credits (1, 1, 0, 0): r = 2/3 (worked out in
    # test_pearson_by_hand)
    core = _row(rows, "test", "test_core")
    assert (core["pass_rate"], core["mean_credit"], core["weight"], core["n"]) == ("0.5", "0.5", "3", "4")
    assert float(core["discrimination"]) == pytest.approx(2 / 3, abs=1e-4)
    # test_edge passed by s1, s3; contribution 0.5: rest (3.5, 2.5, 0, 1) against (1, 0, 1, 0):
    # deviations (.5, -.5, .5, -.5) and (1.75, .75, -1.75, -.75): sxy = 0 -> r = 0
    edge = _row(rows, "test", "test_edge")
    assert edge["pass_rate"] == "0.5" and float(edge["discrimination"]) == pytest.approx(0, abs=1e-9)

    # criteria: backpressure met by s1, s2, s4 (3/4); upstream_starvation by s1 (1/4); points from the rubric
    bp, up = _row(rows, "criterion", "backpressure"), _row(rows, "criterion", "upstream_starvation")
    assert (bp["met_rate"], bp["n"], bp["points"], bp["item"]) == ("0.75", "4", "1", "q1")
    assert up["met_rate"] == "0.25"

    html = page.read_text(encoding="utf-8")
    # failure messages, most common first: M1 twice (test_core), then M2 and M2b once each (test_edge)
    failures = re.search(r"most common failure messages</h3>(.*?)</table>", html, re.S).group(1)
    cells = re.findall(
        r"<tr><td class='num'>(\d+)</td><td>simulator</td><td>(\w+)</td><td>(.*?)</td></tr>", failures
    )
    assert [(int(n), t) for n, t, _ in cells] == [(2, "test_core"), (1, "test_edge"), (1, "test_edge")]
    assert [m for _, _, m in cells][1:] == ["M2", "M2b"]
    assert "4 failed test runs in all" in failures
    # submission times against the due date 2026-12-07 23:59 UTC + 15 min grace
    assert "1 on time, 1 within the grace period, 1 late, 2 without a time" in html
    assert "4 graded submission(s), 1 pass; 1 could not be graded" in html  # pass line 3: s1 only
    for figure in ("scores", "pass-rate", "discrimination", "criteria", "times"):
        assert re.search(rf"<figure class='fig' data-figure='{figure}'><svg", html), figure


def test_report_command(tmp_path, capsys):
    from autograder.cli.main import main

    assert main(["report", "--out", str(tmp_path)]) == 2  # nothing graded there
    assert "has no graded results" in capsys.readouterr().err
    hand_class(tmp_path)
    assert main(["report", "--out", str(tmp_path), "--no-similarity"]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path.resolve() / "report" / "index.html")
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert "Similarity check skipped (report --no-similarity)" in html


def test_empty_and_unknown_assignments(tmp_path):
    """No results: a page that says so. An assignment this grader does not know: its numbers, no
    similarity check (there is no release to exclude)."""
    (tmp_path / "results").mkdir()
    assert "No results in this directory" in build(tmp_path).read_text(encoding="utf-8")
    for r in hand_class(tmp_path):
        r.assignment_id = "99-retired"
        r.save(tmp_path / "results" / r.student_id / "99-retired.json")
    html = build(tmp_path).read_text(encoding="utf-8")
    assert "not known to this grader: no similarity check" in html
    assert {r["assignment_id"] for r in _rows(tmp_path / "report" / "items.csv")} == {
        "99-retired",
        ASSIGNMENT,
    }


def test_page_is_inert(tmp_path):
    """Student text (a failure message quoting it, code in the side-by-side view) is escaped; the page has
    no script and a CSP that would refuse one."""
    hand_class(tmp_path, code=True)
    html = build(tmp_path).read_text(encoding="utf-8")
    assert "<script" not in html.lower() and "onerror=" not in html.replace("onerror=&quot;", "")
    assert "<img" not in html
    assert "&lt;/pre&gt;&lt;script&gt;window.pwned=1&lt;/script&gt;" in html
    assert "\u202e" not in html and "\\u202eevil" in html  # bidi override shown, not applied
    assert "default-src 'none'" in html
    assert M1 not in html  # (raw, unescaped)


def test_similarity_section_of_hand_class(tmp_path):
    """s2 is the renamed, reordered, reformatted copy of s1 (with a hostile comment on top): the only pair
    at or above the threshold, shown side by side; s3 and s4 (independent solutions) are not listed."""
    hand_class(tmp_path, code=True)
    build(tmp_path)
    sim = _rows(tmp_path / "report" / "similarity.csv")
    code = [r for r in sim if r["kind"] == "code"]
    assert [(r["student_a"], r["student_b"]) for r in code] == [("s1", "s2")]
    assert float(code[0]["score"]) >= THRESHOLD
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert html.count("<details class='pair'>") == 1
    assert "<summary>#1 s1 ↔ s2" in html


# ------------------------------------------------------------------------------- a class graded for real


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Lesson 16, six students, graded by ``python -m autograder grade``: the reference, the catalogue's
    closed form and its hand-renamed copy, the two independent solutions written for the similarity test,
    the release stub; two students hand in the same written answers."""
    tmp = tmp_path_factory.mktemp("report-class")
    release = json.loads((LAYOUT.releases / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    source = json.loads((LAYOUT.sources / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    from autograder.authoring.demo import reference_answers

    answers = reference_answers(source)
    codes = {
        "ref": reference_code(LAYOUT.data_dir(ASSIGNMENT)),
        "closed": (LAYOUT.data_dir(ASSIGNMENT) / "mistakes" / "closed_form.py").read_text(encoding="utf-8"),
        "copy": (FIXTURES / "16_closed_form_renamed.py").read_text(encoding="utf-8"),
        "events": (FIXTURES / "16_event_queue.py").read_text(encoding="utf-8"),
        "table": (FIXTURES / "16_table_bisection.py").read_text(encoding="utf-8"),
        "stub": None,
    }
    own = {
        "ref": {k: f"参考答案的另一种写法（{k}）：上游阻塞，因为下游没有空出缓冲区。" for k in answers},
        "closed": answers,
        "copy": answers,  # the same written answers as "closed"
        "events": {k: f"我的回答（{k}）：阻塞发送导致等待。" for k in answers},
        "table": {},
        "stub": {},
    }
    subs = tmp / "submitted"
    for sid, code in codes.items():
        nb = with_answers(release if code is None else with_code(release, code), own[sid])
        path = subs / sid / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    out = tmp / "out"
    flag = "bwrap" if resolve_isolation("auto")[0] == "bwrap" else "none"
    cmd = [sys.executable, "-m", "autograder", "grade", str(subs), "--out", str(out), "--isolation", flag]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


def test_grade_prints_the_report_path(graded):
    out, stdout = graded
    (line,) = [ln for ln in stdout.splitlines() if ln.startswith("class report: ")]
    assert Path(line.removeprefix("class report: ")) == (out / "report" / "index.html").resolve()
    assert (out / "report" / "items.csv").is_file()


def test_report_never_changes_a_grade(graded):
    """Building the report again leaves every result, grades.csv, the gradebook and the feedback as they were."""
    import hashlib

    out, _ = graded

    def digest() -> dict[str, str]:
        return {
            str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out.rglob("*"))
            if p.is_file() and "report" not in p.relative_to(out).parts
        }

    before = digest()
    assert any(k.startswith("results/") for k in before) and "gradebook.db" in before
    build(out)
    assert digest() == before


def test_graded_class_numbers_match_grades_csv(graded):
    """The report's means are those of grades.csv (the same results, read back)."""
    out, _ = graded
    grades = _rows(out / "grades.csv")
    rows = _rows(out / "report" / "items.csv")
    for item in ("simulator", "solver", "q1", "q2", "q3"):
        scores = [float(g[item]) for g in grades]
        assert float(_row(rows, "item", item)["mean"]) == pytest.approx(sum(scores) / len(scores), abs=1e-4)
    totals = [float(g["total"]) for g in grades]
    assert float(_row(rows, "total", "total")["mean"]) == pytest.approx(sum(totals) / len(totals), abs=1e-4)


def test_renamed_copy_is_the_top_pair_and_independent_solutions_are_not_listed(graded):
    out, _ = graded
    sim = _rows(out / "report" / "similarity.csv")
    code = [r for r in sim if r["kind"] == "code"]
    assert [(r["student_a"], r["student_b"]) for r in code] == [("closed", "copy")]
    assert float(code[0]["score"]) >= THRESHOLD
    # the written answers handed in twice form a group for each written item; nobody else
    written = {(r["item"], r["student_a"], r["student_b"]) for r in sim if r["kind"] == "written"}
    assert written == {(q, "closed", "copy") for q in ("q1", "q2", "q3")}
    html = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert "<summary>#1 closed ↔ copy" in html and "not</b> evidence of copying" in html
    assert HOSTILE not in html
