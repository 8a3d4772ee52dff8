"""Attack 1 of issue 10 in real Chromium against a real formgrader: nothing a submission carries runs in
the instructor's session. The hostile student's notebook holds every vector of
``tests/fixtures/hostile_review/vectors.json`` (the issue's ``<img onerror>`` answer, ``text/html`` and
``application/javascript`` outputs, svg/onload, ``javascript:`` and ``data:`` links, iframe srcdoc,
style/meta refresh/base/link, forms, raw cells, cell metadata, MathJax macros); each payload writes a file
through ``/api/contents``, opens a terminal through ``/api/terminals`` and records itself. The class is
graded with ``grade_class`` and formgrader started with ``autograder.review.formgrader.start`` as the instructor
would; the instructor opens the submission (and clicks every link in it) and the feedback page.

Passes when: no payload ran (no request it would make, no dialog, no record), no file was written in OUT,
the server has no terminal (or any other) child process, no active element or attribute is in the page,
and the page still works (markdown rendered, formulas typeset by MathJax, the grading boxes filled by
formgrader's own scripts under the Content-Security-Policy). MathJax is the one the review server serves
itself (jupyter-server-mathjax's MathJax 2.7 with its Safe extension) and the browser's network is cut
(every request beyond the server is aborted and counted), so the MathJax vectors (``\\href``,
``\\class``/``\\style``, ``\\require``, macros) are typeset offline, not just left as text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
ASSIGNMENT, NOTEBOOK = "16-asymmetric-pipeline", "asymmetric_pipeline"
FORMULA = "$\\frac{p-1}{m+p-1}$"  # in the hostile answer (tests/conftest.py)
#: the vector catalogue (also used by tests/browser/test_group_review.py)
VECTORS = json.loads((REPO / "tests/fixtures/hostile_review/vectors.json").read_text(encoding="utf-8"))[
    "vectors"
]
#: what every vector runs: write a file through the contents API, open a terminal, record its name
PAYLOAD = (
    "(function(v,m,x,h){m=document.cookie.match(/_xsrf=([^;]+)/);x=m?decodeURIComponent(m[1]):'';"
    "h={'Content-Type':'application/json','X-XSRFToken':x};"
    "fetch('/api/contents/pwned-'+v+'.txt',{method:'PUT',headers:h,"
    "body:JSON.stringify({type:'file',format:'text',content:v})});"
    "fetch('/api/terminals',{method:'POST',headers:h,body:'{}'});"
    "(top.__pwned=top.__pwned||[]).push(v)})('NAME')"
)
ACTIVE_SELECTOR = "script, iframe, frame, object, embed, svg, style, link, meta, base, form"


@pytest.fixture()
def hostile_class(tmp_path, hostile_review_notebook):
    """OUT with the hostile student graded, and formgrader running on it (stopped after the test)."""
    from autograder.classroom.batch import grade_class
    from autograder.review import formgrader

    release = json.loads((REPO / "lessons" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    path = tmp_path / "submitted" / "mallory" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(
            hostile_review_notebook(release, lambda name: PAYLOAD.replace("NAME", name)), ensure_ascii=False
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    grade_class(tmp_path / "submitted", out, quiet=True)
    server = formgrader.start(out, app="server", log_path=tmp_path / "formgrader.log")
    try:
        server.wait_ready(timeout=90)
        yield out, server
    finally:
        server.stop()


def children_of(pid: int) -> list[str]:
    """Names of the server's child processes (a terminal is a shell started by the server)."""
    names = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, fields = text[text.index("(") + 1 : text.rindex(")")], text.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid:
            names.append(name)
    return names


