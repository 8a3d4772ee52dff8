"""The instructor's path in nbgrader's formgrader (JupyterLab 4) in headless Chromium: with a small class
graded and formgrader started on its OUT (fixture ``graded_class`` in ``conftest.py``: lesson 16's
``reference-notebook`` and one student with partial written answers, graded with ``grade_class``), open
formgrader, go to manual grading of lesson 16 → the notebook → one student's submission, find Q1
waiting for manual grading with the static-review suggestion in its comment box, set a score in the page,
and check that ``python -m autograder export`` puts that score into ``grades.csv``.

Screenshots go to ``build/test-artifacts/browser/<test name>/`` (see ``conftest.py``): ``formgrader-list.png``
(the submissions of the notebook) and ``formgrader-q1.png`` (Q1 with the suggestion and the score set).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ASSIGNMENT, NOTEBOOK = "16-asymmetric-pipeline", "asymmetric_pipeline"
SUGGESTION = "[静态审查 / static review] 建议得分"


def test_instructor_sets_q1_score_in_formgrader(graded_class, page, artifacts, steps, export_grades):
    out, student, results = graded_class.out, graded_class.student, graded_class.results
    server = graded_class.server
    q1 = results[student].item("q1")
    assert q1.mode == "static review" and q1.message.startswith(SUGGESTION), q1.message
    score = 1.5 if q1.suggestion != 1.5 else 0.5  # differs from the suggestion: the page must have set it
    steps("sample class graded, formgrader ready (prepared in the background)")

    page.goto(server.url)  # /formgrader?token=… logs in, then only clicks
    page.get_by_role("link", name="Manual Grading").first.click()
    page.get_by_role("link", name=ASSIGNMENT).click()
    page.get_by_role("link", name=NOTEBOOK).click()
    page.get_by_role("link", name="Submission #1").wait_for()  # the table is filled by the page's script
    page.get_by_role("button", name="Show All Names").click()
    page.screenshot(path=str(artifacts / "formgrader-list.png"))
    page.get_by_role("link", name=student, exact=True).click()
    page.wait_for_url(re.compile(r"/formgrader/submissions/[0-9a-f]+/?"))

    score_box, comment_box = page.locator("#q1"), page.locator("#q1-comment")
    # the page's script fills the boxes from the gradebook after the page has loaded
    expect(comment_box).to_have_value(re.compile("^" + re.escape(SUGGESTION)), timeout=30_000)
    expect(score_box).to_have_class(re.compile(r"\bneeds_manual_grade\b"))
    expect(score_box).to_have_value("")
    steps("navigated to the submission")

    score_box.scroll_into_view_if_needed()
    with page.expect_response(
        lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT"
    ) as saved:
        score_box.click()
        score_box.press_sequentially(f"{score:g}")
        score_box.press("Tab")  # leaving the box saves it
    assert saved.value.ok, f"formgrader did not save the score: HTTP {saved.value.status}"
    assert saved.value.json()["manual_score"] == score
    page.wait_for_function(
        "() => !document.getElementById('q1').classList.contains('needs_manual_grade')", timeout=10_000
    )
    score_box.evaluate("e => e.closest('.nbgrader_cell').scrollIntoView({block: 'start'})")
    page.screenshot(path=str(artifacts / "formgrader-q1.png"))
    steps("score set and saved")

    rows = export_grades(out)
    row = rows[(student, ASSIGNMENT)]
    assert float(row["q1"]) == score, row
    assert row["provisional"] == "true", row  # q2 and q3 still wait for the instructor
    other = rows[(next(s for s in results if s != student), ASSIGNMENT)]
    assert float(other["q1"]) == results[other["student_id"]].item("q1").suggestion  # untouched
    steps("export")
