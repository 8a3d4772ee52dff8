"""Attack 1 of issue 10 without a browser: a submission's markup must not become active content in what
formgrader renders for the instructor. One lesson-16 submission carries every vector of
``tests/fixtures/hostile_review/vectors.json`` (answers, code-cell outputs, raw cells, cell metadata);
``recording.record`` places the review copy in ``OUT/autograded`` as ``grade`` does, and the page is
rendered with formgrader's own exporter (nbconvert + nbgrader's ``formgrade`` template). The same
catalogue runs in real Chromium against a real formgrader in ``tests/browser/test_hostile_review.py``.

Also: the review server refuses what review does not need (files, kernels, terminals, nbconvert,
formgrader's autograde/release/collect endpoints) and sends a Content-Security-Policy.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder.core.layout import REPO as LAYOUT
from autograder.core.results import SubmissionResult
from autograder.gradebook import coursedir, recording
from autograder.grading.assignment import load_assignment
from autograder.grading.scoring import zero_items
from autograder.review import formgrader
from autograder.review.server import MATHJAX_PATH

ROOT = LAYOUT.root

REPO = Path(__file__).resolve().parents[1]
ASSIGNMENT = "16-asymmetric-pipeline"
VECTORS = json.loads((REPO / "tests/fixtures/hostile_review/vectors.json").read_text(encoding="utf-8"))[
    "vectors"
]
#: elements that run, load or redirect something; formgrader's own page has some in <head> (baseline)
ACTIVE_TAGS = {"script", "style", "link", "meta", "base", "iframe", "frame", "object", "embed", "form", "svg"}
URL_ATTRIBUTES = {
    "href",
    "src",
    "action",
    "formaction",
    "data",
    "srcdoc",
    "xlink:href",
    "background",
    "poster",
}
ACTIVE_TEX = re.compile(
    r"\\(href|url|class|style|cssId|require|unicode|newcommand|renewcommand|def)(?![A-Za-z])"
)


def payload(name: str) -> str:
    return f"alert('pwned-{name}')"


class Page(HTMLParser):
    """Collects what could be active: tags, attributes, script/style text, text nodes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list]] = []
        self.code: list[str] = []  # script and style bodies
        self.text: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        (self.code if self._in else self.text).append(data)


def active_uses(html: str, marker: str) -> list[str]:
    """Where ``marker`` appears in an active position of ``html``: a script or style body, any attribute
    value (event handlers, URLs, srcdoc, ids and classes broken out of)."""
    page = Page()
    page.feed(html)
    found = [f"script/style body: {c[:80]!r}" for c in page.code if marker in c]
    for tag, attrs in page.tags:
        for name, value in attrs:
            if value and marker in value:
                found.append(f"<{tag} {name}={value[:80]!r}>")
    return found


