"""A hostile class against the written-answer scorer (issue 20, attacks 1, 2 and 5).

Each test is an attack that worked on the grader before (it failed on 000f3b4) and shows it no longer
does: text the instructor cannot see was scored, invisible characters defeated negation, and scoring
was unbounded. The flags the scorer raises reach the review page (formgrader's comment), the answer
groups and grades.csv.
"""

from __future__ import annotations

import csv
import json
import time

import pytest

from autograder.authoring import agreement
from autograder.authoring.demo import reference_answers, with_answers
from autograder.classroom.export import export
from autograder.core.layout import REPO as LAYOUT
from autograder.core.registry import lessons
from autograder.grading.assignment import load_assignment
from autograder.grading.lesson_readers import for_lesson
from autograder.grading.notebook import extract
from autograder.grading.scoring import score_items
from autograder.grading.written import MAX_ANSWER_CHARS, suggest
from autograder.review.group_page import render_item
from autograder.review.groups import review_items
from tests.written_class import ASSIGNMENT, record_written_class

SOURCE = LAYOUT.sources / ASSIGNMENT / "asymmetric_pipeline.ipynb"
ITEMS = agreement.written_items(ASSIGNMENT)
VISIBLE = "我不知道。"


@pytest.fixture(scope="module")
def refs() -> dict[str, str]:
    """The reference answers as one paragraph each (so an inline wrapper can hold all of it)."""
    ref = reference_answers(json.loads(SOURCE.read_text(encoding="utf-8")))
    out = {k: " ".join(v.split()) for k, v in ref.items()}
    for iid, text in out.items():  # the attack's premise: the reference, shown, earns full points
        assert suggest(text, ITEMS[iid]).score == ITEMS[iid]["points"], iid
    return out


def _no_dollar(text: str) -> str:
    return text.replace("$", "")


#: how a hostile answer hides the reference answer from the review page while the old scorer read it
HIDING = {
    "comment-with-gt": lambda r: f"{VISIBLE}\n\n<!-- x> {r} -->",  # the old regex kept what followed "x>"
    "inline-comment": lambda r: f"{VISIBLE}<!-- x> {r} -->",
    "comment": lambda r: f"{VISIBLE}\n\n<!--\n{r}\n-->",
    "style-body": lambda r: f"{VISIBLE}<style>{r}</style>",
    "script-text-plain": lambda r: f'{VISIBLE}<script type="text/plain">{r}</script>',
    "image-alt": lambda r: f"{VISIBLE}![{r}](x.png)",
    "html-image-alt": lambda r: f'{VISIBLE}<img src="x.png" alt="{r.replace(chr(34), chr(39))}">',
    "ruby-fallback": lambda r: f"{VISIBLE}<ruby>知<rp>{r}</rp><rt>zhī</rt></ruby>",
    "nested-small": lambda r: f"{VISIBLE}<small><small><small><small>{r}</small></small></small></small>",
    "tex-phantom": lambda r: f"{VISIBLE}$\\phantom{{\\text{{{_no_dollar(r)}}}}}$",
    "tex-white": lambda r: f"{VISIBLE}$\\color{{white}}{{\\text{{{_no_dollar(r)}}}}}$",
    "tex-offscreen": lambda r: f"{VISIBLE}$\\hspace{{-999em}}\\text{{{_no_dollar(r)}}}$",
}


@pytest.mark.parametrize("vector", sorted(HIDING))
def test_text_the_instructor_cannot_see_earns_nothing_and_is_flagged(refs, vector):
    for iid, ref in refs.items():
        s = suggest(HIDING[vector](ref), ITEMS[iid])
        assert s.score == 0.0, (iid, s.evidence)
        assert any(f.startswith("hidden content") for f in s.flags), (iid, s.flags)
        assert "⚠" in s.comment and "hidden content" in s.comment  # formgrader's comment box says so


def test_text_the_review_page_shows_is_still_scored(refs):
    """What nh3 keeps (a style attribute is dropped, so the text is shown) scores as if plainly written."""
    for iid, ref in refs.items():
        plain = suggest(ref, ITEMS[iid]).score
        assert suggest(f'<span style="display:none">{ref}</span>', ITEMS[iid]).score == plain
        assert suggest(f"<details><summary>答</summary>{ref}</details>", ITEMS[iid]).score == plain


