"""LMS exports: Canvas's gradebook import CSV and Moodle's grade import CSV, exact headers and rows,
student ids mapped through a roster, and every unmatched student reported (never silently dropped)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from autograder.cli.main import main
from autograder.core.results import EXECUTED, ItemResult, SubmissionResult
from autograder.reporting.lms import RosterError, read_roster

A16, A03 = "16-asymmetric-pipeline", "03-load-imbalance"


def result(
    student: str,
    assignment: str,
    score: float,
    max_points: float,
    penalty: float = 0.0,
    confirmed: bool = True,
) -> SubmissionResult:
    items = [
        ItemResult("code", "code", max_points - 2, min(score, max_points - 2), EXECUTED),
        ItemResult(
            "q1",
            "written",
            2,
            max(0.0, score - (max_points - 2)),
            "static review",
            confirmed=max(0.0, score - (max_points - 2)) if confirmed else None,
        ),
    ]
    r = SubmissionResult(student, assignment, "nb", items=items, pass_line=max_points * 0.8)
    if penalty:
        r.late_penalty, r.late_note, r.late_days = penalty, "late", 1
    return r


@pytest.fixture
def out(tmp_path) -> Path:
    out = tmp_path / "out"
    for r in (
        result("zhangsan", A16, 10, 10),
        result("lisi", A16, 9, 10, penalty=2),  # late: final 7
        result("zhangsan", A03, 6.5, 7),
        result("stranger", A16, 8, 10),  # graded, not in the roster
        result("wangwu", A03, 5, 7, confirmed=False),
    ):
        r.save(out / "results" / r.student_id / f"{r.assignment_id}.json")
    return out


ROSTER = (
    "student_id,name,canvas_id,sis_user_id,sis_login_id,section,email,idnumber\n"
    'zhangsan,"Zhang, San",1001,S01,zhangsan,Sec A,zs@example.edu,2026001\n'
    'lisi,"Li, Si",1002,S02,lisi,Sec A,ls@example.edu,2026002\n'
    'wangwu,"Wang, Wu",1003,S03,wangwu,Sec B,ww@example.edu,2026003\n'
    'zhaoliu,"Zhao, Liu",1004,S04,zhaoliu,Sec B,,2026004\n'  # no submission, no email
    'evil,=HYPERLINK("x"),1005,S05,evil,Sec B,=cmd|x,2026005\n'
)


def rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def run(out: Path, tmp_path: Path, *extra: str) -> int:
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    return main(["export", "--out", str(out), "--quiet", "--roster", str(roster), *extra])


def test_canvas(out, tmp_path, capsys):
    code = run(out, tmp_path, "--format", "canvas", "--column", f"{A16}=Lesson 16 (4711)")
    err = capsys.readouterr().err
    assert rows(out / "grades-canvas.csv") == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "03-load-imbalance", "Lesson 16 (4711)"],
        ["    Points Possible", "", "", "", "", "7", "10"],
        ["Zhang, San", "1001", "S01", "zhangsan", "Sec A", "6.5", "10"],
        ["Li, Si", "1002", "S02", "lisi", "Sec A", "", "7"],  # final total after the late penalty
        ["Wang, Wu", "1003", "S03", "wangwu", "Sec B", "5", ""],
        ["Zhao, Liu", "1004", "S04", "zhaoliu", "Sec B", "", ""],
        ['\'=HYPERLINK("x")', "1005", "S05", "evil", "Sec B", "", ""],
    ]
    assert code == 3  # a graded student is not in the roster
    assert "UNKNOWN stranger" in err
    assert f"MISSING zhaoliu: no graded submission of {A16}" in err
    assert f"MISSING lisi: no graded submission of {A03}" in err
    assert f"PROVISIONAL wangwu {A03}" in err


def test_moodle(out, tmp_path, capsys):
    code = run(out, tmp_path, "--format", "moodle")
    err = capsys.readouterr().err
    assert rows(out / "grades-moodle.csv") == [
        ["Email address", "03-load-imbalance", "16-asymmetric-pipeline"],
        ["zs@example.edu", "6.5", "10"],
        ["ls@example.edu", "", "7"],
        ["ww@example.edu", "5", ""],
        ["", "", ""],
        ["'=cmd|x", "", ""],
    ]
    assert code == 3 and "UNKNOWN stranger" in err
    assert "NO-ID   zhaoliu: the roster has no email" in err


def test_moodle_by_idnumber_with_every_student_known(out, tmp_path, capsys):
    (out / "results" / "stranger").joinpath(f"{A16}.json").unlink()
    code = run(out, tmp_path, "--format", "moodle", "--moodle-id", "idnumber")
    assert code == 0, capsys.readouterr().err
    assert rows(out / "grades-moodle.csv")[:2] == [
        ["ID number", "03-load-imbalance", "16-asymmetric-pipeline"],
        ["2026001", "6.5", "10"],
    ]


def test_default_csv_is_unchanged(out, tmp_path):
    assert main(["export", "--out", str(out), "--quiet"]) == 0
    assert rows(out / "grades.csv")[0][:2] == ["student_id", "assignment_id"]
    assert not (out / "grades-canvas.csv").exists()


def test_canvas_gradebook_export_is_a_roster(tmp_path):
    path = tmp_path / "canvas-export.csv"
    path.write_text(
        "Student,ID,SIS User ID,SIS Login ID,Section,student_id\n"
        "    Points Possible,,,,,\n"
        '"Zhang, San",1001,S01,zhangsan,Sec A,zhangsan\n',
        encoding="utf-8",
    )
    assert read_roster(path) == [
        {
            "student_id": "zhangsan",
            "name": "Zhang, San",
            "canvas_id": "1001",
            "sis_user_id": "S01",
            "sis_login_id": "zhangsan",
            "section": "Sec A",
        }
    ]


@pytest.mark.parametrize("text", ["name,canvas_id\nZhang,1\n", "student_id,name\na,A\na,B\n"])
def test_bad_rosters_are_refused(tmp_path, text):
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RosterError):
        read_roster(path)
