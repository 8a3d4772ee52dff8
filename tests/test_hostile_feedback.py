"""Attack 5 of issue 10: feedback cannot carry hidden inputs back to the student.

The hostile submission (the reference with both exercise methods replaced) turns every call's arguments
into text it controls: the name of the exception class it raises (``LEAKCLS_<hex of repr(args)>``, a
``ValueError`` subclass), the message (``LEAKMSG<repr(args)>``), stdout (``LEAKOUT<...>``), a file in
``/tmp`` that the notebook's cell turns into an error message when the child is re-forked after a crash
(``LEAKCELL<...>``), and its exit code (77). Graded with the real engine, sandbox and hidden tests, none of
that may reach the feedback page, the results JSON or grades.csv: a hidden test's line shows its
authored message and at most a builtin exception type (here ``ValueError``).

An honest student graded in the same batch keeps the reference's full code score, and the mistakes
catalogues keep their exact scores (``tests/test_lesson16_grading.py``), since only messages changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.authoring.demo import reference_code, with_code
from autograder.classroom.batch import grade_class
from autograder.core.layout import REPO as LAYOUT
from autograder.grading.assignment import load_assignment

ASSIGNMENT = "16-asymmetric-pipeline"
REPO = Path(__file__).resolve().parents[1]
LEAK = """

import binascii as _binascii
import os as _os

_Honest = AsymmetricPipelineScheduler
_calls = [0]


class AsymmetricPipelineScheduler(_Honest):
    def _leak(self, args):
        text = repr(args)
        print("LEAKOUT" + text)
        with open("/tmp/leak.txt", "a", encoding="utf-8") as fh:
            fh.write(text)
        _calls[0] += 1
        if _calls[0] == 3:
            _os._exit(77)  # the exit code is a channel too; the child is re-forked after this
        name = "LEAKCLS_" + _binascii.hexlify(text.encode()).decode()[:120]
        raise type(name, (ValueError,), {})("LEAKMSG" + text)

    def simulate_1f1b_execution(self, *args, **kwargs):
        self._leak((args, kwargs))

    def solve_optimal_layer_partition(self, *args, **kwargs):
        self._leak((args, kwargs))

    def min_microbatches_for_bubble(self, *args, **kwargs):
        self._leak((args, kwargs))


if _os.path.exists("/tmp/leak.txt"):  # a re-forked child: put what the last one saw into an error
    raise RuntimeError("LEAKCELL" + open("/tmp/leak.txt", encoding="utf-8").read()[:300])
"""
MARKERS = ("LEAKCLS", "LEAKMSG", "LEAKOUT", "LEAKCELL", "退出码 77", "exit code 77")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile-feedback")
    assignment = load_assignment(LAYOUT.data_dir(ASSIGNMENT))
    release = json.loads((REPO / "lessons" / ASSIGNMENT / f"{assignment.notebook}.ipynb").read_text("utf-8"))
    honest = reference_code(LAYOUT.data_dir(ASSIGNMENT))
    for student, code in (("leaker", honest + LEAK), ("honest", honest)):
        path = tmp / "subs" / student / ASSIGNMENT / f"{assignment.notebook}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(with_code(release, code), ensure_ascii=False), encoding="utf-8")
    results = {r.student_id: r for r in grade_class(tmp / "subs", tmp / "out", quiet=True, jobs=1)}
    return tmp / "out", results


def shown_to_student(out: Path, student: str) -> dict[str, str]:
    return {
        "feedback page": (out / "feedback" / student / f"{ASSIGNMENT}.html").read_text(encoding="utf-8"),
        "results JSON": (out / "results" / student / f"{ASSIGNMENT}.json").read_text(encoding="utf-8"),
        "grades.csv": (out / "grades.csv").read_text(encoding="utf-8"),
    }


def test_student_chosen_text_never_reaches_feedback(graded):
    out, results = graded
    leaker = results["leaker"]
    assert leaker.code_total == 0  # every call raised or crashed
    for where, text in shown_to_student(out, "leaker").items():
        found = [m for m in MARKERS if m in text]
        assert not found, f"{where} shows {found}"


def test_hidden_test_lines_show_authored_text_and_builtin_type(graded):
    _, results = graded
    lines = [  # the leaker carries the reference's extra-credit challenge, whose tests pass (no message)
        t.message
        for it in results["leaker"].items
        if it.kind == "code" and not it.extra_credit
        for t in it.tests
    ]
    assert lines and all(m for m in lines)
    assert any("抛出了 ValueError" in m for m in lines), lines  # the subclass shows as its builtin base
    assert not any("LEAK" in m for m in lines), lines


def test_honest_neighbour_keeps_full_code_score(graded):
    _, results = graded
    honest = results["honest"]
    assert honest.code_total == sum(
        it.points for it in honest.items if it.kind == "code" and not it.extra_credit
    ), [(t.name, t.message) for it in honest.items for t in it.tests if not t.passed]