def test_hostile_submission_is_inert_in_formgrader(hostile_class, page, artifacts, steps):
    out, server = hostile_class
    steps("hostile class graded, formgrader ready")
    attempts: list[str] = []
    offline: list[str] = []  # the network is cut: only the review server answers
    mathjax: list[str] = []

    def cut(route):
        url = route.request.url
        if url.startswith(server.base + "/"):
            if "/static/jupyter_server_mathjax/" in url:
                mathjax.append(url.split("/static/jupyter_server_mathjax/", 1)[1].split("?")[0])
            route.continue_()
        else:
            offline.append(url)
            route.abort("internetdisconnected")

    page.route("**/*", cut)

    def watch(request):
        url, method = request.url, request.method
        if "pwned" in url or (method != "GET" and "/api/" in url and "/formgrader/api/" not in url):
            attempts.append(f"{method} {url}")

    page.on("request", watch)
    page.on("dialog", lambda d: (attempts.append(f"dialog {d.message}"), d.dismiss()))

    page.goto(server.url)  # log in with the token
    status, notebooks = server.request("GET", f"/formgrader/api/submitted_notebooks/{ASSIGNMENT}/{NOTEBOOK}")
    assert status == 200, notebooks
    submission = next(n["id"] for n in notebooks if n["student"] == "mallory")
    page.goto(f"{server.base}/formgrader/submissions/{submission}/")
    page.wait_for_timeout(3_000)  # onerror/onload handlers, refreshes and their requests have run by now
    # MathJax typesets every formula, the hostile ones included, before anything is judged
    page.wait_for_function(
        "() => window.MathJax && MathJax.Hub && MathJax.Hub.queue.pending === 0"
        " && document.querySelectorAll('#notebook-container .MathJax').length > 0",
        timeout=60_000,
    )
    page.wait_for_timeout(1_000)
    container = page.locator("#notebook-container").first
    if "/formgrader/submissions/" in page.url:
        # the instructor clicks every link in the submission that would run something where it is
        # (ordinary links would only navigate away)
        for link in container.locator("a[href]").all():
            href = (link.get_attribute("href", timeout=2_000) or "").strip().lower()
            if href.startswith(("javascript:", "data:", "vbscript:")):
                link.click(force=True, no_wait_after=True, timeout=2_000)
        page.wait_for_timeout(1_000)
    page.screenshot(path=str(artifacts / "hostile-submission.png"), full_page=False)
    steps("submission opened, links clicked")

    def evidence() -> dict:
        """What a payload that ran leaves behind; empty when nothing ran."""
        found = {
            "requests": attempts,
            "recorded": page.evaluate("() => window.__pwned || []"),
            "files": sorted(p.relative_to(out).as_posix() for p in out.rglob("*pwned*")),
            "server children (terminals, kernels)": children_of(server.proc.pid),
        }
        status, terminals = server.request("GET", "/api/terminals")
        if status != 404:
            found["terminals"] = terminals
        return {k: v for k, v in found.items() if v}

    assert evidence() == {}
    # no redirect: formgrader's own script only records the selected grading box (?index=N) once MathJax
    # has finished
    assert re.search(rf"/formgrader/submissions/{submission}/?(?:\?index=\d+)?$", page.url), page.url
    # formgrader's own scripts still work under the CSP: they fill the comment box from the gradebook
    expect(page.locator("#q1-comment")).not_to_have_value("", timeout=30_000)
    active = container.evaluate(
        """(root, sel) => {
          // MathJax 2 keeps each formula's TeX in an inert <script type="math/tex"> (data, never run)
          const found = [...root.querySelectorAll(sel)]
            .filter(e => !(e.tagName === 'SCRIPT' && e.type.startsWith('math/tex')))
            .map(e => e.tagName);
          for (const e of root.querySelectorAll('*')) {
            for (const a of e.attributes) {
              const v = a.value.trim().toLowerCase();
              if (a.name.startsWith('on') || a.name === 'srcdoc'
                  || (['href', 'src', 'action', 'formaction', 'data', 'xlink:href'].includes(a.name)
                      && (v.startsWith('javascript:') || v.startsWith('data:'))))
                found.push(`${e.tagName} ${a.name}=${a.value.slice(0, 60)}`);
            }
          }
          return found;
        }""",
        ACTIVE_SELECTOR,
    )
    assert active == [], active
    answer = page.locator(".nbgrader_cell", has=page.locator("#q1")).first
    expect(answer.locator("strong", has_text="慢 stage")).to_be_visible()  # ordinary markdown renders
    # the student's formula is typeset (MathJax kept its TeX in the math/tex script beside it)
    expect(answer.locator(".MathJax").first).to_be_visible()
    assert FORMULA.strip("$") in answer.locator('script[type^="math/tex"]').first.text_content()
    assert "MathJax.js" in mathjax and any(p.startswith("jax/output/HTML-CSS") for p in mathjax), mathjax
    assert "extensions/Safe.js" in mathjax, mathjax  # the Safe extension, as nbconvert's CDN URL asked
    assert offline == [], offline  # nothing was asked of the network

    feedback = out / "feedback" / "mallory" / ASSIGNMENT / f"{NOTEBOOK}.html"  # nbgrader's layout
    page.unroute("**/*")
    page.goto(feedback.as_uri())
    page.wait_for_timeout(1_000)
    assert page.locator("script, iframe, object, embed, svg").count() == 0
    assert evidence() == {}
    steps("feedback page opened")
