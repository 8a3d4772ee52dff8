"""Due dates and late policy (course.yaml): the rule on time / within grace / late / capped / very late,
submission times from collect (zip entry time, Canvas's LATE_ marker, an instructor's CSV), and `grade`
recording them: nbgrader's submission timestamp, grades.csv's raw total, penalty and final total, and a
feedback page that says how the penalty was computed."""

from __future__ import annotations

import csv
import json
import zipfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.classroom.batch import grade_class
from autograder.core.registry import lessons
from autograder.core.timestamps import read_submission_time, write_submission_time
from autograder.grading.assignment import load_assignment
from autograder.grading.submission import shutdown_workers
from autograder.intake.collect import apply_times, collect
from autograder.intake.course import LATE_MARKER_FILE, CourseError, apply_policy, load_course

A = "16-asymmetric-pipeline"
NB = "asymmetric_pipeline.ipynb"
CST = timezone(timedelta(hours=8))
COURSE = """\
timezone: Asia/Shanghai
assignments:
  16-asymmetric-pipeline:
    due: 2026-12-07 23:59
    grace: 15 minutes
    per_day: 10%
    cap: 50%
    zero_after: 2026-12-14 23:59
"""
#: (student, submission time in UTC+8, days late, penalty of a 9/10 submission, final total)
CASES = [
    ("ontime", datetime(2026, 12, 7, 23, 50, tzinfo=CST), 0, 0.0, 9.0),
    ("grace", datetime(2026, 12, 8, 0, 10, tzinfo=CST), 0, 0.0, 9.0),
    ("late", datetime(2026, 12, 9, 10, 0, tzinfo=CST), 2, 2.0, 7.0),  # 1 d 10 h: 2 started days x 10% x 10
    ("capped", datetime(2026, 12, 13, 12, 0, tzinfo=CST), 6, 5.0, 4.0),  # 6 x 1 = 6, capped at 50% = 5
    ("verylate", datetime(2026, 12, 15, 0, 1, tzinfo=CST), 8, 9.0, 0.0),  # after zero_after: final 0
]


@pytest.fixture
def course(tmp_path) -> Path:
    path = tmp_path / "course.yaml"
    path.write_text(COURSE, encoding="utf-8")
    return path


@pytest.mark.parametrize(("student", "when", "days", "penalty", "final"), CASES)
def test_rule(course, student, when, days, penalty, final):
    late = apply_policy(load_course(course)[A], when, 9.0, 10.0)
    assert (late.days, late.penalty, round(9.0 - late.penalty, 4)) == (days, penalty, final)
    assert "截止 (due) 2026-12-07 23:59:00" in late.note  # shown in the course's zone


def test_rule_notes_say_how():
    policy = load_course_text(COURSE)[A]
    assert "按时提交 (on time)" in apply_policy(policy, CASES[0][1], 9, 10).note
    assert "grace" in apply_policy(policy, CASES[1][1], 9, 10).note
    note = apply_policy(policy, CASES[2][1], 9, 10).note
    assert "迟交 (late) 2 天" in note and "10%" in note and "9 − 2 = 7" in note
    assert "封顶 (cap) 50%" in apply_policy(policy, CASES[3][1], 9, 10).note
    assert "总分记 0" in apply_policy(policy, CASES[4][1], 9, 10).note
    assert "no submission time" in apply_policy(policy, None, 9, 10).note


def test_penalty_never_exceeds_the_raw_total():
    late = apply_policy(load_course_text(COURSE)[A], CASES[3][1], 1.5, 10.0)
    assert late.penalty == 1.5


def load_course_text(text: str):
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "course.yaml"
        path.write_text(text, encoding="utf-8")
        return load_course(path)


@pytest.mark.parametrize(
    "bad",
    [
        "assignments: {x: {grace: 1 day}}",
        "assignments: {x: {due: tomorrow}}",
        "assignments: {x: {due: 2026-12-07 23:59, grace: a while}}",
        "assignments: {x: {due: 2026-12-07 23:59, per_day: ten}}",
        "assignments: {x: {due: 2026-12-07 23:59, zero_after: 2026-12-01 00:00}}",
        "assignments: {x: {due: 2026-12-07 23:59, penalty: 1}}",
        "timezone: Mars/Olympus\nassignments: {}",
    ],
)
def test_bad_course_files_are_refused(bad):
    with pytest.raises(CourseError):
        load_course_text(bad)


