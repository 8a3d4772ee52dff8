"""The instructor's answer-group review in headless Chromium, on the same server as formgrader.

A small class of lesson 16 (``tests/written_class.py``: three students with the reference Q1 answer in
different spacing, two with its first paragraph, one hostile answer, one empty) is recorded into a
temporary OUT, with one more student whose answers hold every answer vector of issue 10's catalogue, and
``autograder.review.formgrader.start`` serves it (JupyterLab + formgrader + the answer-group extension, exactly
what ``python -m autograder formgrader`` runs). The test opens the answer groups from
their index, checks that the hostile answer is shown as text and runs nothing, confirms the group of three
with a score different from its suggestion, follows a member's link into formgrader and finds the score
and the comment there, and checks that ``python -m autograder export`` puts it into ``grades.csv`` for
the three members only.

Screenshots in ``build/test-artifacts/browser/<test name>/``: ``groups-index.png``, ``groups-q1.png``
(before), ``groups-q1-confirmed.png`` and ``formgrader-member.png``.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from autograder.authoring.demo import first_sentence_answers, reference_answers
from autograder.core.layout import REPO as LAYOUT
from autograder.review import formgrader
from tests.browser.test_hostile_review import ACTIVE_SELECTOR, PAYLOAD
from tests.written_class import ASSIGNMENT, record_written_class

pytestmark = pytest.mark.browser

HOSTILE = (
    '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
    '<a href="javascript:window.pwned=3">点我</a> 阻塞发送造成背压'
)


@pytest.fixture(scope="module")
def group_class(tmp_path_factory, chromium_path, hostile_review_notebook):
    tmp = tmp_path_factory.mktemp("groups")
    source = json.loads(
        (LAYOUT.sources / ASSIGNMENT / "asymmetric_pipeline.ipynb").read_text(encoding="utf-8")
    )
    ref = reference_answers(source)
    part = first_sentence_answers(ref)
    # every answer vector of issue 10's catalogue, each with a payload that writes a file, opens a terminal
    # and records its name (tests/conftest.py, tests/browser/test_hostile_review.py)
    release = json.loads(
        (LAYOUT.releases / ASSIGNMENT / "asymmetric_pipeline.ipynb").read_text(encoding="utf-8")
    )
    hostile = hostile_review_notebook(release, lambda name: PAYLOAD.replace("NAME", name))
    catalogue = next(
        c["source"] for c in hostile["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "q1"
    )
    answers = {
        "g-01": ref,
        "g-02": {k: v.replace("。", "。 ") for k, v in ref.items()},
        "g-03": ref,
        "g-04": part,
        "g-05": part,
        "g-06": {"q1": HOSTILE},
        "g-07": {},
        "g-08": {"q1": catalogue, "q2": catalogue},
    }
    out = tmp / "out"
    results = record_written_class(out, answers, tmp / "submitted")
    server = formgrader.start(out, app="lab", log_path=tmp / "formgrader.log")
    try:
        server.wait_ready(timeout=120)
        yield out, server, results
    finally:
        server.stop()


def test_instructor_confirms_an_answer_group(group_class, page, artifacts, steps, export_grades):
    out, server, results = group_class
    suggestion = results["g-01"].item("q1").suggestion
    score = 1.5 if suggestion != 1.5 else 1.0  # differs from the suggestion: the page must have set it
    attempts: list[str] = []

    def watch(request):
        if "pwned" in request.url or (request.method != "GET" and "/api/" in request.url):
            attempts.append(f"{request.method} {request.url}")

    page.on("request", watch)
    page.on("dialog", lambda d: (attempts.append(f"dialog {d.message}"), d.dismiss()))
    steps("class recorded, formgrader + answer groups ready")

    # pages of the answer groups are computed per request: allow a busy machine 90 s
    response = page.goto(f"{server.base}/autograder/groups?token={server.token}", timeout=90_000)
    assert response.ok
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    row = page.locator("#items tr", has=page.get_by_role("link", name="q1")).filter(has_text=ASSIGNMENT)
    expect(row).to_contain_text("8")  # answers
    page.screenshot(path=str(artifacts / "groups-index.png"))
    row.get_by_role("link", name="q1").click(no_wait_after=True)
    page.wait_for_url(re.compile(rf"/autograder/groups/{ASSIGNMENT}/q1"), timeout=90_000)
    steps("opened the item's groups from the index")

    # the hostile answer is an outlier, shown as text; nothing of it runs or becomes an element
    outlier = page.locator("section.group", has_text="window.pwned = 1")
    expect(outlier.locator(".answer.representative")).to_contain_text("<script>window.pwned = 1</script>")
    expect(page.locator("section.group", has_text="click-me").first).to_be_visible()  # the catalogue
    page.wait_for_timeout(1_500)  # onerror/onload handlers and refreshes would have run by now
    # where submission text is shown (answers, evidence, member lists) no element came from it
    shown = "section.group :is(.answer, .evidence, .members)"
    assert page.locator(f"{shown} :is({ACTIVE_SELECTOR}, img, a[href^='javascript'])").count() == 0
    assert page.locator("script, iframe, object, embed, meta[http-equiv], base").count() == 0
    assert page.locator("form").count() == page.locator("section.group").count()  # only the confirm forms
    assert page.evaluate("() => window.pwned === undefined && window.__pwned === undefined")
    assert attempts == [] and not list(out.rglob("*pwned*"))

    group = page.locator('section.group[data-size="3"]')
    expect(group.locator(".suggestion")).to_have_text(f"{suggestion:g}")
    expect(group.locator(".confirmed")).to_have_text("0")
    group.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "groups-q1.png"))

    group.locator('input[name="score"]').fill(f"{score:g}")
    group.locator('textarea[name="comment"]').fill("两种停顿都讲清楚了")
    with page.expect_navigation(timeout=90_000):
        group.get_by_role("button", name=re.compile("Confirm 3")).click()
    expect(page.locator("#notice")).to_contain_text(f"Confirmed {score:g} for 3 answer(s) (Group ")
    key = group.get_attribute("data-key")
    assert key and key not in page.locator("#notice").inner_text()  # the page's number, not a hash
    group = page.locator('section.group[data-size="3"]')
    expect(group.locator(".confirmed")).to_have_text("3")
    expect(group).to_have_class(re.compile(r"\bdone\b"))
    group.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "groups-q1-confirmed.png"))
    steps("group confirmed")

    # a member's own page in formgrader shows the score and the comment
    group.locator("summary").click()
    group.get_by_role("link", name="g-02").click()
    page.wait_for_url(re.compile(r"/formgrader/submissions/[0-9a-f]+/?"))
    expect(page.locator("#q1")).to_have_value(f"{score:g}", timeout=30_000)
    expect(page.locator("#q1")).not_to_have_class(re.compile(r"\bneeds_manual_grade\b"))
    expect(page.locator("#q1-comment")).to_have_value(
        re.compile("confirmed with answer group .*两种停顿都讲清楚了", re.S)
    )
    page.locator("#q1").evaluate("e => e.closest('.nbgrader_cell').scrollIntoView({block: 'start'})")
    page.screenshot(path=str(artifacts / "formgrader-member.png"))
    steps("formgrader shows the member's score")

    rows = {student: row for (student, _), row in export_grades(out).items()}
    assert [float(rows[s]["q1"]) for s in ("g-01", "g-02", "g-03")] == [score] * 3
    assert float(rows["g-04"]["q1"]) == results["g-04"].item("q1").suggestion  # other groups untouched
    assert all(rows[s]["provisional"] == "true" for s in rows)  # q2, q3 still wait
    steps("export")
