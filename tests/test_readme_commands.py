"""Every command in README.md's ``bash`` blocks runs as typed, on a copy of the repository (its tracked
files, as a fresh clone has them, with this checkout's environment linked in), against the demo class,
without an activated virtual environment. Templates are written ``<...>`` in the README and filled in
here (``<submitted>``: the demo class; ``<downloads>``: a Canvas zip made from it; ``<course.yaml>``:
the README's own course file example; ``<K>``: each shard). Servers (``make lab``, ``make formgrader``)
are started, checked and stopped. ``make test`` is the one command not run: it is this suite."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from autograder.sandbox.isolation import resolve_isolation

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
pytestmark = pytest.mark.slow

#: template -> what it stands for here (a list: the command runs once per value)
TEMPLATES = {
    "<submitted>": ["build/demo/sample-class"],
    "<downloads>": ["downloads"],
    "<course.yaml>": ["course.yaml"],
    "<K>": ["1", "2"],
}
NOT_RUN = {"make test": "the test-suite itself (CI runs it)"}
SERVERS = {"make lab": r"http://127\.0\.0\.1:\d+/lab", "make formgrader": r"press Ctrl-C to stop"}


def readme_commands(text: str) -> list[str]:
    """The command lines of the README's bash blocks, comments removed, in order."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            command = re.split(r"\s+#\s", " " + line, maxsplit=1)[0].strip()
            if command:
                commands.append(command)
    return commands


def expand(command: str) -> list[str]:
    found = set(re.findall(r"<[^<>\s]+>", command))
    unknown = found - set(TEMPLATES)
    assert not unknown, f"README command {command!r} uses templates this test does not know: {unknown}"
    runs = [command]
    for template in sorted(found):
        runs = [r.replace(template, value) for r in runs for value in TEMPLATES[template]]
    return runs


def test_readme_commands_are_found_and_templates_marked():
    commands = readme_commands(README.read_text(encoding="utf-8"))
    assert "make demo" in commands and "make lab" in commands
    assert not [c for c in commands if re.search(r"(^|\s)python3? -m autograder", c)], (
        "`python -m autograder` needs an activated environment: write `.venv/bin/python -m autograder`"
    )
    assert not [
        c for c in commands if "path/to" in c or re.search(r"\bOUT_[KN1]\b|\bSUBMISSIONS\b(?!=)", c)
    ], "write templates as <...>"


def _copy_of_repository(dest: Path) -> Path:
    """The tracked files (as on disk) and this checkout's environment, linked (the sandbox binds it as
    it is). The copies are dated before the environment's stamp, so make never reinstalls it (which
    would point its editable install at the copy)."""
    stamp = (ROOT / ".venv" / ".installed").stat().st_mtime
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
            when = min(src.stat().st_mtime, stamp - 1)
            os.utime(dest / rel, (when, when))
    (dest / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    return dest


def _env() -> dict:
    """No activated environment: the venv's bin is not on PATH, VIRTUAL_ENV unset; no browser opens."""
    venv_bin = str(ROOT / ".venv" / "bin")
    path = ":".join(p for p in os.environ.get("PATH", "").split(":") if p and not p.startswith(venv_bin))
    env = {
        k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "JUPYTER_CONFIG_PATH")
    }
    return {**env, "PATH": path or "/usr/local/bin:/usr/bin:/bin", "BROWSER": "true"}


def _canvas_zip(repo: Path) -> None:
    """A Canvas "Download submissions" zip of five demo-class notebooks of lesson 16."""
    found = sorted(
        (repo / "build/demo/sample-class").glob("*/16-asymmetric-pipeline/asymmetric_pipeline.ipynb")
    )
    assert found, "make demo built no lesson-16 submissions"
    (repo / "downloads").mkdir(exist_ok=True)
    with zipfile.ZipFile(repo / "downloads" / "canvas.zip", "w") as zf:
        for i, path in enumerate(found[:5]):
            name = (
                f"{path.parent.parent.name.replace('-', '')}_{1000 + i}_{2000 + i}_asymmetric_pipeline.ipynb"
            )
            zf.writestr(zipfile.ZipInfo(name, date_time=(2026, 12, 7, 21, 10, 0)), path.read_bytes())


def _course_file(repo: Path) -> None:
    """The README's course file example, as an instructor would save it."""
    block = re.search(r"```yaml\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block, "the README's course file example is gone"
    (repo / "course.yaml").write_text(re.sub(r"^  ", "", block.group(1), flags=re.M), encoding="utf-8")


def _server(command: str, ready: str, repo: Path, env: dict) -> str:
    """Start a server command, wait for its ready line, stop it (its whole process group)."""
    import threading

    proc = subprocess.Popen(
        ["bash", "-c", command],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        text=True,
    )
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 180
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if re.search(ready, "".join(seen)):
                return "".join(seen)
            time.sleep(0.3)
        raise AssertionError(f"{command!r} did not come up:\n{''.join(seen)[-3000:]}")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        reader.join(timeout=10)


def test_every_readme_command_runs_as_typed(tmp_path):
    if resolve_isolation("auto")[0] != "bwrap":
        pytest.skip("make grade needs bubblewrap (.ci/run installs it)")
    repo = _copy_of_repository(tmp_path / "clone")
    env = _env()
    ran = []
    for typed in readme_commands(README.read_text(encoding="utf-8")):
        if typed in NOT_RUN:
            continue
        if typed.startswith(".venv/bin/python -m autograder collect"):
            _canvas_zip(repo)
        if "<course.yaml>" in typed:
            _course_file(repo)
        for command in expand(typed):
            ready = next((r for name, r in SERVERS.items() if f"{command} ".startswith(f"{name} ")), None)
            if ready is not None:
                out = _server(command, ready, repo, env)
                ran.append((command, 0, out))
                continue
            run = subprocess.run(
                ["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=1200
            )
            out = run.stdout + run.stderr
            if command.startswith("make check NB="):
                # the working copy make lab made holds the release's stubs: the self-check says so (exit 1)
                assert "自检 (selfcheck)" in out and "结论：请先修正" in out, out[-3000:]
            else:
                assert run.returncode == 0, f"{command!r} failed ({run.returncode}):\n{out[-4000:]}"
            ran.append((command, run.returncode, out))
    commands = [c for c, _, _ in ran]
    served = {c: out for c, _, out in ran if any(f"{c} ".startswith(f"{name} ") for name in SERVERS)}
    assert set(served) == {"make lab", "make formgrader OUT=build/grading"}, set(served)
    assert "answer groups:" in served["make formgrader OUT=build/grading"]
    # the demo class's unreadable notebooks are not in formgrader: its start-up lines say which
    assert "not in formgrader (" in served["make formgrader OUT=build/grading"]
    assert (repo / "my-work" / "16-asymmetric-pipeline" / "asymmetric_pipeline.ipynb").is_file()  # make lab
    assert (repo / "build" / "grading" / "grades.csv").is_file()  # make grade / export
    assert (repo / "submitted" / "roster.csv").is_file() and (
        repo / "build" / "lms" / "grades-canvas.csv"
    ).is_file()
    assert (repo / "build" / "merged" / "grades.csv").is_file()
    assert any(c.startswith("make gradescope") for c in commands)
    canvas = (repo / "build" / "lms" / "grades-canvas.csv").read_text(encoding="utf-8").splitlines()
    assert len(canvas) == 2 + 5 and all(",100" in line for line in canvas[2:])  # Canvas user ids
