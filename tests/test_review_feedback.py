"""The review loop closes (issue 25): what the instructor confirms reaches the student's feedback page, and
nbgrader's own exchange delivers it.

One lesson-16 class goes the whole nbgrader way: the student submits the reference notebook with
``nbgrader submit`` (a real exchange in a temporary folder), the instructor runs ``nbgrader collect``,
then ``python -m autograder grade``; a second student's folder came without the exchange (an LMS zip:
no ``submission_secret.txt``). In formgrader (the review server, through its REST API) the instructor
sets Q1's score and comment; on the answer-groups page they confirm Q2's group with a comment. Then
``python -m autograder feedback`` and ``export`` regenerate the pages; ``nbgrader release_feedback`` (run
by nbgrader itself, on our ``OUT/feedback`` layout) publishes them under the submission's hash, and the
student's ``nbgrader fetch_feedback`` brings back exactly our page. formgrader's Generate and Release
Feedback buttons (their API endpoints) go through the same pages.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from autograder.core.results import SubmissionResult
from autograder.review import formgrader

REPO = Path(__file__).resolve().parents[1]
ASSIGNMENT, NOTEBOOK = "16-asymmetric-pipeline", "asymmetric_pipeline"
COURSE = "pp-course"
Q1_COMMENT = "Q1：bubble 的来源讲清楚了，但 <b>慢 stage</b> 要量化。"
Q2_COMMENT = "组评语：这一组都漏了 warm-up 阶段。"


def run(cmd: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}\n{done.stdout}\n{done.stderr}"
    return done


def nbgrader(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "nbgrader", *args], cwd)


def autograder(*args: str) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "autograder", *args], REPO)


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    """The class submitted through a real nbgrader exchange, collected, graded; formgrader on OUT."""
    tmp = tmp_path_factory.mktemp("review-loop")
    exchange, cache, course, work, out = (tmp / d for d in ("exchange", "cache", "course", "work", "out"))
    release = REPO / "lessons" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    outbound = exchange / COURSE / "outbound" / ASSIGNMENT
    outbound.mkdir(parents=True)
    shutil.copy(release, outbound)  # what `nbgrader release_assignment` leaves in the exchange
    (exchange / COURSE / "inbound").mkdir(mode=0o733)
    (work / ASSIGNMENT).mkdir(parents=True)
    shutil.copy(REPO / "solutions" / ASSIGNMENT / f"{NOTEBOOK}.ipynb", work / ASSIGNMENT)
    ex = [f"--Exchange.root={exchange}", f"--Exchange.cache={cache}", f"--course={COURSE}"]
    nbgrader("submit", ASSIGNMENT, *ex, cwd=work)
    course.mkdir()
    nbgrader("collect", ASSIGNMENT, *ex, cwd=course)
    submitted = course / "submitted"
    (student,) = [p.name for p in submitted.iterdir()]  # the exchange names the student by login
    assert (submitted / student / ASSIGNMENT / "submission_secret.txt").is_file()
    lms = submitted / "lms-student" / ASSIGNMENT  # no exchange: no secret
    lms.mkdir(parents=True)
    shutil.copy(release, lms)
    autograder("grade", str(submitted), "--out", str(out), "--isolation", "none", "--quiet")
    server = formgrader.start(out, log_path=tmp / "server.log", extra_args=[f"--Exchange.root={exchange}"])
    try:
        server.wait_ready(timeout=120)
        yield {"out": out, "student": student, "exchange": exchange, "ex": ex, "work": work, "server": server}
    finally:
        server.stop()


def page_of(out: Path, student: str) -> str:
    return (out / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html").read_text(encoding="utf-8")


def grade_and_comment_ids(out: Path, student: str, item: str) -> tuple[str, str]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}", COURSE) as gb:
        return gb.find_grade(item, NOTEBOOK, ASSIGNMENT, student).id, gb.find_comment(
            item, NOTEBOOK, ASSIGNMENT, student
        ).id


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def post_form(server, path: str, form: dict) -> int:
    req = urllib.request.Request(
        server.base + path,
        data=urllib.parse.urlencode(form).encode(),
        method="POST",
        headers={
            "Authorization": f"token {server.token}",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )

    try:
        return urllib.request.build_opener(NoRedirect).open(req, timeout=120).status
    except urllib.error.HTTPError as e:
        return e.code


def test_confirmed_scores_and_comments_reach_the_student_through_nbgrader(loop):
    out, student, server = loop["out"], loop["student"], loop["server"]
    result = SubmissionResult.load(out / "results" / student / f"{ASSIGNMENT}.json")
    q1, q2 = result.item("q1"), result.item("q2")
    assert q1.confirmed is None and q2.confirmed is None
    before = page_of(out, student)
    assert "待教师确认" in before and html.escape(Q1_COMMENT) not in before

    # formgrader: Q1 gets a score that differs from the suggestion, and a comment
    q1_score = 1.5 if q1.suggestion != 1.5 else 1.0
    grade_id, comment_id = grade_and_comment_ids(out, student, "q1")
    status, body = server.request("PUT", f"/formgrader/api/grade/{grade_id}", {"manual_score": q1_score})
    assert status == 200 and body["manual_score"] == q1_score
    status, _ = server.request("PUT", f"/formgrader/api/comment/{comment_id}", {"manual_comment": Q1_COMMENT})
    assert status == 200
    # the answer-groups page: Q2's group confirmed with a comment, through the page's form
    from autograder.review.groups import review_items

    (review,) = review_items(out, ASSIGNMENT, "q2")
    group = next(g for g in review.groups if student in {m.student_id for m in g.members})
    q2_score = 1.0 if group.suggestion != 1.0 else 1.5
    status = post_form(
        server,
        f"/autograder/groups/{ASSIGNMENT}/q2/confirm",
        {"key": group.key, "score": f"{q2_score:g}", "comment": Q2_COMMENT},
    )
    assert status == 303, status

    done = autograder("feedback", "--out", str(out))
    assert "2 feedback pages" in done.stdout and "1 with instructor comments" in done.stdout, done.stdout
    page = page_of(out, student)
    assert f"教师确认 / confirmed: <b>{q1_score:g}</b>（建议 / suggested {q1.suggestion:g}）" in page
    assert f"教师确认 / confirmed: <b>{q2_score:g}</b>（建议 / suggested {q2.suggestion:g}）" in page
    assert html.escape(Q1_COMMENT) in page and "<b>慢 stage</b>" not in page  # the comment is text
    assert "教师评语 / instructor's comment" in page
    assert "答案组确认 / answer-group review" in page and Q2_COMMENT in page
    stored = SubmissionResult.load(out / "results" / student / f"{ASSIGNMENT}.json")
    assert stored.item("q1").confirmed == q1_score and stored.item("q2").confirmed == q2_score
    assert f"{stored.final_total:g} / {stored.max_total:g}" in page  # the total counts the confirmed scores
    legacy = out / "feedback" / student / f"{ASSIGNMENT}.html"  # the earlier path keeps working
    assert legacy.read_text(encoding="utf-8") == page

    # nbgrader's own release_feedback publishes the pages under the submission's hash ...
    done = nbgrader("release_feedback", ASSIGNMENT, f"--Exchange.root={loop['exchange']}", cwd=out)
    secret = (out / "submitted" / student / ASSIGNMENT / "submission_secret.txt").read_text()
    released = loop["exchange"] / COURSE / "feedback"
    name = hashlib.md5((secret + NOTEBOOK).encode()).hexdigest() + ".html"  # noqa: S324 - nbgrader's name
    assert (released / name).read_text(encoding="utf-8") == page
    assert len(list(released.glob("*.html"))) == 2, done.stderr  # the LMS student's too (its own secret)
    # ... and the student's fetch_feedback finds ours
    nbgrader("fetch_feedback", ASSIGNMENT, *loop["ex"], cwd=loop["work"])
    (fetched,) = (loop["work"] / ASSIGNMENT / "feedback").glob(f"*/{NOTEBOOK}.html")
    assert fetched.read_text(encoding="utf-8") == page

    # a later change in formgrader reaches the page through export, and grades.csv agrees
    status, _ = server.request("PUT", f"/formgrader/api/grade/{grade_id}", {"manual_score": 2.0})
    assert status == 200
    status, _ = server.request("PUT", f"/formgrader/api/comment/{comment_id}", {"manual_comment": "全对。"})
    assert status == 200
    autograder("export", "--out", str(out), "--quiet")
    page = page_of(out, student)
    assert (
        "教师确认 / confirmed: <b>2</b>" in page and "全对。" in page and html.escape(Q1_COMMENT) not in page
    )
    import csv

    with open(out / "grades.csv", encoding="utf-8", newline="") as fh:
        row = next(r for r in csv.DictReader(fh) if r["student_id"] == student)
    assert float(row["q1"]) == 2.0 and float(row["q2"]) == q2_score


def test_formgraders_feedback_buttons_use_our_pages(loop):
    out, student, server = loop["out"], loop["student"], loop["server"]
    page = out / "feedback" / student / ASSIGNMENT / f"{NOTEBOOK}.html"
    page.unlink()
    status, body = server.request("POST", f"/formgrader/api/assignment/{ASSIGNMENT}/generate_feedback")
    assert status == 200, body
    answer = json.loads(body) if isinstance(body, str) else body
    assert answer["success"] is True and "2 feedback pages" in answer["log"], answer
    assert "<!doctype html>" in page.read_text(encoding="utf-8")  # ours, not nbgrader's notebook render
    status, body = server.request("POST", f"/formgrader/api/assignment/{ASSIGNMENT}/release_feedback")
    answer = json.loads(body) if isinstance(body, str) else body
    assert status == 200 and answer["success"] is True, answer
    assert "Releasing feedback for student" in answer["log"], answer
    status, body = server.request("POST", "/formgrader/api/assignment/no-such-lesson/generate_feedback")
    answer = json.loads(body) if isinstance(body, str) else body
    assert status == 200 and answer["success"] is False and "grade it first" in answer["error"], answer


def test_release_without_an_exchange_says_where_the_pages_are(loop, tmp_path):
    out = loop["out"]
    with formgrader.start(out, log_path=tmp_path / "server.log") as server:  # no exchange configured
        server.wait_ready(timeout=120)
        status, body = server.request("POST", f"/formgrader/api/assignment/{ASSIGNMENT}/release_feedback")
        answer = json.loads(body) if isinstance(body, str) else body
        assert status == 200 and answer["success"] is False, answer
        assert "no nbgrader exchange" in answer["error"] and str(out / "feedback") in answer["error"]
        status, home = server.request("GET", "/formgrader/manage_assignments")
        assert status == 200 and 'id="warning-exchange"' not in home  # no exchange expected: no warning
        assert "autograder-review-only" in home
        status, students = server.request("GET", "/formgrader/manage_students")
        assert status == 200 and "autograder-review-only" in students
        # the review server's own additions answer only a logged-in instructor
        for path in (f"/autograder/extra_credit/{ASSIGNMENT}/{NOTEBOOK}",):
            try:
                status = urllib.request.build_opener(NoRedirect).open(server.base + path, timeout=10).status
            except urllib.error.HTTPError as e:
                status = e.code
            assert status in (302, 403), (path, status)
        status, extra = server.request("GET", f"/autograder/extra_credit/{ASSIGNMENT}/{NOTEBOOK}")
        assert status == 200 and isinstance(extra, dict)
        status, unknown = server.request(
            "POST", f"/formgrader/api/assignment/{ASSIGNMENT}/x/generate_feedback"
        )
        answer = json.loads(unknown) if isinstance(unknown, str) else unknown
        assert status == 200 and answer["success"] is False  # no such student: said, not a blank error


# --------------------------------------------------------------------------------------------- units


def written_result(confirmed: float | None) -> SubmissionResult:
    from autograder.core.results import ItemResult

    item = ItemResult(
        id="q1",
        kind="written",
        points=2,
        score=confirmed if confirmed is not None else 1.5,
        mode="static review",
        suggestion=1.5,
        confirmed=confirmed,
        evidence=[{"criterion": "bubble", "met": True, "quote": "q", "note": ""}],
    )
    return SubmissionResult("s1", ASSIGNMENT, f"{NOTEBOOK}.ipynb", items=[item], pass_line=1)


def test_a_written_comment_shows_once_the_score_is_confirmed_and_as_text():
    from autograder.gradebook.notes import Note
    from autograder.reporting import feedback

    notes = {"q1": Note("<script>alert(1)</script> 好")}
    page = feedback.render(written_result(2.0), notes)
    assert "教师评语 / instructor's comment" in page and "&lt;script&gt;alert(1)&lt;/script&gt; 好" in page
    assert "<script>" not in page and "建议 / suggested 1.5" in page
    # reopened (the answer changed since the review): the old comment is about the old answer
    reopened = feedback.render(written_result(None), notes)
    assert "alert(1)" not in reopened and "待教师确认" in reopened


def test_only_the_instructors_words_count_as_a_comment():
    from autograder.gradebook.notes import _instructor_words

    assert _instructor_words(None, "Suggested 1/2") == ""
    assert _instructor_words("Suggested 1/2\n", "Suggested 1/2") == ""  # the prefilled suggestion
    assert _instructor_words("  ", "x") == ""
    assert _instructor_words("Good, but…", "Suggested 1/2") == "Good, but…"


@pytest.mark.parametrize(
    "content", ["../../etc/passwd", "ab", "f" * 2000, "a1b2 c3d4e5f6a7b8", "é" * 40, None]
)
def test_a_submissions_secret_is_used_only_if_it_is_nbgraders_kind(tmp_path, content):
    from autograder.reporting.feedback import write_sidecars

    result = written_result(None)
    result.submission_sha256 = "abc"
    submitted = tmp_path / "submitted" / "s1" / ASSIGNMENT
    submitted.mkdir(parents=True)
    if content is not None:
        (submitted / "submission_secret.txt").write_text(content, encoding="utf-8")
    folder = tmp_path / "feedback" / "s1" / ASSIGNMENT
    folder.mkdir(parents=True)
    write_sidecars(tmp_path, result, folder)
    secret = (folder / "submission_secret.txt").read_text(encoding="utf-8")
    assert secret != content and len(secret) == 128 and set(secret) <= set("0123456789abcdef")
    write_sidecars(tmp_path, result, folder)  # the same name on every regeneration
    assert (folder / "submission_secret.txt").read_text(encoding="utf-8") == secret
    good = "0123456789abcdef" * 8
    (submitted / "submission_secret.txt").write_text(good, encoding="utf-8")
    write_sidecars(tmp_path, result, folder)
    assert (folder / "submission_secret.txt").read_text(encoding="utf-8") == good


def test_an_exchange_is_expected_only_where_one_is_configured():
    from traitlets.config import Config

    from autograder.review.server import exchange_configured

    configured = Config()
    configured.Exchange.root = "/srv/exchange"
    assert exchange_configured(configured)
    assert not exchange_configured(Config())
    other = Config()
    other.CourseDirectory.root = "/x"
    assert not exchange_configured(other)
