"""docs/ARCHITECTURE.md, "Add a lesson", followed literally on a temporary copy of the repository.

The example lesson (``tests/fixtures/new_lesson/``: one exercise, one written question, a mistakes
catalogue) is added to the copy as its own two folders and nothing else; then the guide's commands run
with this environment's interpreter: ``make release``, ``make goldens``, the generic lesson tests, and
``python -m autograder grade`` on a small class. ``git status`` must show changes only in the lesson's own
folders and the generated ``lessons/<id>/``. Last, a graded cell added to the source under an existing
OUT gives a clear error, not a traceback.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "new_lesson"
LESSON = "90-tiny-lesson"
OWN = (f"solutions/{LESSON}/", f"autograder/lessons/{LESSON}/", f"lessons/{LESSON}/")
SKIP = {".git", ".venv", "build", "dist", ".pytest_cache", ".ruff_cache", ".hypothesis", "__pycache__"}

pytestmark = pytest.mark.slow


def _run(args: list[str], cwd: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    venv = Path(sys.executable).parent.parent  # this environment: no new venv in the copy
    env = dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("UPDATE_GOLDENS", None)
    if args[0] == "make":  # the copy's Makefile, this environment's interpreter, no reinstall
        args = [*args, f"VENV={venv}", "-o", str(venv / ".installed")]
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, (proc.args, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("course") / "repo"
    shutil.copytree(ROOT, repo, ignore=lambda d, names: [n for n in names if n in SKIP])
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "copy"]):
        _ok(subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *argv[1:]], cwd=repo))
    # step 1 of the guide: the lesson's own folders, nothing else
    shutil.copytree(FIXTURE / "solutions" / LESSON, repo / "solutions" / LESSON)
    shutil.copytree(FIXTURE / "autograder" / "lessons" / LESSON, repo / "autograder" / "lessons" / LESSON)
    return repo


def _changed(repo: Path) -> list[str]:
    out = _ok(
        subprocess.run(["git", "status", "--porcelain", "-uall"], cwd=repo, capture_output=True, text=True)
    )
    return sorted(line[3:] for line in out.splitlines())


def test_a_new_lesson_is_its_own_folders(copy, tmp_path):
    _ok(_run(["make", "release", f"LESSON={LESSON}"], copy))
    release = json.loads((copy / "lessons" / LESSON / "tiny.ipynb").read_text(encoding="utf-8"))
    assert "raise NotImplementedError()" in json.dumps(release)
    _ok(_run(["make", "check-release"], copy))
    _ok(_run(["make", "goldens"], copy))
    assert (copy / "autograder" / "lessons" / LESSON / "golden" / "demo_grades.csv").is_file()
    # the generic lesson tests, for the new lesson (each test's id names its lesson)
    generic = ["tests/test_lessons.py", "tests/test_scoring_table.py", "tests/test_glossary.py"]
    out = _ok(
        _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *generic, "-k", LESSON], copy)
    )
    assert " passed" in out and "failed" not in out, out[-2000:]
    # grade a small class: the reference notebook and the untouched release
    subs = tmp_path / "submitted"
    for student, nb in (
        ("ref", copy / "solutions" / LESSON / "tiny.ipynb"),
        ("stub", copy / "lessons" / LESSON / "tiny.ipynb"),
    ):
        (subs / student / LESSON).mkdir(parents=True)
        shutil.copy(nb, subs / student / LESSON / "tiny.ipynb")
    out_dir = tmp_path / "out"
    grade = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        str(subs),
        "--out",
        str(out_dir),
        "--isolation",
        "bwrap" if shutil.which("bwrap") else "none",
    ]
    _ok(_run(grade, copy))
    with (out_dir / "grades" / f"{LESSON}.csv").open(newline="", encoding="utf-8") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    assert (rows["ref"]["makespan"], rows["ref"]["q1"], rows["ref"]["passed"]) == ("2", "1", "true")
    assert (rows["stub"]["makespan"], rows["stub"]["q1"], rows["stub"]["passed"]) == ("0", "0", "false")
    # nothing changed outside the lesson's own folders and its generated release
    changed = _changed(copy)
    assert changed and all(path.startswith(OWN) for path in changed), changed

    # a graded cell added under an existing OUT: a clear error naming the way out, no traceback
    path = copy / "solutions" / LESSON / "tiny.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    extra = json.loads(json.dumps(next(c for c in nb["cells"] if c["id"] == "makespan")))
    extra["id"] = extra["metadata"]["nbgrader"]["grade_id"] = "makespan_again"
    nb["cells"].insert(nb["cells"].index(next(c for c in nb["cells"] if c["id"] == "makespan")) + 1, extra)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    again = _run(grade, copy)
    assert again.returncode != 0 and "Traceback" not in again.stderr, again.stderr[-3000:]
    assert "new --out directory" in again.stderr and "makespan_again" in again.stderr, again.stderr[-2000:]