def _negated_corpus() -> list[tuple[str, dict]]:
    """The labelled denials of the right answer that the scorer gives at most 0.5."""
    return [
        (a["answer"], ITEMS[a["item"]])
        for part in agreement.parts()
        for a in agreement.corpus(ASSIGNMENT, part)
        if a.get("negated") and suggest(a["answer"], ITEMS[a["item"]]).score <= 0.5
    ]


NEGATION_CUES = ("不", "没", "无", "非", "not", "never", "n't", "no ", "without", "irrelevant", "nothing")


def _split_cues(text: str, ch: str) -> str:
    for cue in NEGATION_CUES:
        text = text.replace(cue, cue[0] + ch + cue[1:]) if len(cue) > 1 else text.replace(cue, cue + ch)
    return text


@pytest.mark.parametrize(
    "ch", ["\u200d", "\u200c", "\u2060", "\u00ad", "\u180e", "\ufe0f", "\U000e0020", "\u2062", "\u034f"]
)
def test_invisible_characters_inside_negations_change_nothing_but_are_flagged(ch):
    cases = _negated_corpus()
    assert len(cases) >= 6
    changed = 0
    for answer, item in cases:
        clean = suggest(answer, item)
        text = _split_cues(answer, ch)
        hostile = suggest(text, item)
        assert hostile.score == clean.score, (answer[:40], hostile.score, clean.score)
        assert any(f.startswith("invisible characters") for f in hostile.flags) == (text != answer)
        assert not clean.flags
        changed += text != answer
    assert changed >= 0.8 * len(cases)


def test_invisible_characters_written_as_html_entities_are_removed_and_flagged():
    for answer, item in _negated_corpus():
        hostile = suggest(_split_cues(answer, "&#8205;"), item)
        assert hostile.score == suggest(answer, item).score
        assert any(f.startswith("invisible characters") for f in hostile.flags) == (
            "&#8205;" in _split_cues(answer, "&#8205;")
        )


