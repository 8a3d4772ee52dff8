"""The course on a real JupyterHub (PyPI) behind configurable-http-proxy (npm), on loopback, with this
repository's hub configuration (``jupyter-config/jupyterhub_config.py``) and nbgrader's exchange in a
temporary shared directory, driven in real Chromium:

1. the instructor releases lesson 16 from our course directory with nbgrader's own command
   (``nbgrader release_assignment``, run in the repository: ``lessons/`` is the release directory);
2. a student logs in through the hub's login page, opens the Assignments tab (Nbgrader → Assignment
   List), fetches the assignment, edits the exercise in the fetched notebook, runs Validate (our
   self-check) and submits from the Assignments tab;
3. the instructor collects with ``nbgrader collect`` (which writes nbgrader's ``timestamp.txt``) and grades
   the collected submissions with our engine (``python -m autograder grade``): the student's code earns
   its points and the result carries the submission time the exchange recorded;
4. the instructor reviews: our review server on the grading output (``python -m autograder formgrader``),
   where Q1's score is confirmed and a comment written through formgrader's REST API;
5. ``python -m autograder feedback`` regenerates the page in nbgrader's feedback layout and
   ``nbgrader release_feedback`` publishes it from there; the student's Fetch Feedback brings it home and
   the page opened in Lab shows the confirmed Q1 score, the comment, and the total ``export`` gives.

The instructor's commands are docs/JUPYTERHUB.md's ``# instructor: …`` blocks, run as written with bash.

If the hub cannot run (no JupyterHub, no configurable-http-proxy, no Chromium) this FAILS, never skips:
``.ci/run`` installs them. Screenshots: ``build/test-artifacts/browser/<test name>/``."""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.authoring.demo import reference_cells
from autograder.review.formgrader import FormgraderServer, free_port

from .conftest import (
    ASSIGNMENT_16,
    LAB_SETTINGS,
    NOTEBOOK_16,
    NotebookUI,
    _children,
    find_chromium,
    stop_process_group,
)

pytestmark = [pytest.mark.jupyterhub, pytest.mark.browser]

REPO = Path(__file__).resolve().parents[2]
HUB_CONFIG = REPO / "jupyter-config" / "jupyterhub_config.py"
STUDENT = "zhang-san"
PASSWORD = "course-hub-test"
NB_PATH = f"{ASSIGNMENT_16}/{NOTEBOOK_16}.ipynb"
Q1_COMMENT = "Q1：饥饿与背压的因果链要分开写，并用 [30,10,10,20] 说明。"


def find_chp() -> str | None:
    """configurable-http-proxy: where .ci/run installs it (``build/node``), else on PATH."""
    local = REPO / "build" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"
    return str(local) if local.is_file() else shutil.which("configurable-http-proxy")


DOC = (REPO / "docs" / "JUPYTERHUB.md").read_text(encoding="utf-8")


def doc_block(step: str) -> str:
    """docs/JUPYTERHUB.md's bash block headed ``# instructor: <step>``."""
    (block,) = (
        b for b in re.findall(r"```bash\n(.*?)```", DOC, re.S) if b.startswith(f"# instructor: {step}\n")
    )
    return block


def instructor(step: str, **env: str) -> subprocess.CompletedProcess:
    """docs/JUPYTERHUB.md's bash block headed ``# instructor: <step>``, run as written in the repository
    with ``EXCHANGE`` and ``COURSE`` set (nbgrader's own commands, then ours)."""
    block = doc_block(step)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise AssertionError(f"{step!r} failed ({proc.returncode}):\n{block}\n{proc.stdout}\n{proc.stderr}")
    return proc


def start_review(log: Path, **env: str) -> FormgraderServer:
    """docs/JUPYTERHUB.md's ``# instructor: review`` block (our review server, which runs until Ctrl-C),
    started as written; returns the server it announces (its URL and token from the printed lines)."""
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", doc_block("review")],
            cwd=REPO,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    announced = re.compile(
        r"open \(logs in with the token\): http://127\.0\.0\.1:(\d+)/formgrader\?token=(\w+)"
    )
    deadline = time.monotonic() + 180
    while not (m := announced.search(log.read_text(encoding="utf-8", errors="replace"))):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_review(proc)
            raise AssertionError("the review server did not start:\n" + log.read_text(errors="replace"))
        time.sleep(0.3)
    return FormgraderServer(proc, int(m[1]), m[2], log)


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        found += kids
        todo += kids
    return found


