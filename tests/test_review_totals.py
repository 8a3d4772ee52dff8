"""Scores tell one story (issue 25): on the demo class (``python -m autograder demo``), every total formgrader
shows equals grades.csv's, provisional suggestions included, and stays equal after the instructor confirms
a different score; the suggestion is the score box's placeholder (nbgrader's auto score), the
confirmation the instructor's manual score."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.review import formgrader

REPO = Path(__file__).resolve().parents[1]


def grades(out: Path) -> dict[tuple[str, str], dict]:
    with open(out / "grades.csv", encoding="utf-8", newline="") as fh:
        return {(r["assignment_id"], r["student_id"]): r for r in csv.DictReader(fh)}


def formgrader_totals(server, assignments) -> dict[tuple[str, str], tuple[float, float]]:
    found = {}
    for assignment in assignments:
        status, subs = server.request("GET", f"/formgrader/api/submissions/{assignment}", timeout=60)
        assert status == 200, subs
        for s in subs:
            if s["autograded"]:
                found[(assignment, s["student"])] = (s["score"], s["max_score"])
    return found


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("demo-totals")
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "demo", "--out", str(tmp)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = tmp / "grading"
    server = formgrader.start(out, log_path=tmp / "server.log")
    try:
        server.wait_ready(timeout=120)
        yield out, server
    finally:
        server.stop()


def test_formgrader_totals_equal_grades_csv_on_the_demo_class(demo):
    out, server = demo
    rows = grades(out)
    assignments = sorted({a for a, _ in rows})
    shown = formgrader_totals(server, assignments)
    recorded = {k for k, r in rows.items() if (out / "submitted" / k[1] / k[0]).is_dir()}
    assert set(shown) == recorded and len(shown) >= 20, sorted(set(shown) ^ recorded)
    for key, (score, max_score) in shown.items():
        row = rows[key]
        assert score == pytest.approx(float(row["total"])), (key, score, row["total"])
        assert max_score == pytest.approx(float(row["max_total"])), (key, max_score, row["max_total"])
    assert any(rows[k]["provisional"] == "true" for k in shown)  # suggestions are in both totals
    assert any(float(rows[k]["extra_credit"]) > 0 for k in shown)  # and extra credit
    assert any(float(rows[k]["total"]) > float(rows[k]["max_total"]) for k in shown)  # beyond the maximum

    # extra credit, which nbgrader adds to the score and the code score, is told apart on formgrader's
    # submission lists (autograder/review/static/extra_credit.js reads this)
    status, listing = server.request(
        "GET", "/formgrader/gradebook/16-asymmetric-pipeline/asymmetric_pipeline"
    )
    assert status == 200 and "/autograder/static/extra_credit.js" in listing
    status, extra = server.request(
        "GET", "/autograder/extra_credit/16-asymmetric-pipeline/asymmetric_pipeline"
    )
    assert status == 200, extra
    status, subs = server.request(
        "GET", "/formgrader/api/submitted_notebooks/16-asymmetric-pipeline/asymmetric_pipeline"
    )
    by_id = {s["id"]: s["student"] for s in subs}
    expected = {
        k[1]: float(r["extra_credit"])
        for k, r in rows.items()
        if k[0] == "16-asymmetric-pipeline" and k in shown and float(r["extra_credit"]) > 0
    }
    assert {by_id[i]: v for i, v in extra.items()} == pytest.approx(expected) and expected

    # the instructor confirms a score that differs from the suggestion: both totals move together
    from nbgrader.api import Gradebook

    key = next(k for k in sorted(shown) if rows[k]["provisional"] == "true" and k[0].startswith("16"))
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        grade = gb.find_grade("q1", "asymmetric_pipeline", key[0], key[1])
        grade_id, suggestion, points = grade.id, grade.auto_score, grade.max_score
        assert grade.needs_manual_grade and grade.manual_score is None and suggestion is not None
    confirmed = 0.0 if suggestion else points
    status, body = server.request("PUT", f"/formgrader/api/grade/{grade_id}", {"manual_score": confirmed})
    assert status == 200 and body["manual_score"] == confirmed and not body["needs_manual_grade"]
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "export", "--out", str(out), "--quiet"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    after = grades(out)
    assert float(after[key]["q1"]) == confirmed
    assert float(after[key]["total"]) == pytest.approx(float(rows[key]["total"]) - suggestion + confirmed)
    assert formgrader_totals(server, [key[0]])[key][0] == pytest.approx(float(after[key]["total"]))
