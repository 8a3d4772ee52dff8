"""Durability, for real: ``kill -9`` the grade command in the middle of a batch, run it again, and get
exactly the gradebook and grades.csv a clean single run gives: no student lost or duplicated, no
submission modified, no sandbox left behind, and the gradebook never written from inside a sandbox."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autograder.authoring.demo import mistake_code, parse_expectations, reference_code, with_code
from autograder.sandbox.isolation import resolve_isolation
from autograder.sandbox.limits import LIMITS_ENV

ROOT = Path(__file__).resolve().parent.parent
A = "16-asymmetric-pipeline"
RELEASE = ROOT / "lessons" / A / "asymmetric_pipeline.ipynb"
MISTAKES = ROOT / "autograder" / "lessons" / A / "mistakes"
REFERENCE = (
    reference_code(MISTAKES.parent) if MISTAKES.is_dir() else ""
)  # the source notebook's solution cells
SLOW = (
    "\n_Ref = AsymmetricPipelineScheduler\n\n\nclass AsymmetricPipelineScheduler(_Ref):\n"
    "    def simulate_1f1b_execution(self, *args):\n        while True:\n            pass\n"
)

pytestmark = pytest.mark.skipif(not RELEASE.is_file(), reason="release notebook missing (make release)")


def build_class(subs: Path, out: Path) -> dict[str, dict]:
    """~14 submissions: the reference, typical mistakes, three slow ones (so the kill lands mid-batch)
    and one that tries to write the gradebook from inside its sandbox."""
    release = json.loads(RELEASE.read_text(encoding="utf-8"))
    codes: dict[str, str] = {
        "s00-reference": "# expect: simulator=1 min_microbatches=1 solver=2\n" + REFERENCE
    }
    for path in sorted(MISTAKES.glob("*.py"))[:8]:
        codes[f"s-{path.stem.replace('_', '-')}"] = mistake_code(path)
    for i in range(3):
        codes[f"s9{i}-slow"] = "# expect: simulator=0 min_microbatches=1 solver=2\n" + REFERENCE + SLOW
    codes["s50-writes-gradebook"] = (
        "# expect: simulator=1 min_microbatches=1 solver=2\n"
        + REFERENCE
        + f"""
import sqlite3
for target in ({str(out / "gradebook.db")!r}, {str(out / "grades.csv")!r}):
    try:
        db = sqlite3.connect(target)
        db.execute("UPDATE grade SET auto_score = 99")
        db.execute("CREATE TABLE pwned (x)")
        db.commit()
    except Exception:
        pass
"""
    )
    expected = {}
    for student, code in codes.items():
        path = subs / student / A / "asymmetric_pipeline.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(with_code(release, code), ensure_ascii=False), encoding="utf-8")
        expected[student] = parse_expectations(code)
    return expected


def digest(top: Path) -> dict[str, str]:
    return {
        str(p.relative_to(top)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(top.rglob("*"))
        if p.is_file()
    }


def grade_cmd(subs: Path, out: Path) -> list[str]:
    flag = (
        "bwrap" if resolve_isolation("auto")[0] == "bwrap" else "none"
    )  # `grade` never falls back by itself
    return [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        str(subs),
        "--out",
        str(out),
        "--jobs",
        "2",
        "--isolation",
        flag,
    ]


def env(stage_tmp: Path) -> dict[str, str]:
    e = dict(os.environ)
    e[LIMITS_ENV] = json.dumps({"call_timeout": 1.0})
    e["TMPDIR"] = str(stage_tmp)  # the sandboxes' staging dirs (in their bwrap command lines) name this run
    return e


def gradebook_state(db_path: Path) -> dict:
    db = sqlite3.connect(db_path)
    try:
        tables = sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        grades = sorted(
            db.execute(
                "SELECT submitted_assignment.student_id, base_cell.name, grade.auto_score, grade.manual_score, "
                "grade.needs_manual_grade FROM grade JOIN base_cell ON grade.cell_id = base_cell.id "
                "JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id "
                "JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id"
            ).fetchall()
        )
        comments = sorted(
            db.execute(
                "SELECT submitted_assignment.student_id, base_cell.name, comment.auto_comment, comment.manual_comment "
                "FROM comment JOIN base_cell ON comment.cell_id = base_cell.id "
                "JOIN submitted_notebook ON comment.notebook_id = submitted_notebook.id "
                "JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id"
            ).fetchall()
        )
        submissions = sorted(
            db.execute("SELECT student_id, COUNT(*) FROM submitted_assignment GROUP BY student_id")
        )
        students = sorted(r[0] for r in db.execute("SELECT id FROM student"))
    finally:
        db.close()
    return {
        "tables": tables,
        "grades": grades,
        "comments": comments,
        "submissions": submissions,
        "students": students,
    }


def csv_rows(out: Path) -> list[dict]:
    with (out / "grades.csv").open(encoding="utf-8") as fh:
        return sorted(csv.DictReader(fh), key=lambda r: (r["student_id"], r["assignment_id"]))


def sandbox_processes(marker: Path) -> list[str]:
    """This run's sandboxes: bubblewrap processes whose command line names our staging directory."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if str(marker).encode() in cmdline and b"bwrap" in cmdline:
                found.append(name + " " + cmdline.replace(b"\0", b" ").decode(errors="replace")[:200])
    return found


