"""Start a Jupyter server on a grading output directory so instructors review written answers in formgrader.

The same server serves the answer-group review page (``autograder.review.group_page``, a server extension
enabled on the command line) at ``/autograder/groups``.

The server runs with cwd = root_dir = OUT, so nbgrader's formgrader server extension (enabled in the venv's
``etc/jupyter/jupyter_server_config.d/nbgrader.json``) loads ``OUT/nbgrader_config.py`` and with it OUT's
gradebook. It listens on 127.0.0.1 only, with a random token.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import webbrowser
from pathlib import Path

from autograder.classroom.ungraded import lines
from autograder.gradebook.coursedir import CONFIG_NAME

#: the review server exposes review only (see autograder.review.server): no terminals, read-only Jupyter
#: APIs, formgrader's API limited to grades/comments/flags, a Content-Security-Policy on every page
REVIEW_OPTIONS = [
    "--ServerApp.terminals_enabled=False",
    "--ServerApp.authorizer_class=autograder.review.server.ReviewOnlyAuthorizer",
    # server extensions: the review limits, and the answer-group page (autograder.review.group_page) next to
    # formgrader (a repeated option adds to the dict)
    "--ServerApp.jpserver_extensions=autograder.review.server=True",
    "--ServerApp.jpserver_extensions=autograder.review.group_page=True",
    # the student-side extensions the environment enables for JupyterLab are not review: Validate would run
    # a submission's code (nbgrader's validator: as the instructor, unsandboxed), assignment_list fetches
    # and submits through the exchange
    "--ServerApp.jpserver_extensions=nbgrader.server_extensions.validate_assignment=False",
    "--ServerApp.jpserver_extensions=autograder.student.lab_selfcheck=False",
    "--ServerApp.jpserver_extensions=nbgrader.server_extensions.assignment_list=False",
    "--ServerApp.jpserver_extensions=nbgrader.server_extensions.course_list=False",
    # MathJax from this server (jupyter-server-mathjax; autograder.review.server makes formgrader's pages
    # load it): formulas typeset offline, and the CSP names no CDN
    "--ServerApp.jpserver_extensions=jupyter_server_mathjax=True",
]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class FormgraderServer:
    """A running Jupyter server (a child process in its own session) serving formgrader for OUT."""

    def __init__(self, proc: subprocess.Popen, port: int, token: str, log_path: Path):
        self.proc, self.port, self.token, self.log_path = proc, port, token, log_path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """formgrader's page, with the token so a browser can log in."""
        return f"{self.base}/formgrader?token={self.token}"

    def request(self, method: str, path: str, body: dict | None = None, timeout: float = 10.0):
        """Call the server with the token (token-authenticated requests need no XSRF cookie).
        Returns (status, parsed JSON body or raw text)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status, raw = resp.status, resp.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            status, raw = e.code, e.read().decode("utf-8", "replace")
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Block until formgrader's API answers (it is loaded after the server starts)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"the Jupyter server exited with {self.proc.returncode}; see {self.log_path}:\n"
                    + self.log_tail()
                )
            try:
                status, _ = self.request("GET", "/formgrader/api/status", timeout=2.0)
                if status == 200:
                    return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise TimeoutError(f"formgrader did not answer within {timeout:.0f} s; see {self.log_path}")

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM the server's process group (it leads it), then SIGKILL if it does not go."""
        if self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def __enter__(self) -> FormgraderServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start(
    out_dir: Path | str,
    port: int | None = None,
    token: str | None = None,
    app: str = "server",
    log_path: Path | None = None,
    extra_args: list[str] | None = None,
) -> FormgraderServer:
    """Start a bare ``jupyter server`` (``app="server"``, the default: formgrader's pages are all review
    needs) or ``jupyter lab`` (``app="lab"``) on OUT with :data:`REVIEW_OPTIONS` (and ``extra_args``,
    e.g. ``--Exchange.root=DIR`` for a course with an nbgrader exchange), and return at once; call
    ``wait_ready()`` before using it."""
    out = Path(out_dir).resolve()
    if not (out / CONFIG_NAME).is_file():
        raise FileNotFoundError(f"{out / CONFIG_NAME} is missing: grade into {out} first")
    port = port or free_port()
    token = token or secrets.token_hex(24)
    module = {"lab": "jupyterlab", "server": "jupyter_server"}[app]
    cmd = [
        sys.executable,
        "-m",
        module,
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={out}",
        "--ServerApp.open_browser=False",
        f"--IdentityProvider.token={token}",
        *REVIEW_OPTIONS,
        *(extra_args or []),
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers often run as root
        cmd.append("--ServerApp.allow_root=True")
    env = dict(os.environ)
    # nbgrader shells out to `alembic` (db upgrades): the venv's bin must be on PATH
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    log_path = Path(log_path) if log_path else out / "formgrader.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            cmd,
            cwd=out,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return FormgraderServer(proc, port, token, log_path)


def serve(
    out_dir: Path | str, port: int | None = None, open_browser: bool = False, exchange: str | None = None
) -> int:
    """Run formgrader for OUT until Ctrl-C; prints the URL (``http://127.0.0.1:<port>/formgrader``).
    ``exchange``: the course's nbgrader exchange root, for the Release Feedback button."""
    server = start(out_dir, port=port, extra_args=[f"--Exchange.root={exchange}"] if exchange else None)
    try:
        server.wait_ready()
        print(f"formgrader: {server.base}/formgrader", flush=True)
        print(f"  open (logs in with the token): {server.url}", flush=True)
        print(f"answer groups: {server.base}/autograder/groups?token={server.token}", flush=True)
        print(
            f"after review: python -m autograder feedback --out {Path(out_dir)} (or formgrader's Generate "
            "Feedback button) puts your scores and comments on the students' pages",
            flush=True,
        )

        for line in lines(out_dir):
            print(line, flush=True)
        print("  press Ctrl-C to stop", flush=True)
        if open_browser:
            webbrowser.open(server.url)
        while server.proc.poll() is None:
            time.sleep(0.5)
        return server.proc.returncode or 0
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()