def test_timestamp_roundtrip_in_nbgrader_format(tmp_path):
    when = datetime(2026, 12, 9, 10, 0, tzinfo=CST)
    write_submission_time(tmp_path, when)
    assert (tmp_path / "timestamp.txt").read_text().strip() == "2026-12-09 02:00:00.000000 UTC"
    assert read_submission_time(tmp_path) == when


def test_collect_keeps_zip_time_and_canvas_late_marker_and_times_csv(tmp_path):
    z = tmp_path / "canvas.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for name, stamp in (
            (f"ontime_1_2_{NB}", (2026, 12, 7, 12, 0, 0)),
            (f"tardy_LATE_3_4_{NB}", (2026, 12, 9, 12, 0, 0)),
            (f"nozip_5_6_{NB}", (2026, 12, 7, 12, 0, 0)),
        ):
            zf.writestr(zipfile.ZipInfo(name, date_time=stamp), json.dumps({"nbformat": 4, "cells": []}))
    dest = tmp_path / "submitted"
    log = collect([z], dest, A, ids="login")
    assert any("tardy" in line and "LATE" in line for line in log)
    assert (dest / "tardy" / A / LATE_MARKER_FILE).is_file()
    assert not (dest / "ontime" / A / LATE_MARKER_FILE).exists()
    zip_time = datetime(2026, 12, 9, 12, 0, tzinfo=UTC)  # zip times: collect --timezone, default UTC
    assert read_submission_time(dest / "tardy" / A) == zip_time

    times = tmp_path / "times.csv"
    times.write_text(
        "student_id,assignment_id,submitted_at\n"
        "ontime,16-asymmetric-pipeline,2026-12-07 23:50\n"
        "ghost,16-asymmetric-pipeline,2026-12-07 23:50\n"
        "ontime,03-load-imbalance,2026-12-20 10:00\n"
        "tardy,16-asymmetric-pipeline,next week\n",
        encoding="utf-8",
    )
    (dest / "nozip" / A / "timestamp.txt").unlink()
    log = apply_times(times, dest, A, "Asia/Shanghai")
    assert read_submission_time(dest / "ontime" / A) == datetime(2026, 12, 7, 23, 50, tzinfo=CST)
    assert any(line.startswith("UNKNOWN") and "ghost" in line for line in log)  # reported, not dropped
    assert any(line.startswith("BAD") for line in log)
    assert any(line.startswith("NOTIME nozip") for line in log)
    assert read_submission_time(dest / "tardy" / A) == zip_time  # a bad row changes nothing


def test_grade_records_times_penalties_and_explains_them(tmp_path, course):
    a = load_assignment(lessons()[A].directory)
    subs = tmp_path / "submitted"
    for student, when, *_ in CASES:
        folder = subs / student / A
        folder.mkdir(parents=True)
        (folder / NB).write_bytes(a.source.read_bytes())
        write_submission_time(folder, when)
    (subs / "notime" / A).mkdir(parents=True)
    (subs / "notime" / A / NB).write_bytes(a.source.read_bytes())
    out = tmp_path / "out"
    try:
        results = grade_class(subs, out, course=course, quiet=True, jobs=1)
    finally:
        shutdown_workers()
    raw = {r.student_id: r.total for r in results}
    # the reference earns every point before the penalty: 10, plus the challenge's 2 points of extra credit
    assert set(raw.values()) == {12.0}, raw

    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        head = reader.fieldnames
        rows = {row["student_id"]: row for row in reader}
    i = head.index("total")
    assert head[i : i + 7] == [
        "total",
        "submitted_at",
        "submitted_local",  # the same instant in the course's zone (Asia/Shanghai)
        "late_days",
        "late_penalty",
        "final_total",
        "max_total",
    ]
    expected = {
        "ontime": (0, 0, 12, True),
        "grace": (0, 0, 12, True),
        "late": (2, 2, 10, True),
        "capped": (6, 5, 7, False),
        "verylate": (8, 12, 0, False),
        "notime": (0, 0, 12, True),
    }
    for student, (days, penalty, final, passed) in expected.items():
        row = rows[student]
        assert (int(row["late_days"]), float(row["late_penalty"]), float(row["final_total"])) == (
            days,
            penalty,
            final,
        ), row
        assert float(row["total"]) == 12 and row["passed"] == ("true" if passed else "false")
    assert (
        rows["late"]["submitted_at"] == "2026-12-09T02:00:00+00:00" and rows["notime"]["submitted_at"] == ""
    )
    assert rows["late"]["submitted_local"] == "2026-12-09T10:00:00+08:00"

    page = (out / "feedback" / "late" / f"{A}.html").read_text(encoding="utf-8")
    assert "迟交 (late) 2 天" in page and "最终 / final 10" in page
    assert "no submission time" in (out / "feedback" / "notime" / f"{A}.html").read_text(encoding="utf-8")

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        stamp = gb.find_submission(A, "late").timestamp
        due = gb.find_assignment(A).duedate
        penalties = {
            s: gb.find_submission_notebook("asymmetric_pipeline", A, s).late_submission_penalty
            for s in expected
        }
    assert stamp.replace(tzinfo=UTC) == datetime(2026, 12, 9, 2, 0, tzinfo=UTC)
    assert due == datetime(2026, 12, 7, 15, 59)  # nbgrader's duedate, naive UTC
    assert penalties == {
        "ontime": None,
        "grace": None,
        "late": 2.0,
        "capped": 5.0,
        "verylate": 12.0,  # zero after a date takes the whole total: 10 + 2 extra credit
        "notime": None,
    }
    assert (out / "course.yaml").read_text(encoding="utf-8") == COURSE  # kept for later runs and export

    # export re-applies the kept course file (after formgrader changed scores) to results and gradebook
    from autograder.intake.course import reapply

    (out / "course.yaml").write_text(COURSE.replace("per_day: 10%", "per_day: 20%"), encoding="utf-8")
    late = next(r for r in results if r.student_id == "late")
    reapply(out, [late])
    assert (late.late_penalty, late.final_total) == (4.0, 8.0)  # 12 (with extra credit) - 2 days x 20% x 10
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        assert gb.find_submission_notebook("asymmetric_pipeline", A, "late").late_submission_penalty == 4.0


