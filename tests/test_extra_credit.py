"""Extra credit, end to end in the engine's data: rubric validation, totals, grades.csv, feedback, and the
gradebook written the nbgrader way (the item's check cell has 0 points; the score is ``Grade.extra_credit``).

How extra credit counts (README, "Extra credit"): ``total`` includes it and may exceed ``max_total``;
``max_total`` sums the regular items only; ``passed`` is ``total >= pass_line``.
"""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.classroom import export as export_mod
from autograder.core.results import STATIC_REVIEW, ItemResult, SubmissionResult
from autograder.core.rubric import RubricError
from autograder.gradebook import coursedir, recording
from autograder.grading.assignment import Assignment
from autograder.reporting import feedback

FIXTURE_SOURCE = Path(__file__).parent / "fixtures" / "gradebook" / "source"
ASSIGNMENT, NOTEBOOK = "gb-demo", "tiny"
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")  # item ids become marks


def _tiny(tmp_path: Path, items: str, pass_line: float = 1) -> Path:
    d = tmp_path / "tiny"
    d.mkdir()
    (d / "rubric.yaml").write_text(
        f"assignment: tiny\nnotebook: tiny\npass_line: {pass_line}\nitems:\n{items}", encoding="utf-8"
    )
    (d / "test_tiny.py").write_text(
        "from autograder.testing import item\n"
        "@item('a')\ndef test_a(sub): pass\n"
        "@item('bonus')\ndef test_bonus(sub): pass\n",
        encoding="utf-8",
    )
    release = tmp_path / "tiny.ipynb"
    release.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return d


@pytest.mark.parametrize(
    ("items", "pass_line", "match"),
    [
        (
            "  - {id: a, kind: code, points: 2}\n  - {id: bonus, kind: code, points: 2, extra_credit: yes!}\n",
            1,
            "extra_credit must be true or false",
        ),
        (
            "  - {id: a, kind: code, points: 2}\n  - {id: bonus, kind: code, points: 2, extra_credit: true}\n",
            3,
            "extra credit not counted",
        ),
    ],
)
def test_rubric_validates_extra_credit(tmp_path, items, pass_line, match):
    d = _tiny(tmp_path, items, pass_line)
    with pytest.raises(RubricError, match=match):
        Assignment.load(d, release=tmp_path / "tiny.ipynb")


def test_rubric_accepts_extra_credit_and_rejects_it_on_written_items(tmp_path):
    ok = _tiny(
        tmp_path,
        "  - {id: a, kind: code, points: 2}\n  - {id: bonus, kind: code, points: 2, extra_credit: true}\n",
        2,
    )
    a = Assignment.load(ok, release=tmp_path / "tiny.ipynb")
    assert [it.extra_credit for it in a.items] == [False, True]
    (ok / "rubric.yaml").write_text(
        "assignment: tiny\nnotebook: tiny\npass_line: 1\nitems:\n  - {id: a, kind: code, points: 2}\n"
        "  - {id: bonus, kind: written, points: 2, extra_credit: true, criteria: []}\n",
        encoding="utf-8",
    )
    with pytest.raises(RubricError, match="only code items"):
        Assignment.load(ok, release=tmp_path / "tiny.ipynb")


def result(student: str, sim: float, bonus: float, written: float) -> SubmissionResult:
    return SubmissionResult(
        student_id=student,
        assignment_id=ASSIGNMENT,
        notebook=NOTEBOOK,
        pass_line=8,
        items=[
            ItemResult("simulator", "code", 2, sim, "executed"),
            ItemResult("solver", "code", 2, 2.0, "executed"),
            ItemResult("challenge", "code", 2, bonus, "executed", extra_credit=True),
            *(
                ItemResult(f"q{n}", "written", 2, written, STATIC_REVIEW, suggestion=written)
                for n in (1, 2, 3)
            ),
        ],
    )


def test_totals_count_extra_credit_on_top_of_the_maximum():
    top = result("ana", 2.0, 2.0, 2.0)
    assert (top.code_total, top.extra_credit, top.total, top.max_total, top.max_extra_credit) == (
        4.0,
        2.0,
        12.0,
        10.0,
        2.0,
    )
    assert top.passed
    # 6 regular points + 2 extra credit reach the pass line of 8; without the extra credit they do not
    rescued, short = result("ben", 0.0, 2.0, 4 / 3), result("cai", 0.0, 0.0, 4 / 3)
    assert (rescued.total, rescued.max_total, rescued.passed) == (8.0, 10.0, True)
    assert (short.total, short.passed) == (6.0, False)
    # results written before extra credit existed still load (the field defaults to False)
    old = top.to_dict()
    for it in old["items"]:
        del it["extra_credit"]
    assert SubmissionResult.from_dict(old).max_total == 12.0
    assert SubmissionResult.from_dict(top.to_dict()).max_total == 10.0


