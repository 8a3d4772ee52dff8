"""Submission times read in the course's zone: nbgrader's exchange format with a zone abbreviation
(``2026-12-07 21:10:00.000000 CST`` under ``c.Exchange.timezone = "Asia/Shanghai"``), times without an
offset, a daylight-saving change (Europe/Berlin), the grace period's edges, a refused abbreviation,
``collect``'s zip times with ``--timezone``, and how a time is shown (course zone and UTC) on the
feedback page, in grades.csv and in the gradebook."""

from __future__ import annotations

import csv
import json
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from nbgrader.exchange.abc.exchange import Exchange
from nbgrader.utils import parse_utc

from autograder.classroom.batch import apply_late_policy, grade_class
from autograder.classroom.discovery import Job
from autograder.core.registry import lessons
from autograder.core.results import SubmissionResult
from autograder.core.timestamps import TimestampError, parse_timestamp, read_submission_time
from autograder.grading.assignment import load_assignment
from autograder.grading.submission import shutdown_workers
from autograder.intake.collect import collect
from autograder.intake.course import apply_policy, load_course

A = "16-asymmetric-pipeline"
NB = "asymmetric_pipeline.ipynb"
SHANGHAI, BERLIN = ZoneInfo("Asia/Shanghai"), ZoneInfo("Europe/Berlin")


def nbgrader_stamp(local: datetime) -> str:
    """What nbgrader's exchange writes to timestamp.txt: ``datetime.now(gettz(timezone))`` formatted with
    its ``timestamp_format`` trait (``%Y-%m-%d %H:%M:%S.%f %Z``; nbgrader/exchange/abc/exchange.py)."""
    return local.strftime(Exchange.timestamp_format.default_value)


def course(tmp_path: Path, zone: str, due: str, grace: str = "15 minutes") -> Path:
    path = tmp_path / "course.yaml"
    path.write_text(
        f"timezone: {zone}\nassignments:\n  {A}:\n    due: {due}\n    grace: {grace}\n    per_day: 10%\n",
        encoding="utf-8",
    )
    return path


def test_nbgrader_cst_is_the_course_zone_not_utc():
    stamp = nbgrader_stamp(datetime(2026, 12, 7, 21, 10, tzinfo=SHANGHAI))
    assert stamp == "2026-12-07 21:10:00.000000 CST"
    # the bug: nbgrader's own parse_utc cannot resolve "CST" and takes the time as UTC (8 hours late)
    assert parse_utc(stamp) == datetime(2026, 12, 7, 21, 10)
    assert parse_timestamp(stamp, SHANGHAI) == datetime(2026, 12, 7, 13, 10, tzinfo=UTC)
    # the same letters in a course in Chicago are US Central time, which is what that course's exchange wrote
    assert parse_timestamp(stamp, ZoneInfo("America/Chicago")) == datetime(2026, 12, 8, 3, 10, tzinfo=UTC)


def test_an_abbreviation_the_course_zone_does_not_have_is_refused_not_guessed():
    stamp = "2026-12-07 21:10:00.000000 CST"
    for zone in (UTC, BERLIN):
        with pytest.raises(TimestampError, match=r"'CST'.*not guessed.*timezone:"):
            parse_timestamp(stamp, zone)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-07 21:10:00", datetime(2026, 12, 7, 13, 10, tzinfo=UTC)),  # no offset: the course's zone
        ("2026-12-07T21:10", datetime(2026, 12, 7, 13, 10, tzinfo=UTC)),
        ("2026-12-07 21:10:00.000000 ", datetime(2026, 12, 7, 13, 10, tzinfo=UTC)),  # %Z of a naive now()
        ("2026-12-07 13:10:00.000000 UTC", datetime(2026, 12, 7, 13, 10, tzinfo=UTC)),  # collect's format
        ("2026-12-07 13:10:00 GMT", datetime(2026, 12, 7, 13, 10, tzinfo=UTC)),
        ("2026-12-07T13:10:00Z", datetime(2026, 12, 7, 13, 10, tzinfo=UTC)),
        ("2026-12-07T13:10:00+00:00", datetime(2026, 12, 7, 13, 10, tzinfo=UTC)),
        ("2026-12-07 07:10:00.000000 -0600", datetime(2026, 12, 7, 13, 10, tzinfo=UTC)),  # %z
        ("2026-12-07 22:10:00 Asia/Tokyo", datetime(2026, 12, 7, 13, 10, tzinfo=UTC)),
    ],
)
def test_formats_and_naive_times(text, expected):
    assert parse_timestamp(text, SHANGHAI) == expected


@pytest.mark.parametrize("bad", ["next week", "2026-13-07 21:10:00 CST", "", "2026-12-07 21:10:00 UTC UTC"])
def test_unreadable_times_are_refused(bad):
    with pytest.raises(TimestampError):
        parse_timestamp(bad, SHANGHAI)


