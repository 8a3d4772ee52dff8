"""`make lab` serves the lessons: start it on a loopback port, fetch a notebook through Jupyter's API, stop."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_lab_serves_the_lesson_notebooks():
    port, token = _free_port(), secrets.token_hex(16)
    args = f"--no-browser --ServerApp.port={port} --IdentityProvider.token={token} --ServerApp.port_retries=0"
    proc = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_ARGS={args}"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ},
    )
    try:
        url = f"http://127.0.0.1:{port}/api/contents/16-asymmetric-pipeline/asymmetric_pipeline.ipynb"
        req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
        deadline, body = time.monotonic() + 90, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(req, timeout=5) as resp:
                    body = json.load(resp)
                break
            except OSError:
                time.sleep(0.5)
        assert body is not None, (
            f"JupyterLab did not serve the notebook: {proc.stderr.read1(4000) if proc.poll() is not None else ''}"
        )
        assert body["type"] == "notebook"
        sources = ["".join(c["source"]) for c in body["content"]["cells"]]
        assert any("AsymmetricPipelineScheduler" in s for s in sources)
        anonymous = urllib.request.Request(url)
        try:
            urllib.request.urlopen(anonymous, timeout=5)
            raise AssertionError("the server must require its token")
        except urllib.error.HTTPError as exc:
            assert exc.code in (401, 403)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.poll() is not None
