"""`make lab`, the student's way in: it creates a personal working copy of lessons/ (gitignored) and never
overwrites work in it, serves that copy on a loopback port behind a token, and runs without nbgrader's
instructor menus and server extensions and without JupyterLab's news pop-up, for that launch only
(a plain `jupyter lab` in the same environment still has them)."""

from __future__ import annotations

import html
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from autograder.student.lab import ORIGINS, prepare

ROOT = Path(__file__).resolve().parent.parent
NB = "16-asymmetric-pipeline/asymmetric_pipeline.ipynb"
INSTRUCTOR_PLUGINS = {
    "@jupyter/nbgrader:formgrader",
    "@jupyter/nbgrader:create-assignment",
    "@jupyter/nbgrader:course-list",
    "@jupyter/nbgrader:menu",
}
NEWS = "@jupyterlab/apputils-extension:announcements"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_working_copy_is_created_and_work_is_never_overwritten(tmp_path):
    lessons, work = tmp_path / "lessons", tmp_path / "my-work"
    (lessons / "a").mkdir(parents=True)
    (lessons / "a" / "a.ipynb").write_text("v1", encoding="utf-8")
    (lessons / "a" / ".ipynb_checkpoints").mkdir()
    (lessons / "a" / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("x", encoding="utf-8")
    log = prepare(lessons, work)
    assert log[0].startswith(f"created {work}/") and (work / "a" / "a.ipynb").read_text() == "v1"
    assert not (work / "a" / ".ipynb_checkpoints").exists()
    (work / "a" / "a.ipynb").write_text("my answers", encoding="utf-8")
    assert prepare(lessons, work) == []  # nothing new: nothing said, nothing touched
    # a pull brings a corrected lesson and a new one: the new one is added, the student's work kept
    (lessons / "a" / "a.ipynb").write_text("v2", encoding="utf-8")
    (lessons / "b").mkdir()
    (lessons / "b" / "b.ipynb").write_text("new", encoding="utf-8")
    log = prepare(lessons, work)
    assert (work / "a" / "a.ipynb").read_text() == "my answers"
    assert (work / "b" / "b.ipynb").read_text() == "new"
    assert log[0] == f"added to {work}/ from {lessons}/ (new there): b/b.ipynb"
    assert any("lessons/a/a.ipynb changed since your copy was made" in line for line in log)
    assert json.loads((work / ORIGINS).read_text())["b/b.ipynb"]


def test_working_copy_is_gitignored():
    run = subprocess.run(
        ["git", "check-ignore", "-q", "my-work/16-asymmetric-pipeline/asymmetric_pipeline.ipynb"], cwd=ROOT
    )
    assert run.returncode == 0, "my-work/ (make lab's working copy) must be ignored by git"


def _page_config(port: int, token: str) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/lab", headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        page = resp.read().decode("utf-8")
    m = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
    assert m, "no page config in /lab"
    return json.loads(html.unescape(m.group(1)))


def _status(port: int, token: str, path: str) -> int:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"token {token}"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _serve(cmd: list[str], port: int, token: str, cwd: Path, env: dict):
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, env=env
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        if _status(port, token, "/api/status") == 200 if _port_open(port) else False:
            return proc
        time.sleep(0.5)
    _stop(proc)
    raise AssertionError(f"JupyterLab did not start: {proc.stderr.read().decode()[-3000:]}")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop(proc) -> None:
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_make_lab_serves_the_students_copy_without_instructor_menus(tmp_path):
    work = tmp_path / "my-work"
    (work / "16-asymmetric-pipeline").mkdir(parents=True)
    mine = json.loads((ROOT / "lessons" / NB).read_text(encoding="utf-8"))
    mine["metadata"]["student_was_here"] = True
    (work / NB).write_text(json.dumps(mine, ensure_ascii=False), encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    args = f"--no-browser --ServerApp.port={port} --IdentityProvider.token={token} --ServerApp.port_retries=0"
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    proc = _serve(["make", "-s", "lab", f"LAB_ARGS={args}", f"WORK={work}"], port, token, ROOT, env)
    try:
        url = f"http://127.0.0.1:{port}/api/contents/{NB}"
        req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = json.load(resp)
        assert body["type"] == "notebook" and body["content"]["metadata"].get("student_was_here")  # kept
        other = f"http://127.0.0.1:{port}/api/contents/03-load-imbalance/load_imbalance.ipynb"
        with urllib.request.urlopen(
            urllib.request.Request(other, headers={"Authorization": f"token {token}"}), timeout=10
        ) as resp:  # the lesson the student did not have yet was added
            assert any("def " in "".join(c["source"]) for c in json.load(resp)["content"]["cells"])
        try:
            urllib.request.urlopen(urllib.request.Request(url), timeout=5)
            raise AssertionError("the server must require its token")
        except urllib.error.HTTPError as exc:
            assert exc.code in (401, 403)
        disabled = _page_config(port, token)["disabledExtensions"]
        assert INSTRUCTOR_PLUGINS | {NEWS} <= set(disabled), disabled
        assert "@jupyter/nbgrader:validate-assignment" not in disabled  # the self-check button stays
        assert _status(port, token, "/formgrader") == 404  # nbgrader's formgrader server extension is off
    finally:
        _stop(proc)
    assert (work / "03-load-imbalance" / "load_imbalance.ipynb").is_file()


def test_a_plain_jupyter_lab_keeps_the_instructor_menus(tmp_path):
    """The student configuration is for `make lab` only: the environment itself is unchanged."""
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [
        str(ROOT / ".venv" / "bin" / "jupyter"),
        "lab",
        f"--notebook-dir={tmp_path}",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.port_retries=0",
        *(["--allow-root"] if os.geteuid() == 0 else []),
    ]
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    proc = _serve(cmd, port, token, tmp_path, env)
    try:
        disabled = _page_config(port, token).get("disabledExtensions", [])  # a list of plugin ids
        assert not INSTRUCTOR_PLUGINS & set(disabled), disabled
        assert _status(port, token, "/formgrader") != 404
    finally:
        _stop(proc)