def render_formgrade(path: Path) -> str:
    """What formgrader's SubmissionHandler renders for this notebook."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers

    exporter = HTMLExporter(template_name="formgrade", extra_template_basedirs=[handlers.template_path])
    resources = {
        "assignment_id": ASSIGNMENT,
        "notebook_id": "asymmetric_pipeline",
        "submission_id": "s1",
        "index": 0,
        "total": 1,
        "base_url": "",
        "student": "mallory",
        "last_name": None,
        "first_name": None,
        "notebook_path": "autograded/mallory",
    }
    return exporter.from_filename(str(path), resources=resources)[0]


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory, hostile_review_notebook):
    """(OUT, rendered page of the hostile submission, rendered page of the untouched release notebook)."""
    tmp = tmp_path_factory.mktemp("hostile-review")
    assignment = load_assignment(LAYOUT.data_dir(ASSIGNMENT))
    release = json.loads((REPO / "lessons" / ASSIGNMENT / f"{assignment.notebook}.ipynb").read_text("utf-8"))
    out = coursedir.prepare_course_dir(tmp / "out", ROOT)
    pages = {}
    for student, nb in (("mallory", hostile_review_notebook(release, payload)), ("baseline", release)):
        path = tmp / "submitted" / student / ASSIGNMENT / f"{assignment.notebook}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
        result = SubmissionResult(student, ASSIGNMENT, assignment.notebook, pass_line=assignment.pass_line)
        result.items = zero_items(assignment, "not graded in this test")
        recording.record(out, result, path)
        pages[student] = render_formgrade(
            out / "autograded" / student / ASSIGNMENT / f"{assignment.notebook}.ipynb"
        )
    return out, pages["mallory"], pages["baseline"]


@pytest.mark.parametrize("vector", [v["name"] for v in VECTORS])
def test_vector_is_inert_in_formgrader_page(reviewed, vector):
    _, page, _ = reviewed
    assert not active_uses(page, f"pwned-{vector}"), active_uses(page, f"pwned-{vector}")


def test_no_active_elements_beyond_formgraders_own(reviewed):
    _, page, baseline = reviewed

    def count(html):
        p = Page()
        p.feed(html)
        return {t: sum(1 for tag, _ in p.tags if tag == t) for t in ACTIVE_TAGS}

    got, own = count(page), count(baseline)
    assert got == own, {t: (got[t], own[t]) for t in ACTIVE_TAGS if got[t] != own[t]}
    p = Page()
    p.feed(page)
    for tag, attrs in p.tags:
        for name, value in attrs:
            if name in URL_ATTRIBUTES and value and re.match(r"\s*(javascript|data|vbscript):", value, re.I):
                pytest.fail(f"<{tag} {name}={value[:80]!r}>")


def test_no_active_tex_reaches_mathjax(reviewed):
    _, page, _ = reviewed
    p = Page()
    p.feed(page)
    text = "".join(p.text)
    assert "\\frac{p-1}{m+p-1}" in text  # formulas still reach MathJax as TeX
    assert not ACTIVE_TEX.findall(text), ACTIVE_TEX.findall(text)


def test_answer_still_renders_as_markdown(reviewed):
    _, page, _ = reviewed
    assert "<strong>慢 stage</strong>" in page
    assert "$\\frac{p-1}{m+p-1}$" in page


def test_review_server_exposes_review_only(reviewed):
    out, _, _ = reviewed
    server = formgrader.start(out)
    try:
        server.wait_ready(timeout=90)
        refused = [
            ("PUT", "/api/contents/pwned.txt", {"type": "file", "format": "text", "content": "x"}),
            ("POST", "/api/contents", {"type": "file"}),
            ("POST", "/api/terminals", None),
            ("POST", "/api/kernels", {"name": "python3"}),
            ("POST", "/api/sessions", {"path": "a.ipynb", "type": "notebook", "kernel": {"name": "python3"}}),
            ("GET", f"/nbconvert/html/submitted/mallory/{ASSIGNMENT}/asymmetric_pipeline.ipynb", None),
            ("POST", f"/formgrader/api/submission/{ASSIGNMENT}/mallory/autograde", None),
            ("POST", f"/formgrader/api/assignment/{ASSIGNMENT}/release", None),
            ("POST", f"/formgrader/api/assignment/{ASSIGNMENT}/collect", None),
            ("POST", f"/formgrader/api/assignment/{ASSIGNMENT}/assign", None),
            ("PUT", "/formgrader/api/student/mallory", {"first_name": "x"}),
            # Validate runs the notebook's code: nbgrader's validator would run it as the instructor
            (
                "POST",
                f"/assignments/validate?path=submitted/mallory/{ASSIGNMENT}/asymmetric_pipeline.ipynb",
                None,
            ),
            ("GET", "/assignments?course_id=pp-course", None),
            ("POST", "/assignments/fetch?course_id=pp-course&assignment_id=x", None),
        ]
        for method, path, body in refused:
            status, _ = server.request(method, path, body)
            assert status in (403, 404), f"{method} {path} -> {status}"
        assert not (out / "pwned.txt").exists()
        status, _ = server.request("GET", "/api/terminals")
        assert status == 404  # terminals are disabled, not merely empty
        status, assignments = server.request("GET", "/formgrader/api/assignments")
        assert status == 200 and any(a["name"] == ASSIGNMENT for a in assignments)
        import urllib.request

        req = urllib.request.Request(
            server.base + "/formgrader/gradebook", headers={"Authorization": f"token {server.token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            csp = resp.headers.get("Content-Security-Policy", "")
        assert "connect-src 'self'" in csp and "object-src 'none'" in csp and "form-action 'self'" in csp
        script_src = next(d for d in csp.split("; ") if d.startswith("script-src"))
        assert script_src.split()[1:] == ["'self'", "'unsafe-inline'", "'unsafe-eval'"]  # no CDN
        assert "https:" not in csp and "http:" not in csp
        # MathJax comes from this server (jupyter-server-mathjax), with its Safe extension
        for path in (MATHJAX_PATH, "/static/jupyter_server_mathjax/extensions/Safe.js"):
            with urllib.request.urlopen(server.base + path, timeout=10) as resp:
                assert resp.status == 200 and b"MathJax" in resp.read()
    finally:
        server.stop()


def test_review_copy_is_a_valid_notebook_without_outputs(reviewed):
    import nbformat

    out, _, _ = reviewed
    copy = nbformat.read(
        out / "autograded" / "mallory" / ASSIGNMENT / "asymmetric_pipeline.ipynb", as_version=4
    )
    nbformat.validate(copy)
    assert all(c.get("outputs", []) == [] and not c.get("attachments") for c in copy.cells)
    assert {c.cell_type for c in copy.cells} <= {"code", "markdown"}  # raw cells became escaped text
