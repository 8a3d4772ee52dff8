"""A folder whose notebook is not named as the rubric says: its only notebook is graded, with a note (on
the feedback page and under the class table); none or several give a status that says which, in the
class table (in full), on formgrader's start-up lines, on the answer groups page and in the LMS
export (blank and listed, never a silent 0)."""

from __future__ import annotations

import csv
import shutil

import pytest

from autograder.classroom import ungraded
from autograder.classroom.batch import grade_class
from autograder.classroom.discovery import discover
from autograder.cli.main import main
from autograder.core.registry import lessons
from autograder.grading.assignment import load_assignment
from autograder.grading.submission import shutdown_workers
from autograder.reporting.tables import class_table
from autograder.review.group_page import render_item
from autograder.review.groups import review_items

A = "16-asymmetric-pipeline"
NB = "asymmetric_pipeline.ipynb"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("misnamed")
    source = load_assignment(lessons()[A].directory).source
    subs = tmp / "submitted"
    layout = {
        "renamed": ["asymmetric_pipeline (1).ipynb"],  # the browser's name for a second download
        "two": ["Copy of asymmetric_pipeline.ipynb", "scratch.ipynb"],
        "none": [],
        "right": [NB],
    }
    for student, names in layout.items():
        folder = subs / student / A
        folder.mkdir(parents=True)
        for name in names:
            shutil.copyfile(source, folder / name)
        if not names:
            (folder / "notes.txt").write_text("no notebook here", encoding="utf-8")
    out = tmp / "out"
    try:
        results = {r.student_id: r for r in grade_class(subs, out, quiet=True, jobs=1, isolation="auto")}
    finally:
        shutdown_workers()
    return subs, out, results


def test_the_only_notebook_is_graded_with_a_note(graded):
    subs, out, results = graded
    r = results["renamed"]
    assert (r.status, r.graded, r.total) == ("ok", True, results["right"].total)
    assert "asymmetric_pipeline (1).ipynb" in r.messages[0] and f"as {NB}" in r.messages[0]
    page = (out / "feedback" / "renamed" / f"{A}.html").read_text(encoding="utf-8")
    assert "评分的是文件夹里唯一的 notebook" in page
    # formgrader sees it under the rubric's name, like everyone else
    assert (out / "submitted" / "renamed" / A / NB).is_file()
    assert (out / "autograded" / "renamed" / A / NB).is_file()
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        # the same gradebook score as the rightly named copy (code and extra credit; written items await review)
        assert gb.find_submission(A, "renamed").score == gb.find_submission(A, "right").score > 0
    table = class_table(list(results.values()), out)
    assert (
        f"renamed: graded the only notebook in the folder, 'asymmetric_pipeline (1).ipynb', as {NB}" in table
    )


def test_none_or_several_say_which_everywhere(graded, tmp_path, capsys):
    subs, out, results = graded
    two, none = results["two"], results["none"]
    assert two.status == (
        f"2 notebooks, none named {NB}: 'Copy of asymmetric_pipeline.ipynb', 'scratch.ipynb'"
    )
    assert none.status == f"no notebook: expected {NB} in {A}/"
    assert not two.graded and not none.graded and two.total == 0
    # the class table cuts its status column; the full status follows the table
    table = class_table(list(results.values()), out)
    assert f"  two: {two.status}" in table
    # formgrader lists only what is in the gradebook: its start-up lines name the rest
    assert ungraded.lines(out) == [
        "not in formgrader (2 submissions not graded):",
        f"  none {A}: {none.status}",
        f"  two {A}: {two.status}",
    ]
    # the answer groups page says why they are not grouped (not "not readable")
    review = review_items(out, A, "q1")[0]
    assert f"two ({two.status})" in review.unreadable and f"none ({none.status})" in review.unreadable
    html = render_item(review)
    assert "Not grouped (no answers to read)" in html and "scratch.ipynb" in html
    assert "2 answers →\n 1 group + 0 outliers</h1>" in html  # "1 group", not "1 groups"
    # the LMS export leaves their cell blank (the LMS keeps its grade) and lists them on stderr
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student_id,name,canvas_id\nrenamed,R,1\ntwo,T,2\nnone,N,3\nright,G,4\n", encoding="utf-8"
    )
    capsys.readouterr()
    code = main(["export", "--out", str(out), "--format", "canvas", "--roster", str(roster)])
    err = capsys.readouterr().err
    assert code == 0
    with open(out / "grades-canvas.csv", newline="", encoding="utf-8") as fh:
        rows = {row[1]: row[-1] for row in list(csv.reader(fh))[2:]}
    assert rows["2"] == "" and rows["3"] == ""
    assert rows["1"] == rows["4"] != ""
    assert f"UNGRADED two {A}: could not be graded ({two.status}); cell left blank, not 0" in err
    assert f"UNGRADED none {A}" in err


def test_renaming_it_later_drops_the_note(graded, tmp_path):
    subs, _, _ = graded
    copy = tmp_path / "submitted"
    shutil.copytree(subs / "renamed", copy / "renamed")
    jobs = discover(copy)
    assert jobs[0].note and jobs[0].path.name == "asymmetric_pipeline (1).ipynb"
    (copy / "renamed" / A / "asymmetric_pipeline (1).ipynb").rename(copy / "renamed" / A / NB)
    assert discover(copy)[0].note == ""
    (copy / "renamed" / A / "other.ipynb").symlink_to("/etc/passwd")
    (copy / "renamed" / A / NB).unlink()
    assert discover(copy)[0].problem == "unreadable: the notebook is a symlink"