def test_daylight_saving_change_europe_berlin():
    """2026-10-25: clocks go back at 03:00 CEST to 02:00 CET, so 02:40 happens twice; nbgrader's %Z
    says which one (CEST = UTC+2, CET = UTC+1); a time without a zone is the earlier one. On 2026-03-29
    02:00 CET jumps to 03:00 CEST."""
    first = nbgrader_stamp(datetime(2026, 10, 25, 2, 40, tzinfo=BERLIN, fold=0))
    second = nbgrader_stamp(datetime(2026, 10, 25, 2, 40, tzinfo=BERLIN, fold=1))
    assert (first, second) == ("2026-10-25 02:40:00.000000 CEST", "2026-10-25 02:40:00.000000 CET")
    assert parse_timestamp(first, BERLIN) == datetime(2026, 10, 25, 0, 40, tzinfo=UTC)
    assert parse_timestamp(second, BERLIN) == datetime(2026, 10, 25, 1, 40, tzinfo=UTC)
    assert parse_timestamp("2026-10-25 02:40", BERLIN) == datetime(2026, 10, 25, 0, 40, tzinfo=UTC)
    # summer and winter time on either side of the spring change
    assert parse_timestamp("2026-03-29 01:59:00.000000 CET", BERLIN) == datetime(
        2026, 3, 29, 0, 59, tzinfo=UTC
    )
    assert parse_timestamp("2026-03-29 03:01:00.000000 CEST", BERLIN) == datetime(
        2026, 3, 29, 1, 1, tzinfo=UTC
    )
    with pytest.raises(TimestampError):  # CEST in January is not what Berlin's clocks said
        parse_timestamp("2026-01-10 12:00:00.000000 CEST", BERLIN)


def test_late_policy_across_the_repeated_hour(tmp_path):
    """Due at 02:30 on the night clocks go back (the first 02:30, CEST), 15 minutes of grace: the first
    02:40 is inside the grace period, the second one (an hour later, CET) is late."""
    policy = load_course(course(tmp_path, "Europe/Berlin", "2026-10-25 02:30"))[A]
    assert policy.due == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    inside = apply_policy(policy, parse_timestamp("2026-10-25 02:40:00.000000 CEST", BERLIN), 9, 10)
    late = apply_policy(policy, parse_timestamp("2026-10-25 02:40:00.000000 CET", BERLIN), 9, 10)
    assert (inside.days, inside.penalty) == (0, 0.0) and "grace" in inside.note
    assert (late.days, late.penalty) == (1, 1.0)
    assert "2026-10-25 02:40:00 CET (Europe/Berlin) = 2026-10-25 01:40:00 UTC" in late.note


@pytest.mark.parametrize(
    ("local", "days"),
    [
        (datetime(2026, 12, 7, 21, 10), 0),  # 2 h 49 min early (the student)
        (datetime(2026, 12, 7, 23, 59), 0),  # exactly at the due time
        (datetime(2026, 12, 8, 0, 14), 0),  # the last whole minute of the grace period
        (datetime(2026, 12, 8, 0, 14, 0, 1), 1),  # one microsecond past it: late, counted from the due time
        (datetime(2026, 12, 8, 23, 59), 1),  # exactly one day after the due time
        (datetime(2026, 12, 8, 23, 59, 1), 2),  # a second into the second day
    ],
)
def test_grace_edges_with_nbgrader_stamps(tmp_path, local, days):
    policy = load_course(course(tmp_path, "Asia/Shanghai", "2026-12-07 23:59"))[A]
    stamp = nbgrader_stamp(local.replace(tzinfo=SHANGHAI))
    assert apply_policy(policy, parse_timestamp(stamp, SHANGHAI), 9, 10).days == days
    # the same moment written without a zone means the same thing in this course
    naive = local.strftime("%Y-%m-%d %H:%M:%S.%f")
    assert apply_policy(policy, parse_timestamp(naive, SHANGHAI), 9, 10).days == days


