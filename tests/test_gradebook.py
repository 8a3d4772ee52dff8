"""Grading results in nbgrader's gradebook: scores, suggestions in formgrader's comment box, the instructor's
review through formgrader's REST API, export, and re-runs that never undo the review."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import signal
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from nbgrader.api import Comment, Grade, Gradebook, Student, SubmittedAssignment, SubmittedNotebook

from autograder.classroom import export as export_mod
from autograder.core.results import STATIC_REVIEW, ItemResult, SubmissionResult
from autograder.core.results import TestOutcome as Outcome
from autograder.gradebook import coursedir, database, reading, recording, structure
from autograder.review import formgrader

REPO = Path(__file__).resolve().parents[1]
FIXTURE_SOURCE = Path(__file__).parent / "fixtures" / "gradebook" / "source"
ASSIGNMENT, NOTEBOOK = "gb-demo", "tiny"
SOURCE_NB = FIXTURE_SOURCE / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
STUDENTS = {  # student -> (simulator score, solver score, written suggestions)
    "alice": (2.0, 2.0, (2.0, 1.0, 1.0)),
    "bob": (1.5, 0.0, (1.0, 0.0, 2.0)),
    "carol": (0.0, 2.0, (0.0, 0.0, 0.0)),
}


def make_result(student: str, tag: str = "v1") -> SubmissionResult:
    sim, sol, sugg = STUDENTS.get(student, (1.0, 1.0, (1.0, 1.0, 1.0)))
    items = []
    for iid, score in (("simulator", sim), ("solver", sol)):
        tests = [
            Outcome(
                name=f"test_{iid}_core",
                item=iid,
                weight=3,
                passed=score >= 1.5,
                message="总时间与独立推导不符：请检查等待关系",
            ),
            Outcome(
                name=f"test_{iid}_edge",
                item=iid,
                weight=1,
                passed=score == 2.0,
                edge=True,
                message="负的耗时应当抛出 ValueError",
            ),
        ]
        items.append(ItemResult(id=iid, kind="code", points=2, score=score, mode="executed", tests=tests))
    for n, s in enumerate(sugg, start=1):
        msg = f"[{tag}] Suggested {s:g}/2 (static review) for q{n}: evidence «阻塞发送导致下游等待»"
        items.append(
            ItemResult(
                id=f"q{n}",
                kind="written",
                points=2,
                score=s,
                mode=STATIC_REVIEW,
                suggestion=s,
                message=msg,
                evidence=[{"criterion": "backpressure", "met": s > 0, "quote": "阻塞", "note": ""}],
            )
        )
    return SubmissionResult(
        student_id=student,
        assignment_id=ASSIGNMENT,
        notebook=NOTEBOOK,
        items=items,
        pass_line=8,
        submission_sha256="x",
    )


def write_submission(root: Path, student: str, answers: dict[str, str] | None = None) -> Path:
    nb = json.loads(SOURCE_NB.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if gid in ("q1", "q2", "q3"):
            cell["source"] = (answers or {}).get(gid, f"{student}'s answer to {gid}: 阻塞发送导致下游等待。")
    path = root / "submitted" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def cell_text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def row_counts(url: str) -> dict[str, int]:
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        return {
            m.__name__: gb.db.query(m).count()
            for m in (Student, SubmittedAssignment, SubmittedNotebook, Grade, Comment)
        }


def read_csv(path: Path) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return {r["student_id"]: r for r in csv.DictReader(fh)}


def record_and_save(out: Path, sub_root: Path, student: str, tag: str = "v1", answers=None):
    result = make_result(student, tag)
    path = write_submission(sub_root, student, answers)
    recording.record(out, result, path)
    result.save(out / "results" / student / f"{ASSIGNMENT}.json")
    return result, path


@pytest.fixture()
def course(tmp_path):
    out = coursedir.prepare_course_dir(tmp_path / "out", FIXTURE_SOURCE)
    url = coursedir.db_url_for(out)
    structure.ensure_assignment(url, ASSIGNMENT, SOURCE_NB)
    sub_root = tmp_path / "class"
    paths = {}
    for student in STUDENTS:
        _, paths[student] = record_and_save(out, sub_root, student)
    return {"out": out, "url": url, "sub_root": sub_root, "paths": paths}


def test_course_dir_and_assignment_structure(course):
    out, url = course["out"], course["url"]
    cfg = (out / "nbgrader_config.py").read_text(encoding="utf-8")
    assert f"c.CourseDirectory.root = {str(out)!r}" in cfg
    assert f"c.CourseDirectory.source_directory = {str(FIXTURE_SOURCE.resolve())!r}" in cfg
    assert coursedir.source_directory(out) == FIXTURE_SOURCE.resolve()
    before = row_counts(url)
    structure.ensure_assignment(url, ASSIGNMENT, SOURCE_NB)  # idempotent, also with submissions present
    assert row_counts(url) == before
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        nb = gb.find_notebook(NOTEBOOK, ASSIGNMENT)
        assert sorted(c.name for c in nb.grade_cells) == ["q1", "q2", "q3", "simulator", "solver"]
        assert sorted(c.name for c in nb.solution_cells) == ["exercise", "q1", "q2", "q3"]
        assert nb.max_score == 10 and nb.max_code_score == 4 and nb.max_written_score == 6
        # the stored source is the release's (solution cleared), as generate_assignment's SaveCells stores it
        ex = gb.find_source_cell("exercise", NOTEBOOK, ASSIGNMENT)
        assert "raise NotImplementedError()" in ex.source and "BEGIN SOLUTION" not in ex.source
        assert gb.find_source_cell("simulator", NOTEBOOK, ASSIGNMENT).checksum
    # like SaveCells: no adding/removing cells once there are submissions
    changed = json.loads(SOURCE_NB.read_text(encoding="utf-8"))
    changed["cells"] = [c for c in changed["cells"] if c["metadata"]["nbgrader"]["grade_id"] != "q3"]
    alt = out.parent / "alt" / f"{NOTEBOOK}.ipynb"
    alt.parent.mkdir()
    alt.write_text(json.dumps(changed), encoding="utf-8")
    with pytest.raises(structure.SourceChanged, match="new --out directory"):
        structure.ensure_assignment(url, ASSIGNMENT, alt)
    assert row_counts(url) == before


def test_recorded_scores_and_suggestions(course):
    out, url = course["out"], course["url"]
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        assert sorted(s.id for s in gb.students) == sorted(STUDENTS)
        for student, (sim, sol, _sugg) in STUDENTS.items():
            for iid, score in (("simulator", sim), ("solver", sol)):
                g = gb.find_grade(iid, NOTEBOOK, ASSIGNMENT, student)
                assert g.auto_score == score and g.manual_score is None and not g.needs_manual_grade
            for n in (1, 2, 3):
                g = gb.find_grade(f"q{n}", NOTEBOOK, ASSIGNMENT, student)
                # the suggestion is the auto score (formgrader's placeholder, nbgrader's provisional
                # total); the cell still waits for the instructor
                assert g.auto_score == _sugg[n - 1] and g.needs_manual_grade and g.manual_score is None
                c = gb.find_comment(f"q{n}", NOTEBOOK, ASSIGNMENT, student)
                assert c.auto_comment.startswith("[v1] Suggested") and c.manual_comment == c.auto_comment
                assert c.comment == c.auto_comment
            sub = gb.find_submission(ASSIGNMENT, student)
            assert sub.needs_manual_grade and sub.code_score == sim + sol
            # the hidden-test summary sits on the check cell: names and messages
            code_comments = [c for c in sub.notebooks[0].comments if c.cell.name == "simulator"]
            assert len(code_comments) == 1
            assert "test_simulator_core" in code_comments[0].auto_comment
        bob = [
            c for c in gb.find_submission(ASSIGNMENT, "bob").notebooks[0].comments if c.cell.name == "solver"
        ]
        assert "FAIL test_solver_core" in bob[0].auto_comment and "请检查等待关系" in bob[0].auto_comment
    for student, path in course["paths"].items():
        copy = out / "autograded" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
        # the review copy: the submission's cells, built inert (autograder.grading.review_copy), never a byte copy
        submitted, shown = (json.loads(p.read_text(encoding="utf-8")) for p in (path, copy))
        code = [cell_text(c) for c in submitted["cells"] if c["cell_type"] == "code"]
        assert [cell_text(c) for c in shown["cells"] if c["cell_type"] == "code"] == code
        assert all(c.get("outputs", []) == [] for c in shown["cells"])
        assert sha(out / "submitted" / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb") == sha(path)
    assert reading.confirmed_scores(url, ASSIGNMENT, "alice") == {"q1": None, "q2": None, "q3": None}


def test_unreadable_submission_gets_a_placeholder_notebook(course):
    out = course["out"]
    bad = course["sub_root"] / "submitted" / "dave" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b'{"cells": [ truncated')
    result = SubmissionResult(
        "dave",
        ASSIGNMENT,
        NOTEBOOK,
        status="unreadable notebook",
        items=[
            ItemResult("simulator", "code", 2, 0.0, "executed"),
            ItemResult("q1", "written", 2, 0.0, STATIC_REVIEW, suggestion=0.0),
        ],
    )
    recording.record(out, result, bad)
    assert bad.read_bytes() == b'{"cells": [ truncated'
    placeholder = json.loads((out / "autograded" / "dave" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text())
    assert "unreadable notebook" in "".join(placeholder["cells"][0]["source"])


def killed_before_commit(out: Path, sub_root: Path, student: str) -> None:
    """Record ``student`` in a forked child that is SIGKILLed inside the transaction, just before COMMIT."""
    ready = out.parent / f"in-transaction-{student}"
    pid = os.fork()
    if pid == 0:  # child: nbgrader is already imported, so this costs milliseconds, not a new interpreter
        try:

            def hang():
                ready.write_text("x")
                time.sleep(60)

            database._before_commit = hang
            record_and_save(out, sub_root, student, tag="v2")
        finally:
            os._exit(1)
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                pytest.fail("the child exited before reaching the commit")
            time.sleep(0.02)
        assert ready.exists(), "the child never reached the commit"
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_kill_9_inside_the_transaction_keeps_the_previous_state(course):
    out, url, sub_root = course["out"], course["url"], course["sub_root"]
    before = row_counts(url)
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        old = gb.find_comment("q1", NOTEBOOK, ASSIGNMENT, "bob").auto_comment
    killed_before_commit(out, sub_root, "bob")  # an update of an existing submission
    killed_before_commit(out, sub_root, "erin")  # a new student: student, submission, grade, comment rows
    assert row_counts(url) == before
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        assert gb.find_comment("q1", NOTEBOOK, ASSIGNMENT, "bob").auto_comment == old
    assert not (out / "autograded" / "erin").exists()
    record_and_save(out, sub_root, "bob", tag="v2")  # the database is not left locked
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        assert gb.find_comment("q1", NOTEBOOK, ASSIGNMENT, "bob").auto_comment.startswith("[v2]")
    assert row_counts(url) == before


def test_formgrader_review_export_and_rerun(course):
    out, url, sub_root = course["out"], course["url"], course["sub_root"]
    path = export_mod.export(out)
    rows = read_csv(path)
    assert list(rows["alice"])[:7] == ["student_id", "assignment_id", "simulator", "solver", "q1", "q2", "q3"]
    assert rows["alice"]["q2"] == "1" and rows["alice"]["total"] == "8" and rows["alice"]["max_total"] == "10"
    assert rows["alice"]["provisional"] == "true" and rows["alice"]["passed"] == "true"
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        ids = {q: gb.find_grade(q, NOTEBOOK, ASSIGNMENT, "alice").id for q in ("q1", "q2", "q3")}
        cid = gb.find_comment("q1", NOTEBOOK, ASSIGNMENT, "alice").id
        snb_id = gb.find_submission_notebook(NOTEBOOK, ASSIGNMENT, "alice").id

    server = formgrader.start(out, app="lab")
    try:
        server.wait_ready(timeout=60)
        status, page = server.request("GET", f"/formgrader/submissions/{snb_id}/")
        assert status == 200 and 'id="q1-comment"' in page and 'id="q1"' in page
        status, comments = server.request("GET", f"/formgrader/api/comments?submission_id={snb_id}")
        assert status == 200
        q1c = next(c for c in comments if c["name"] == "q1")
        status, info = server.request("GET", f"/formgrader/api/assignment/{ASSIGNMENT}")
        assert status == 200 and info["num_submissions"] == 3
        assert q1c["manual_comment"].startswith("[v1] Suggested")  # what the comment box shows

        # the instructor: q1 -> 1.5 with their own comment
        status, body = server.request(
            "PUT", f"/formgrader/api/grade/{ids['q1']}", {"manual_score": 1.5, "extra_credit": None}
        )
        assert status == 200 and body["manual_score"] == 1.5 and not body["needs_manual_grade"]
        status, _ = server.request("PUT", f"/formgrader/api/comment/{cid}", {"manual_comment": "Good, but…"})
        assert status == 200
        rows = read_csv(export_mod.export(out))
        assert rows["alice"]["q1"] == "1.5" and rows["alice"]["total"] == "7.5"
        assert rows["alice"]["provisional"] == "true" and rows["alice"]["passed"] == "false"
        stored = SubmissionResult.load(out / "results" / "alice" / f"{ASSIGNMENT}.json")
        assert stored.item("q1").confirmed == 1.5 and stored.item("q2").confirmed is None

        for q, score in (("q2", 2), ("q3", 0)):
            status, _ = server.request(
                "PUT", f"/formgrader/api/grade/{ids[q]}", {"manual_score": score, "extra_credit": None}
            )
            assert status == 200
        rows = read_csv(export_mod.export(out))
        assert (rows["alice"]["q1"], rows["alice"]["q2"], rows["alice"]["q3"]) == ("1.5", "2", "0")
        assert rows["alice"]["provisional"] == "false" and rows["alice"]["total"] == "7.5"
        assert rows["bob"]["provisional"] == "true"
        assert reading.confirmed_scores(url, ASSIGNMENT, "alice") == {"q1": 1.5, "q2": 2.0, "q3": 0.0}

        # re-grade the class while formgrader is open: the review survives, nothing duplicates
        before = row_counts(url)
        for student in STUDENTS:
            result, _ = record_and_save(out, sub_root, student, tag="v2")
        assert row_counts(url) == before
        assert result.item("q1").confirmed is None  # carol: still unconfirmed
    finally:
        server.stop()
    assert server.proc.poll() is not None

    with Gradebook(url, coursedir.COURSE_ID) as gb:
        g = gb.find_grade("q1", NOTEBOOK, ASSIGNMENT, "alice")
        assert g.manual_score == 1.5 and not g.needs_manual_grade and g.score == 1.5  # the instructor's
        c = gb.find_comment("q1", NOTEBOOK, ASSIGNMENT, "alice")
        assert c.manual_comment == "Good, but…" and c.auto_comment.startswith("[v2]")
        # confirmed with our text: the box keeps the text the instructor confirmed against
        assert gb.find_comment("q2", NOTEBOOK, ASSIGNMENT, "alice").manual_comment.startswith("[v1]")
        # unconfirmed: the box follows the new suggestion
        assert gb.find_comment("q1", NOTEBOOK, ASSIGNMENT, "bob").manual_comment.startswith("[v2]")
        assert gb.find_grade("q1", NOTEBOOK, ASSIGNMENT, "bob").needs_manual_grade
    stored = SubmissionResult.load(out / "results" / "alice" / f"{ASSIGNMENT}.json")
    assert stored.item("q1").confirmed == 1.5 and stored.item("q1").score == 1.5  # record() applied it
    assert read_csv(export_mod.export(out))["alice"]["provisional"] == "false"

    # alice rewrites her Q1 answer: the old score stays visible but the cell waits for review again
    record_and_save(out, sub_root, "alice", tag="v3", answers={"q1": "A completely new answer."})
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        g = gb.find_grade("q1", NOTEBOOK, ASSIGNMENT, "alice")
        assert g.manual_score == 1.5 and g.needs_manual_grade
        assert not gb.find_grade("q2", NOTEBOOK, ASSIGNMENT, "alice").needs_manual_grade
        assert gb.find_comment("q1", NOTEBOOK, ASSIGNMENT, "alice").manual_comment == "Good, but…"
    rows = read_csv(export_mod.export(out))
    assert rows["alice"]["q1"] == "2" and rows["alice"]["provisional"] == "true"


def test_write_grades_csv_several_assignments(tmp_path):
    a = make_result("alice")
    b = SubmissionResult(
        "alice",
        "other",
        "nb",
        status="timeout",
        pass_line=1,
        items=[
            ItemResult("solver", "code", 2, 0.0, "executed"),
            ItemResult("extra", "code", 1, 1.0, "executed"),
        ],
    )
    rows = list(csv.reader(export_mod.write_grades_csv(tmp_path, [b, a]).open(encoding="utf-8")))
    assert rows[0] == [
        "student_id",
        "assignment_id",
        "simulator",
        "solver",
        "q1",
        "q2",
        "q3",
        "extra",
        "code_total",
        "extra_credit",
        "total",
        "max_total",
        "passed",
        "provisional",
        "status",
    ]
    assert rows[1][:2] == ["alice", "gb-demo"] and rows[2][:2] == ["alice", "other"]
    assert rows[2][2] == "" and rows[2][-7:] == ["1", "0", "1", "3", "true", "false", "timeout"]


LESSON_16 = REPO / "solutions" / "16-asymmetric-pipeline" / "asymmetric_pipeline.ipynb"


@pytest.mark.skipif(not LESSON_16.exists(), reason="lesson 16 source notebook not written yet")
def test_lesson_16_source_registers_its_rubric_items(tmp_path):
    out = coursedir.prepare_course_dir(tmp_path / "out", REPO)
    assert coursedir.source_directory(out) == REPO / "solutions"
    url = coursedir.db_url_for(out)
    structure.ensure_assignment(url, "16-asymmetric-pipeline", LESSON_16)
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        nb = gb.find_notebook("asymmetric_pipeline", "16-asymmetric-pipeline")
        cells = {c.name: (c.cell_type, c.max_score) for c in nb.grade_cells}
        written = {c.name for c in nb.solution_cells}
    assert {k: v for k, v in cells.items() if k in ("simulator", "min_microbatches", "solver")} == {
        "simulator": ("code", 1.0),
        "min_microbatches": ("code", 1.0),
        "solver": ("code", 2.0),
    }
    assert all(cells[q] == ("markdown", 2.0) and q in written for q in ("q1", "q2", "q3"))


def gradebook_rows(url: str) -> list[tuple]:
    """Every grade and comment of the gradebook, by student and cell name (no row ids)."""
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        rows = []
        for sub in gb.assignment_submissions(ASSIGNMENT):
            for nb in sub.notebooks:
                for g in nb.grades:
                    rows.append(
                        (
                            "grade",
                            sub.student.id,
                            g.cell.name,
                            g.auto_score,
                            g.manual_score,
                            g.needs_manual_grade,
                        )
                    )
                for c in nb.comments:
                    rows.append(("comment", sub.student.id, c.cell.name, c.auto_comment, c.manual_comment))
        return sorted(rows, key=repr)


@contextmanager
def count_statements():
    """Collect the SQL statements sent to any database while inside (an executemany counts once)."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    calls: list[str] = []

    def on_execute(conn, cursor, statement, *rest):
        calls.append(statement)

    event.listen(Engine, "before_cursor_execute", on_execute)
    try:
        yield calls
    finally:
        event.remove(Engine, "before_cursor_execute", on_execute)