@pytest.mark.slow
def test_kill_9_mid_batch_then_rerun_equals_a_clean_run(tmp_path):
    mode, isolation_text = resolve_isolation("auto")
    subs = tmp_path / "submitted"
    killed_out, clean_out = tmp_path / "killed", tmp_path / "clean"
    expected = build_class(subs, killed_out)
    n = len(expected)
    assert n >= 12
    before = digest(subs)
    stage_tmp = Path(
        tempfile.mkdtemp(prefix="durability-")
    )  # reachable by the sandbox's uid, unlike tmp_path
    stage_tmp.chmod(0o755)

    # 1. start grading, SIGKILL the grade command when about half the results are committed
    proc = subprocess.Popen(
        grade_cmd(subs, killed_out) + ["--quiet"],
        cwd=ROOT,
        env=env(stage_tmp),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 240
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        done = (
            len(list((killed_out / "results").glob("*/*.json"))) if (killed_out / "results").is_dir() else 0
        )
        if done >= n // 2:
            break
        time.sleep(0.02)
    assert proc.poll() is None, (
        "the batch finished before it could be killed: " + proc.stderr.read().decode()[-2000:]
    )
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    partial = len(list((killed_out / "results").glob("*/*.json")))
    assert n // 2 <= partial < n, partial
    time.sleep(0.5)
    assert sandbox_processes(stage_tmp) == [], "a sandbox outlived the killed grader"

    # 2. re-run into the same directory; 3. a clean single run elsewhere (with the CLI's own output)
    rerun = subprocess.run(
        grade_cmd(subs, killed_out) + ["--quiet"],
        cwd=ROOT,
        env=env(stage_tmp),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    clean = subprocess.run(
        grade_cmd(subs, clean_out), cwd=ROOT, env=env(stage_tmp), capture_output=True, text=True, timeout=600
    )
    assert clean.returncode == 0, clean.stderr[-3000:]
    assert f"isolation: {isolation_text}" in clean.stderr

    # same gradebook, same grades.csv, every student exactly once, the expected code scores
    assert csv_rows(killed_out) == csv_rows(clean_out)
    state = gradebook_state(killed_out / "gradebook.db")
    assert state == gradebook_state(clean_out / "gradebook.db")
    assert state["students"] == sorted(expected) and all(count == 1 for _, count in state["submissions"])
    assert "pwned" not in state["tables"]
    rows = {r["student_id"]: r for r in csv_rows(clean_out)}
    assert set(rows) == set(expected)
    for (
        student,
        scores,
    ) in expected.items():  # (the mistakes' own scores are test_lesson16_grading's business)
        if not student.startswith(("s00", "s5", "s9")):
            continue
        for item, score in scores.items():
            assert float(rows[student][item]) == pytest.approx(score), (student, item, rows[student])

    # submissions never modified; no sandbox left
    assert digest(subs) == before
    time.sleep(0.3)
    assert sandbox_processes(stage_tmp) == []
    shutil.rmtree(stage_tmp, ignore_errors=True)