def test_grades_csv_has_the_item_and_an_extra_credit_column(tmp_path):
    export_mod.write_grades_csv(tmp_path, [result("ana", 2.0, 1.5, 2.0), result("ben", 0.0, 2.0, 4 / 3)])
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    ana, ben = rows["ana"], rows["ben"]
    assert list(ana)[-7:] == [
        "code_total",
        "extra_credit",
        "total",
        "max_total",
        "passed",
        "provisional",
        "status",
    ]
    assert (ana["challenge"], ana["code_total"], ana["extra_credit"], ana["total"], ana["max_total"]) == (
        "1.5",
        "4",
        "1.5",
        "11.5",
        "10",
    )
    assert (ben["extra_credit"], ben["total"], ben["passed"]) == ("2", "8", "true")


def test_feedback_page_says_how_extra_credit_counts():
    page = feedback.render(result("ana", 2.0, 1.5, 2.0))
    assert "11.5 / 10" in page and "附加分" in page and "extra credit counts towards the total" in page
    assert "challenge — 1.5 / 2" in page
    plain = feedback.render(
        SubmissionResult("x", ASSIGNMENT, NOTEBOOK, items=[ItemResult("a", "code", 2, 1, "executed")])
    )
    assert "附加分" not in plain


@pytest.fixture()
def course_with_challenge(tmp_path):
    """The gradebook fixture's source notebook plus a 0-point check cell ``challenge`` (extra credit)."""
    nb = json.loads((FIXTURE_SOURCE / ASSIGNMENT / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    check = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "simulator")
    bonus = copy.deepcopy(check)
    bonus.pop("id", None)
    bonus["metadata"]["nbgrader"].update(grade_id="challenge", points=0)
    bonus["metadata"]["nbgrader"].pop("checksum", None)
    nb["cells"].append(bonus)
    source = tmp_path / "source"
    (source / ASSIGNMENT).mkdir(parents=True)
    src_nb = source / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
    src_nb.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    out = coursedir.prepare_course_dir(tmp_path / "out", source)
    submitted = tmp_path / "class" / "submitted"
    paths = {}
    for student in ("ana", "ben"):
        paths[student] = submitted / student / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
        paths[student].parent.mkdir(parents=True)
        paths[student].write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return out, paths


def test_gradebook_records_extra_credit_the_nbgrader_way(course_with_challenge):
    out, paths = course_with_challenge
    url = coursedir.db_url_for(out)
    for r in (result("ana", 2.0, 1.5, 2.0), result("ben", 0.0, 2.0, 4 / 3)):
        recording.record(out, r, paths[r.student_id])
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        nb = gb.find_notebook(NOTEBOOK, ASSIGNMENT)
        assert nb.max_score == 10, "the extra-credit cell adds nothing to nbgrader's max_score"
        g = gb.find_grade("challenge", NOTEBOOK, ASSIGNMENT, "ana")
        assert (g.max_score, g.auto_score, g.extra_credit, g.score, g.needs_manual_grade) == (
            0,
            0,
            1.5,
            1.5,
            False,
        )
        comments = gb.find_submission(ASSIGNMENT, "ana").notebooks[0].comments
        comments = [c for c in comments if c.cell.name == "challenge"]
        assert len(comments) == 1 and "extra credit 1.5 / 2" in comments[0].auto_comment
        assert gb.find_grade("simulator", NOTEBOOK, ASSIGNMENT, "ana").extra_credit is None
        # nbgrader's own totals: code score includes the extra credit, the maximum does not
        sub = gb.find_submission(ASSIGNMENT, "ben")
        assert (sub.code_score, sub.max_score) == (4.0, 10)
    # the instructor overrides the challenge in formgrader; a changed test score asks for a re-check
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        g = gb.find_grade("challenge", NOTEBOOK, ASSIGNMENT, "ana")
        g.manual_score = 0.0
        gb.db.commit()
    recording.record(out, result("ana", 2.0, 1.5, 2.0), paths["ana"])
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        assert not gb.find_grade("challenge", NOTEBOOK, ASSIGNMENT, "ana").needs_manual_grade
    recording.record(out, result("ana", 2.0, 0.5, 2.0), paths["ana"])
    with Gradebook(url, coursedir.COURSE_ID) as gb:
        g = gb.find_grade("challenge", NOTEBOOK, ASSIGNMENT, "ana")
        assert (g.extra_credit, g.needs_manual_grade) == (0.5, True)