def _duplicated_notebook(tmp_path, copies: int, text: str, first: str | None = None):
    assignment = load_assignment(lessons()[ASSIGNMENT].directory)
    release = json.loads((LAYOUT.releases / ASSIGNMENT / f"{assignment.notebook}.ipynb").read_text("utf-8"))
    nb = with_answers(release, {"q1": first if first is not None else text})
    cells = []
    for cell in nb["cells"]:
        cells.append(cell)
        if (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id") == "q1":
            cells += [dict(cell, source=text, id=f"dup{i}") for i in range(copies - 1)]
    nb["cells"] = cells
    path = tmp_path / "dup.ipynb"
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return assignment, path


def test_duplicated_answer_cells_cost_bounded_time_and_are_flagged(tmp_path):
    """Eight copies of a 190 000-character answer cell (1.5 MB of "a. a. ...") cost the scorer ~26 s."""
    assignment, path = _duplicated_notebook(tmp_path, 8, "a. " * 63_000)
    extracted = extract(path, assignment.cells, assignment.written_ids)
    suggest("因为阻塞。", ITEMS["q1"])  # nbconvert's one-time start-up (seconds, cold) is not the point here
    for_lesson(assignment.directory)  # nor is fitting the lesson's readers, once per process
    started = time.monotonic()
    items = score_items(assignment, [], extracted.answers, answer_flags=extracted.answer_flags)
    took = time.monotonic() - started
    q1 = next(it for it in items if it.id == "q1")
    assert took < 3.0, took
    assert q1.suggestion == 0.0 and any(f.startswith("not scored") for f in q1.flags)
    assert any(f.startswith("duplicated answer cell") for f in q1.flags)


def test_only_the_first_answered_copy_of_a_duplicated_cell_is_scored(tmp_path, refs):
    """Copies are not concatenated: the placeholder first, then the reference, then a denial."""
    assignment, path = _duplicated_notebook(tmp_path, 3, refs["q1"], first="YOUR ANSWER HERE")
    extracted = extract(path, assignment.cells, assignment.written_ids)
    assert extracted.answers["q1"] == refs["q1"]
    items = score_items(assignment, [], extracted.answers, answer_flags=extracted.answer_flags)
    q1 = next(it for it in items if it.id == "q1")
    assert q1.suggestion == 2.0 and q1.flags == [
        "duplicated answer cell: 3 copies, only the first answered one scored"
    ]


def test_an_answer_over_the_length_cap_is_not_scored(refs):
    long = (refs["q1"] + " ") * (MAX_ANSWER_CHARS // len(refs["q1"]) + 1)
    s = suggest(long, ITEMS["q1"])
    assert s.score == 0.0 and s.flags[-1].startswith("not scored") and "未评分" in s.comment
    assert suggest(long[:MAX_ANSWER_CHARS], ITEMS["q1"]).score == 2.0  # at the cap it is still read


def test_an_answer_over_the_time_budget_is_not_scored(refs):
    s = suggest(refs["q2"], ITEMS["q2"], budget_s=1e-9)
    assert s.score == 0.0 and s.flags == ["not scored: scoring took longer than 1e-09 s"]
    assert all(not e["met"] for e in s.evidence)


def test_flags_reach_the_review_page_the_groups_and_grades_csv(tmp_path, refs):
    """Flagged answers never join a group of visible answers, even with the same visible text and score."""
    answers = {
        "s01": {"q1": refs["q1"]},
        "s02": {"q1": refs["q1"]},
        "s03": {"q1": refs["q1"] + "<!-- 参考答案 -->"},  # same visible text and score, plus a comment
        "s04": {"q1": _split_cues(refs["q1"], "\u200d").replace("。", "\u200b。")},  # invisible characters
        "s05": {"q1": HIDING["comment-with-gt"](refs["q1"])},
        "s06": {"q1": refs["q1"].replace("。", "。 ")},
    }
    out = tmp_path / "out"
    results = record_written_class(out, answers, tmp_path / "submitted")
    assert results["s03"].item("q1").suggestion == results["s01"].item("q1").suggestion == 2.0
    assert results["s05"].item("q1").suggestion == 0.0

    (review,) = review_items(out, ASSIGNMENT, "q1")
    groups = {tuple(sorted(a.student_id for a in g.members)) for g in review.groups}
    assert ("s01", "s02", "s06") in groups  # honest answers still group
    for flagged in ("s03", "s04", "s05"):
        assert (flagged,) in groups, groups
    html = render_item(review, "/", "")
    assert html.count('<ul class="flags">') == 3 and "hidden content: HTML comment" in html

    from nbgrader.api import Gradebook

    from autograder.gradebook import coursedir

    with Gradebook(coursedir.db_url_for(out), coursedir.COURSE_ID) as gb:  # what formgrader shows
        comment = gb.find_comment("q1", "asymmetric_pipeline", ASSIGNMENT, "s05")
        assert "⚠ 请核对 / check: hidden content: HTML comment" in comment.manual_comment
        comment = gb.find_comment("q1", "asymmetric_pipeline", ASSIGNMENT, "s04")
        assert "invisible characters" in comment.manual_comment

    export(out)
    with open(out / "grades.csv", newline="", encoding="utf-8") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    assert rows["s01"]["review_flags"] == "" and rows["s06"]["review_flags"] == ""
    assert rows["s03"]["review_flags"] == "q1: hidden content: HTML comment"
    assert rows["s04"]["review_flags"].startswith("q1: invisible characters")


def test_the_first_answer_a_process_reads_is_not_charged_for_start_up():
    """The budget counts scoring, not nbconvert's one-time start-up (over a second on a loaded machine)."""
    import subprocess
    import sys

    code = (
        "import json\n"
        "from autograder.authoring import agreement\n"
        "from autograder.grading.written import suggest\n"
        "item = agreement.written_items('16-asymmetric-pipeline')['q1']\n"
        "empty = suggest('', item, budget_s=0.3)\n"  # an empty answer renders nothing: the question does
        "s = suggest('因为阻塞发送，下游忙时上游也停顿。', item, budget_s=0.3)\n"
        "print(json.dumps(empty.flags + s.flags))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