def test_a_class_is_recorded_in_bulk_with_the_same_rows_as_one_by_one(tmp_path):
    """record_many: one write transaction and a number of statements that does not grow with the class
    (the nbgrader ORM path issued ~25 queries and flushes per student), and exactly the rows that
    recording each student alone gives; a re-run (updates only) is bulk too."""
    students = [f"s{i:03d}" for i in range(40)]
    paths = {s: write_submission(tmp_path / "class", s) for s in students}
    outs = {}
    for name in ("few", "many", "single"):
        outs[name] = coursedir.prepare_course_dir(tmp_path / name, FIXTURE_SOURCE)
        structure.ensure_assignment(coursedir.db_url_for(outs[name]), ASSIGNMENT, SOURCE_NB)
    for s in students:
        recording.record(outs["single"], make_result(s), paths[s])
    counts = {}
    for name, group in (("few", students[:5]), ("many", students)):
        with count_statements() as calls:
            confirmed = recording.record_many(outs[name], [(make_result(s), paths[s]) for s in group])
        counts[name] = len(calls)
        assert confirmed == [{"q1": None, "q2": None, "q3": None}] * len(group)
        assert sum(1 for c in calls if c.strip().upper().startswith("BEGIN")) == 2  # a read, then ONE write
        with count_statements() as calls:  # the same class again: updates only
            recording.record_many(outs[name], [(make_result(s, tag="v2"), paths[s]) for s in group])
        counts[name + " again"] = len(calls)
    assert counts["many"] == counts["few"] and counts["many again"] == counts["few again"], counts
    url = coursedir.db_url_for(outs["many"])
    for s in students:
        recording.record(outs["single"], make_result(s, tag="v2"), paths[s])
    assert gradebook_rows(url) == gradebook_rows(coursedir.db_url_for(outs["single"]))
    assert row_counts(url) == row_counts(coursedir.db_url_for(outs["single"]))
    with pytest.raises(ValueError, match="more than once"):
        recording.record_many(outs["many"], [(make_result("s000"), paths["s000"])] * 2)
