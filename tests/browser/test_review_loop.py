"""The review loop in formgrader (issue 25), in headless Chromium with the network cut (every request
beyond the review server is aborted and counted): on the small graded class (fixture ``graded_class``),
formgrader's home page shows no exchange warning (this server has no exchange) and hides what a
review-only server refuses (Edit, Generate, "Add new assignment..."); the notebook's submission list marks
the totals that hold extra credit; in the student's submission the
formulas are typeset by the server's own MathJax, Q2's score box offers the suggestion, marked, with a
one-click accept that formgrader saves as the instructor's manual score; the Generate Feedback button
then writes the student's page in nbgrader's layout with that confirmed score.

Screenshots in ``build/test-artifacts/browser/<test name>/``: ``home.png``, ``submissions.png`` (extra
credit marked on the totals), ``suggestion.png``
(the offered suggestion), ``feedback-generated.png`` (formgrader's success dialog).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

ASSIGNMENT, NOTEBOOK = "16-asymmetric-pipeline", "asymmetric_pipeline"


def test_accept_the_suggestion_then_generate_feedback(graded_class, page, artifacts, steps):
    out, student, server = graded_class.out, graded_class.student, graded_class.server
    q2 = graded_class.results[student].item("q2")
    assert q2.confirmed is None and q2.suggestion is not None
    offline: list[str] = []

    def cut(route):
        if route.request.url.startswith(server.base + "/"):
            route.continue_()
        else:
            offline.append(route.request.url)
            route.abort("internetdisconnected")

    page.route("**/*", cut)
    page.goto(server.url)  # formgrader's home: Manage Assignments
    row = page.locator("tr", has=page.get_by_role("link", name=ASSIGNMENT, exact=True))
    expect(row.locator("td.generate-feedback a")).to_be_visible(timeout=30_000)
    expect(page.locator("#warning-exchange")).to_have_count(0)
    expect(page.get_by_role("columnheader", name="Edit", exact=True)).to_be_hidden()
    expect(row.locator("td.edit")).to_be_hidden()
    expect(page.get_by_text("Add new assignment...", exact=True)).to_be_hidden()
    expect(page.get_by_role("columnheader", name="Generate Feedback")).to_be_visible()
    page.screenshot(path=str(artifacts / "home.png"))
    page.get_by_role("link", name="Manage Students").first.click()
    expect(page.locator("#main-table td.score").first).to_be_attached(timeout=30_000)
    expect(page.get_by_text("Add new student...", exact=True)).to_be_hidden()
    expect(page.get_by_role("columnheader", name="Edit Student")).to_be_hidden()
    steps("home page and students: review-only")

    page.get_by_role("link", name="Manual Grading").first.click()
    page.get_by_role("link", name=ASSIGNMENT).click()
    page.get_by_role("link", name=NOTEBOOK).click()
    page.get_by_role("link", name="Submission #1").wait_for()  # the table is filled by the page's script
    page.get_by_role("button", name="Show All Names").click()
    # a total holding extra credit says so (nbgrader adds it to the score and the code score)
    with_extra = {r.student_id: r.extra_credit for r in graded_class.results.values() if r.extra_credit}
    assert with_extra, "the reference earns the challenge's extra credit"
    for sid, extra in with_extra.items():
        srow = page.locator("#main-table tr", has=page.get_by_text(sid, exact=True))
        expect(srow.locator("td.code-score .extra-credit-note")).to_have_text(
            f"含附加分 / incl. extra credit +{extra:g}"
        )
    page.screenshot(path=str(artifacts / "submissions.png"))
    page.get_by_role("link", name=student, exact=True).click()
    page.wait_for_url(re.compile(r"/formgrader/submissions/[0-9a-f]+/?"))
    page.wait_for_function(
        "() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
        " && document.querySelectorAll('#notebook-container .MathJax').length > 0",
        timeout=60_000,
    )
    box = page.locator("#q2")
    accept = box.locator("xpath=..").locator("button.accept-suggestion")
    expect(accept).to_have_text(f"采纳建议 / accept {q2.suggestion:g}", timeout=30_000)
    expect(box).to_have_value("")  # offered, not filled in: nothing is confirmed yet
    expect(box).to_have_attribute("placeholder", f"{q2.suggestion:g}")
    expect(box).to_have_class(re.compile(r"\bsuggested\b"))
    box.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "suggestion.png"))
    with page.expect_response(
        lambda r: "/formgrader/api/grade/" in r.url and r.request.method == "PUT"
    ) as saved:
        accept.click()
    assert saved.value.ok and saved.value.json()["manual_score"] == q2.suggestion
    assert not saved.value.json()["needs_manual_grade"]  # confirmed, as the instructor's manual score
    expect(accept).to_have_count(0)
    expect(box).to_have_value(f"{q2.suggestion:g}")
    steps("suggestion accepted")

    page.goto(f"{server.base}/formgrader/manage_assignments")
    with page.expect_response(lambda r: r.url.endswith("/generate_feedback")) as generated:
        row.locator("td.generate-feedback a").click()
    assert generated.value.ok
    dialog = page.locator("#success-modal")
    expect(dialog).to_contain_text(f"Successfully generated feedback of '{ASSIGNMENT}'", timeout=60_000)
    expect(dialog).to_contain_text("feedback pages written")
    page.screenshot(path=str(artifacts / "feedback-generated.png"))
    feedback = (out / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")
    assert f"教师确认 / confirmed: <b>{q2.suggestion:g}</b>" in feedback
    assert offline == [], offline
    steps("feedback generated")