def test_grade_reads_stamps_in_the_course_zone_and_refuses_the_rest(tmp_path, capsys):
    """The batch's own path (``apply_late_policy``): the course's zone for CST and naive times; with a
    course in UTC, the CST stamp is refused: no penalty, the note says why, a warning on stderr."""
    policies = load_course(course(tmp_path, "Asia/Shanghai", "2026-12-07 23:59"))
    folder = tmp_path / "s" / A
    folder.mkdir(parents=True)
    (folder / NB).write_text("{}", encoding="utf-8")
    (folder / "timestamp.txt").write_text(nbgrader_stamp(datetime(2026, 12, 7, 21, 10, tzinfo=SHANGHAI)))
    job = Job("s", A, folder / NB)
    res = apply_late_policy(SubmissionResult("s", A, "asymmetric_pipeline", pass_line=8), job, policies)
    assert res.submitted_at == "2026-12-07T13:10:00+00:00" and res.late_days == 0
    assert (
        "提交于 (submitted) 2026-12-07 21:10:00 CST (Asia/Shanghai) = 2026-12-07 13:10:00 UTC"
        in res.late_note
    )
    assert read_submission_time(folder, SHANGHAI) == datetime(2026, 12, 7, 13, 10, tzinfo=UTC)

    in_utc = load_course(course(tmp_path, "UTC", "2026-12-07 23:59"))
    res = apply_late_policy(SubmissionResult("s", A, "asymmetric_pipeline", pass_line=8), job, in_utc)
    assert res.submitted_at == "" and res.late_penalty == 0
    assert res.late_note.startswith("提交时间无法确定 (submission time refused:") and "'CST'" in res.late_note
    assert "warning: s: timestamp.txt: '2026-12-07 21:10:00.000000 CST'" in capsys.readouterr().err
    # export re-applies the course file after review (course.reapply): the refusal stays on the page
    from autograder.intake.course import apply_to_result, refusal

    note = res.late_note
    assert refusal(note).startswith("timestamp.txt: '2026-12-07 21:10:00.000000 CST'")
    assert apply_to_result(res, in_utc, None, False, refusal(note)).late_note == note
    assert refusal("按时提交 (on time)：...") == ""


def test_collect_reads_zip_times_in_the_given_zone(tmp_path):
    z = tmp_path / "canvas.zip"
    with zipfile.ZipFile(z, "w") as zf:
        info = zipfile.ZipInfo(f"zhangsan_12345_67890_{NB}", date_time=(2026, 12, 7, 21, 10, 0))
        zf.writestr(info, json.dumps({"nbformat": 4, "cells": []}))
    log = collect([z], tmp_path / "utc", A)
    assert log[0].startswith("note  zip entry times carry no time zone: read as UTC")
    assert read_submission_time(tmp_path / "utc" / "12345" / A) == datetime(2026, 12, 7, 21, 10, tzinfo=UTC)
    log = collect([z], tmp_path / "sh", A, zone="Asia/Shanghai")
    assert "read as Asia/Shanghai" in log[0]
    assert any("OK    12345" in line and "2026-12-07 21:10:00 CST" in line for line in log)
    assert read_submission_time(tmp_path / "sh" / "12345" / A) == datetime(2026, 12, 7, 13, 10, tzinfo=UTC)
    with pytest.raises(SystemExit, match="unknown time zone"):
        collect([z], tmp_path / "x", A, zone="Mars/Olympus")


def test_feedback_grades_csv_and_gradebook_show_the_course_zone(tmp_path):
    """End to end: the issue's student (nbgrader's CST stamp, 2 h 49 min early) and one inside the
    grace period are on time; both times are shown in Asia/Shanghai and UTC; formgrader's gradebook
    holds the instant in UTC and OUT/submitted's timestamp.txt says UTC (nbgrader re-reads it)."""
    a = load_assignment(lessons()[A].directory)
    subs = tmp_path / "submitted"
    stamps = {
        "early": nbgrader_stamp(datetime(2026, 12, 7, 21, 10, tzinfo=SHANGHAI)),
        "grace": "2026-12-08 00:10:00",  # no offset: Asia/Shanghai
    }
    for student, stamp in stamps.items():
        folder = subs / student / A
        folder.mkdir(parents=True)
        (folder / NB).write_bytes(a.source.read_bytes())
        (folder / "timestamp.txt").write_text(stamp + "\n", encoding="utf-8")
    out = tmp_path / "out"
    try:
        results = grade_class(
            subs, out, course=course(tmp_path, "Asia/Shanghai", "2026-12-07 23:59"), quiet=True, jobs=1
        )
    finally:
        shutdown_workers()
    assert {r.student_id: (r.late_days, r.late_penalty) for r in results} == {
        "early": (0, 0.0),
        "grace": (0, 0.0),
    }
    page = (out / "feedback" / "early" / f"{A}.html").read_text(encoding="utf-8")
    assert "2026-12-07 21:10:00 CST (Asia/Shanghai) = 2026-12-07 13:10:00 UTC" in page
    assert "按时提交 (on time)" in page
    assert "宽限期内" in (out / "feedback" / "grace" / f"{A}.html").read_text(encoding="utf-8")
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {row["student_id"]: row for row in csv.DictReader(fh)}
    assert (rows["early"]["submitted_at"], rows["early"]["submitted_local"]) == (
        "2026-12-07T13:10:00+00:00",
        "2026-12-07T21:10:00+08:00",
    )
    assert rows["grace"]["submitted_local"] == "2026-12-08T00:10:00+08:00"

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        assert gb.find_submission(A, "early").timestamp == datetime(2026, 12, 7, 13, 10)
    mirrored = (out / "submitted" / "early" / A / "timestamp.txt").read_text(encoding="utf-8").strip()
    assert mirrored == "2026-12-07 13:10:00.000000 UTC"
    assert parse_utc(mirrored) + timedelta(0) == datetime(2026, 12, 7, 13, 10)