def test_no_course_file_keeps_grades_csv_as_it_was(tmp_path):
    from autograder.classroom.export import FIXED_HEAD, FIXED_TAIL, write_grades_csv
    from autograder.core.results import SubmissionResult

    path = write_grades_csv(tmp_path, [SubmissionResult("s", A, "nb")])
    assert path.read_text(encoding="utf-8").splitlines()[0] == ",".join(FIXED_HEAD + FIXED_TAIL)


def test_canvas_late_marker_that_disagrees_is_flagged():
    from autograder.core.results import SubmissionResult
    from autograder.intake.course import MARKER_NOTE, apply_to_result

    policies = load_course_text(COURSE)
    on_time = apply_to_result(SubmissionResult("s", A, "nb"), policies, CASES[0][1], lms_marker=True)
    assert on_time.late_note.endswith(MARKER_NOTE) and on_time.late_penalty == 0
    late = apply_to_result(SubmissionResult("s", A, "nb"), policies, CASES[2][1], lms_marker=True)
    assert MARKER_NOTE not in late.late_note  # the time agrees with Canvas: nothing to flag
    other = apply_to_result(SubmissionResult("s", "03-load-imbalance", "nb"), policies, CASES[4][1])
    assert (other.late_note, other.late_penalty, other.submitted_at) == ("", 0.0, "2026-12-14T16:01:00+00:00")


def test_sharded_grading_and_merge_keep_the_late_policy(tmp_path, course):
    from autograder.classroom.sharding import parse_shard
    from autograder.classroom.shards import merge

    a = load_assignment(lessons()[A].directory)
    subs = tmp_path / "submitted"
    for student, when, *_ in CASES:
        folder = subs / student / A
        folder.mkdir(parents=True)
        (folder / NB).write_bytes(a.source.read_bytes())
        write_submission_time(folder, when)
    try:
        for k in (1, 2):
            grade_class(
                subs, tmp_path / f"out{k}", course=course, quiet=True, jobs=1, shard=parse_shard(f"{k}/2")
            )
    finally:
        shutdown_workers()
    merged = {
        r.student_id: r for r in merge([tmp_path / "out1", tmp_path / "out2"], tmp_path / "out", quiet=True)
    }
    assert {s: merged[s].late_penalty for s, *_ in CASES} == {
        s: 12.0 if s == "verylate" else p  # the reference's whole total (10 + 2 extra credit) is taken
        for s, _, _, p, _ in CASES
    }
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{tmp_path / 'out' / 'gradebook.db'}") as gb:
        assert gb.find_submission_notebook("asymmetric_pipeline", A, "capped").late_submission_penalty == 5.0
    with open(tmp_path / "out" / "grades.csv", newline="", encoding="utf-8") as fh:
        assert "final_total" in next(csv.reader(fh))
