"""The class report opened from disk in Chromium: every figure drawn, the side-by-side view opens without
any script, and nothing a student wrote runs."""

from __future__ import annotations

import pytest

from autograder.review.report import build
from tests.report_class import hand_class

pytestmark = pytest.mark.browser

FIGURES = ("scores", "pass-rate", "discrimination", "criteria", "times")


def test_report_opens_from_disk_with_its_figures_and_stays_inert(page, artifacts, tmp_path):
    hand_class(tmp_path, code=True)
    index = build(tmp_path)
    errors, requests = [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("request", lambda req: requests.append(req.url))
    page.goto(index.as_uri())
    page.screenshot(path=str(artifacts / "report-top.png"))

    for name in FIGURES:
        svg = page.locator(f"figure[data-figure='{name}'] svg")
        assert svg.count() == 1, name
        svg.scroll_into_view_if_needed()
        box = svg.bounding_box()
        assert box and box["width"] > 200 and box["height"] > 80, (name, box)
        # drawn, not an empty frame: matplotlib's bars and glyphs are paths (and <use> of glyph paths)
        assert svg.locator("path").count() > 10, name
    page.locator("figure[data-figure='discrimination']").screenshot(
        path=str(artifacts / "discrimination.png")
    )

    pair = page.locator("details.pair")
    assert pair.count() == 1
    code = pair.locator(".sbs pre")
    assert not code.first.is_visible()  # closed until the instructor opens it
    pair.locator("summary").click()  # <details> opens without any script
    assert code.count() == 2 and code.nth(0).is_visible() and code.nth(1).is_visible()
    left, right = code.nth(0).bounding_box(), code.nth(1).bounding_box()
    assert left["x"] + left["width"] <= right["x"] + 1  # side by side
    assert pair.locator(".hit").count() > 5  # the shared lines are marked
    pair.screenshot(path=str(artifacts / "side-by-side.png"))

    # the student's comment is shown as text; none of it ran, nothing was fetched
    assert "<script>window.pwned=1</script>" in code.nth(1).inner_text()
    assert page.evaluate("window.pwned") is None
    assert page.locator("script").count() == 0 and page.locator("img").count() == 0
    assert "\\u202eevil" in page.locator("body").inner_text()
    assert errors == []
    assert requests == [index.as_uri()]