def stop_review(proc: subprocess.Popen) -> None:
    """Ctrl-C to the review command (it then stops the Jupyter server it started, which leads its own
    session); SIGKILL whatever of it outlives that (only processes this test started)."""
    kids = _descendants(proc.pid) if proc.poll() is None else []
    try:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        stop_process_group(proc)
    for pid in kids:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def confirm_q1(out: Path, server: FormgraderServer, score: float, comment: str) -> None:
    """What the instructor does in formgrader for Q1, through its REST API (the page's own calls)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}", "pp-course") as gb:
        grade_id = gb.find_grade("q1", NOTEBOOK_16, ASSIGNMENT_16, STUDENT).id
        comment_id = gb.find_comment("q1", NOTEBOOK_16, ASSIGNMENT_16, STUDENT).id
    status, body = server.request("PUT", f"/formgrader/api/grade/{grade_id}", {"manual_score": score}, 60)
    assert status == 200 and body["manual_score"] == score, (status, body)
    status, body = server.request(
        "PUT", f"/formgrader/api/comment/{comment_id}", {"manual_comment": comment}, 60
    )
    assert status == 200, (status, body)


def open_assignments(page):
    """Nbgrader → Assignment List (the menu holds only the students' entries); returns the Assignments tab."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile("^Nbgrader$")).click()
    menu = page.locator(".lm-Menu-content").last
    menu.get_by_text("Assignment List", exact=True).wait_for()
    entries = menu.locator(".lm-Menu-item:not(.lm-mod-hidden) .lm-Menu-itemLabel").all_inner_texts()
    assert entries == ["Assignment List"], entries  # no Formgrader, Course List, Create assignment
    menu.get_by_text("Assignment List", exact=True).click()
    tab = page.locator("#nbgrader-assignment-list")
    tab.wait_for()
    return tab


@dataclass
class Hub:
    url: str
    root: Path
    exchange: Path
    homes: Path
    proc: subprocess.Popen
    log: Path

    def log_tail(self, n: int = 60) -> str:
        return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-n:])


@dataclass
class HubUserServer:
    """What :class:`NotebookUI` needs of a server: the user's Lab under the hub (the cookie from the login
    page authenticates, so no token) and its root directory (the user's home)."""

    base: str
    root_dir: Path
    token: str = ""


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    missing = [
        what
        for what, found in (
            ("Chromium (apt-get install chromium)", find_chromium()),
            ("configurable-http-proxy (npm install --prefix build/node configurable-http-proxy)", find_chp()),
            (
                "JupyterHub (pip install -e '.[test]')",
                shutil.which("jupyterhub", path=str(Path(sys.executable).parent)),
            ),
        )
        if not found
    ]
    if missing:
        pytest.fail(
            f"cannot run the hub test, missing: {'; '.join(missing)} (.ci/run installs them)", pytrace=False
        )
    root = tmp_path_factory.mktemp("hub")
    state, homes, exchange = root / "state", root / "homes", root / "exchange"
    for d in (state, homes, exchange):
        d.mkdir()
    exchange.chmod(0o777)  # nbgrader's exchange: everyone writes (its own inbound/outbound modes)
    for rel, value in LAB_SETTINGS.items():  # no news / update toasts over the student's page
        path = homes / STUDENT / ".jupyter" / "lab" / "user-settings" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value), encoding="utf-8")
    port = free_port()
    env = {
        **os.environ,
        "PP_HUB_BIND_URL": f"http://127.0.0.1:{port}",
        "PP_HUB_API_PORT": str(free_port()),
        "PP_PROXY_API_PORT": str(free_port()),
        "PP_CHP": find_chp(),
        "PP_HUB_STATE": str(state),
        "PP_HUB_HOMES": str(homes),
        "PP_EXCHANGE": str(exchange),
        "PP_HUB_USERS": STUDENT,
        "PP_HUB_PASSWORD": PASSWORD,
        "PP_HUB_TESTING": "1",
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    }
    log = root / "jupyterhub.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "jupyterhub"), "-f", str(HUB_CONFIG)],
            cwd=state,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    h = Hub(f"http://127.0.0.1:{port}", root, exchange, homes, proc, log)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{h.url}/hub/api", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except (OSError, urllib.error.HTTPError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"JupyterHub did not start; log:\n{h.log_tail()}", pytrace=False)
            time.sleep(0.3)
        yield h
    finally:
        stop_process_group(proc)  # the hub stops its proxy and the users' servers with it
        _stop_leftover_proxy(state / "proxy.pid")


def _stop_leftover_proxy(pidfile: Path) -> None:
    """SIGKILL the proxy this hub started if it outlived the hub (only that process: its pid from the
    hub's pid file, and only while that pid still runs configurable-http-proxy)."""
    try:
        pid = int(pidfile.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return
    if b"configurable-http-proxy" in cmdline:
        os.kill(pid, 9)


def test_student_fetches_validates_submits_on_the_hub_and_the_instructor_grades(hub, page, artifacts, steps):
    # 1. the instructor releases lesson 16 from the course directory with nbgrader's own command
    course = hub.root / "course"  # the instructor's grading directory
    env = {"EXCHANGE": str(hub.exchange), "COURSE": str(course)}
    released = instructor("release", **env)
    outbound = hub.exchange / "pp-course" / "outbound" / ASSIGNMENT_16 / f"{NOTEBOOK_16}.ipynb"
    assert outbound.is_file(), released.stderr
    assert outbound.read_bytes() == (REPO / "lessons" / NB_PATH).read_bytes()
    steps("nbgrader release_assignment")

    # 2. the student logs in through the hub's login page
    page.goto(f"{hub.url}/hub/login")
    page.locator("#username_input").fill(STUDENT)
    page.locator("#password_input").fill(PASSWORD)
    page.screenshot(path=str(artifacts / "1-login.png"))
    page.locator("#login_submit").click()
    page.wait_for_url(re.compile(rf"/user/{STUDENT}/lab"), timeout=150_000)
    page.wait_for_function("() => !!(window.jupyterapp && window.jupyterapp.shell)", timeout=90_000)
    steps("log in, server spawned, Lab loaded")

    # the student's menus: the assignment list, not the instructor's formgrader / course list
    tab = open_assignments(page)
    assert page.request.get(f"{hub.url}/user/{STUDENT}/formgrader").status == 404  # nor its server side
    released_row = tab.locator("#released_assignments_list .list_item", has_text=ASSIGNMENT_16)
    released_row.wait_for(timeout=60_000)
    page.screenshot(path=str(artifacts / "2-assignments-released.png"))
    released_row.get_by_role("button", name="Fetch").click()
    fetched_row = tab.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT_16)
    fetched_row.wait_for(timeout=60_000)
    home = hub.homes / STUDENT
    assert (home / NB_PATH).read_bytes() == outbound.read_bytes()
    page.screenshot(path=str(artifacts / "3-assignments-fetched.png"))
    steps("Assignments tab: fetch")

    # the student works in the fetched notebook: the exercise, then Validate (the self-check)
    nb = NotebookUI(page, HubUserServer(f"{hub.url}/user/{STUDENT}", home), NB_PATH)
    nb.open(workspace="hub-student")
    nb.set_source("exercise", reference_cells(REPO / "autograder" / "lessons" / ASSIGNMENT_16)["exercise"])
    nb.page.locator(f'[id="{nb.panel_id}"] .validate-button').first.click()
    dialog = page.locator(".jp-Dialog")
    dialog.get_by_text("Validation Results").wait_for(timeout=120_000)
    report = dialog.inner_text()
    page.screenshot(path=str(artifacts / "4-validate.png"))
    assert "自检 (selfcheck)" in report, report
    dialog.locator(".jp-mod-accept").click()
    dialog.wait_for(state="detached")
    saved = json.loads((home / NB_PATH).read_text(encoding="utf-8"))
    exercise = next(
        c for c in saved["cells"] if (c["metadata"].get("nbgrader") or {}).get("grade_id") == "exercise"
    )
    assert "".join(exercise["source"]) == nb.source("exercise")  # Validate saved what was typed
    steps("edit the exercise, Validate")

    # submit from the Assignments tab
    tab = open_assignments(page)  # opening the notebook loaded a fresh Lab workspace
    fetched_row = tab.locator("#fetched_assignments_list .list_item", has_text=ASSIGNMENT_16)
    fetched_row.get_by_role("button", name="Submit").click()
    submitted_row = tab.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT_16)
    submitted_row.wait_for(timeout=60_000)
    page.screenshot(path=str(artifacts / "5-assignments-submitted.png"))
    (inbound,) = (hub.exchange / "pp-course" / "inbound").glob(f"{STUDENT}+{ASSIGNMENT_16}+*")
    submitted_at = inbound.name.split("+")[2]
    steps("Assignments tab: submit")

    # 3. the instructor collects (nbgrader's timestamp.txt) and grades with our engine
    instructor("collect and grade", **env)
    collected = course / "submitted" / STUDENT / ASSIGNMENT_16
    assert (collected / "timestamp.txt").read_text(encoding="utf-8").strip() == submitted_at
    out = course / "grading"
    with open(out / "grades.csv", encoding="utf-8") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["student_id"], row["assignment_id"], row["status"]) == (STUDENT, ASSIGNMENT_16, "ok")
    assert float(row["code_total"]) == 4.0, row  # the reference exercise the student typed
    result = json.loads((out / "results" / STUDENT / f"{ASSIGNMENT_16}.json").read_text(encoding="utf-8"))
    assert result["submitted_at"].replace("T", " ").startswith(submitted_at[:19]), (
        result["submitted_at"],
        submitted_at,
    )
    steps("nbgrader collect, python -m autograder grade")

    q1 = result_item(out, "q1")
    assert q1["confirmed"] is None  # nothing reviewed yet: the page shows the suggestion
    assert "待教师确认" in (out / "feedback" / STUDENT / ASSIGNMENT_16 / f"{NOTEBOOK_16}.html").read_text(
        encoding="utf-8"
    )

    # 4. the instructor reviews: our review server on the grading output, Q1 confirmed with a score that
    #    differs from the suggestion and a comment, through formgrader's REST API
    q1_score = 1.5 if q1["suggestion"] != 1.5 else 1.0
    server = start_review(hub.root / "review.log", **env)
    try:
        server.wait_ready(timeout=120)
        confirm_q1(out, server, q1_score, Q1_COMMENT)
    finally:
        stop_review(server.proc)
    steps("review server, Q1 confirmed with a comment (formgrader's API)")

    # 5. the pages regenerated with the review (nbgrader's feedback layout: the page beside the
    #    submission's timestamp.txt and submission_secret.txt), released with nbgrader's command
    instructor("release feedback", **env)
    placed = out / "feedback" / STUDENT / ASSIGNMENT_16
    assert sorted(p.name for p in placed.iterdir()) == [
        f"{NOTEBOOK_16}.html",
        "submission_secret.txt",
        "timestamp.txt",
    ]
    # the secret is the one the student's nbgrader submit kept (collect copied it): fetch_feedback's name
    assert (placed / "submission_secret.txt").read_bytes() == (
        collected / "submission_secret.txt"
    ).read_bytes()
    # our grade rewrote OUT/submitted/.../timestamp.txt in UTC, nbgrader's format: the exchange's time again
    assert (placed / "timestamp.txt").read_text(encoding="utf-8").strip() == submitted_at
    page_html = (placed / f"{NOTEBOOK_16}.html").read_bytes()
    steps("python -m autograder feedback, nbgrader release_feedback")

    # the final grades: export's grades.csv counts the confirmed Q1 (and leaves the page as released)
    subprocess.run(
        [sys.executable, "-m", "autograder", "export", "--out", str(out), "--quiet"],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=300,
    )
    with open(out / "grades.csv", encoding="utf-8") as fh:
        (final,) = list(csv.DictReader(fh))
    assert float(final["q1"]) == q1_score, final
    assert float(final["total"]) == pytest.approx(float(row["total"]) - q1["suggestion"] + q1_score), (
        row,
        final,
    )
    assert (placed / f"{NOTEBOOK_16}.html").read_bytes() == page_html

    # the student fetches it from the Assignments tab and sees it
    page.locator("#refresh_assignments_list").click()
    submitted_row = tab.locator("#submitted_assignments_list .list_item", has_text=ASSIGNMENT_16)
    submitted_row.get_by_text("feedback available to fetch").wait_for(timeout=60_000)
    submitted_row.get_by_role("button", name="Fetch Feedback").click()
    view = tab.locator("#submitted_assignments_list").get_by_text("(view feedback)")
    view.wait_for(timeout=60_000)
    # fetch_feedback names the folder by the submission in the student's cache (the exchange's time)
    (fetched,) = (home / ASSIGNMENT_16 / "feedback").glob(f"*/{NOTEBOOK_16}.html")
    assert fetched.parent.name == submitted_at
    assert fetched.read_bytes() == page_html
    assert html.escape(Q1_COMMENT) in fetched.read_text(encoding="utf-8")
    page.screenshot(path=str(artifacts / "6-assignments-feedback.png"))
    view.click()  # the file browser goes to the feedback folder
    item = page.locator(".jp-DirListing-item", has_text=f"{NOTEBOOK_16}.html")
    item.wait_for(timeout=30_000)
    item.dblclick()  # JupyterLab's HTML viewer (a sandboxed frame)
    shown = page.frame_locator(".jp-HTMLViewer iframe").locator("body")
    shown.get_by_text(f"{final['total']} / {final['max_total']}").first.wait_for(timeout=30_000)
    text = shown.inner_text()
    assert STUDENT in text
    q1_shown = text[text.index("q1 — ") : text.index("q2 — ")]
    assert q1_shown.startswith(f"q1 — {q1_score:g} / 2"), q1_shown
    assert f"教师确认 / confirmed: {q1_score:g}" in q1_shown, q1_shown
    assert Q1_COMMENT in q1_shown and "待教师确认" not in q1_shown, q1_shown
    assert "待教师确认" in text[text.index("q2 — ") :]  # Q2 was not reviewed: still the suggestion
    page.screenshot(path=str(artifacts / "7-feedback-opened.png"))
    shown.get_by_text(Q1_COMMENT).scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "8-feedback-q1-reviewed.png"))
    steps("Assignments tab: Fetch Feedback, view feedback")


def result_item(out: Path, item: str) -> dict:
    result = json.loads((out / "results" / STUDENT / f"{ASSIGNMENT_16}.json").read_text(encoding="utf-8"))
    return next(it for it in result["items"] if it["id"] == item)
