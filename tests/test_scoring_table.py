"""One scoring table: the notebooks' 评分表 and rubric.yaml hold the same criteria, points and deductions.

The 评分表 cell is generated from the rubric (autograder/authoring/scoring_table.py, run by `make release`); these
tests fail when a notebook's table (source or release) or its question wording drifts from the rubric.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from autograder.authoring import scoring_table
from autograder.core.registry import lessons
from autograder.grading.assignment import load_assignment

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = tuple(lessons())
QUESTION_RE = re.compile(r"^\*\*Q(\d+)（([\d.]+) 分）\*\*：(.*)$", re.S)


def rubric(assignment: str) -> dict:
    return yaml.safe_load(
        (ROOT / "autograder" / "lessons" / assignment / "rubric.yaml").read_text(encoding="utf-8")
    )


def notebook(folder: str, assignment: str) -> dict:
    path = ROOT / folder / assignment / f"{rubric(assignment)['notebook']}.ipynb"
    return json.loads(path.read_text(encoding="utf-8"))


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


@pytest.mark.parametrize("folder", ["solutions", "lessons"])
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_notebook_table_is_the_rubric(assignment, folder):
    cell = scoring_table.table_cell(notebook(folder, assignment))
    assert source(cell) == scoring_table.render(rubric(assignment)), (
        f"{folder}/{assignment}: the 评分表 drifted from rubric.yaml; run `make release`"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_criterion_points_and_deduction_is_in_the_table(assignment):
    r = rubric(assignment)
    table = scoring_table.render(r)
    header = table.splitlines()[2]
    assert "得分要点" in header and "扣分标准" in header
    for it in r["items"]:
        row = next(line for line in table.splitlines() if f"`{it['id']}`" in line)
        assert f"| {it['points']:g}{'（附加分）' if it.get('extra_credit') else ''} |" in row
        if it["kind"] == "written":
            for c in it["criteria"]:
                assert f"{c['assessed']}（{c['points']:g} 分）" in row
                assert c["description"] not in row, "the table must not print the answer (description)"
            for d in it["deductions"]:
                assert d["reason"].endswith(f"扣 {d['points']:g} 分")
                assert d["reason"] not in row, (
                    "the table must not print the deduction reasons (they name the answer)"
                )
            points = "、".join(f"{c['points']:g}" for c in it["criteria"])
            assert f"依次为 {points} 分" in row


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_questions_in_the_rubric_are_the_notebook_questions(assignment):
    items = {it["id"]: it for it in rubric(assignment)["items"] if it["kind"] == "written"}
    cells = {
        c["metadata"]["nbgrader"]["grade_id"]: source(c)
        for c in notebook("solutions", assignment)["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id", "").endswith("-question")
    }
    assert sorted(cells) == sorted(f"{i}-question" for i in items)
    for item_id, item in items.items():
        m = QUESTION_RE.match(cells[f"{item_id}-question"].strip())
        assert m, cells[f"{item_id}-question"]
        assert f"q{m.group(1)}" == item_id and float(m.group(2)) == item["points"]
        assert " ".join(item["question"].split()) == " ".join(m.group(3).split())


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_code_rows_state_the_real_split_of_the_hidden_tests(assignment):
    """The table says edge cases and validation carry a quarter of each code item: true of the tests."""
    asg = load_assignment(lessons()[assignment].directory)
    for it in asg.items:
        if it.is_code:
            own = [t for t in asg.tests if t.item == it.id]
            assert sum(t.weight for t in own if t.edge) * 4 == pytest.approx(sum(t.weight for t in own))


def test_a_changed_rubric_is_caught_and_rewritten(tmp_path):
    assignment = "16-asymmetric-pipeline"
    for sub in ("autograder/lessons", "solutions"):
        shutil.copytree(ROOT / sub / assignment, tmp_path / sub / assignment)
    assert scoring_table.sync(assignment, write=False, root=tmp_path)
    path = tmp_path / "autograder" / "lessons" / assignment / "rubric.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace("assessed: '增大 $m$ 的代价（至少一种，说明原因）'", "assessed: '副作用'"),
        encoding="utf-8",
    )
    assert scoring_table.sync(assignment, write=False)  # the repository itself is in sync
    assert not scoring_table.sync(assignment, write=False, root=tmp_path)
    assert not scoring_table.sync(assignment, write=True, root=tmp_path)
    assert scoring_table.sync(assignment, write=False, root=tmp_path)
    nb = json.loads(
        (tmp_path / "solutions" / assignment / "asymmetric_pipeline.ipynb").read_text(encoding="utf-8")
    )
    assert "副作用（0.5 分）" in source(scoring_table.table_cell(nb))


def test_an_item_without_a_title_gets_a_clear_error():
    r = rubric("16-asymmetric-pipeline")
    del r["items"][0]["summary"]
    with pytest.raises(ValueError, match="simulator: the 评分表 needs summary"):
        scoring_table.render(r)


def _table_row_text(assignment: str, item_id: str) -> str:
    """The 评分表 row of a written item as a student would paste it (markdown table row, and its cells as
    plain lines)."""
    table = scoring_table.render(rubric(assignment))
    row = next(line for line in table.splitlines() if f"`{item_id}`" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    return row + "\n\n" + "\n\n".join(cells)


@pytest.mark.parametrize(
    "assignment,item_id",
    [("16-asymmetric-pipeline", q) for q in ("q1", "q2", "q3")]
    + [("03-load-imbalance", q) for q in ("q1", "q2")],
)
def test_pasting_the_table_rows_as_the_answer_earns_nothing(assignment, item_id):
    """Issue 21: the table says what is assessed, not the answer. Its row pasted as the answer (every written
    row together, too) is suggested 0, like a copy of the question; the reference answer still earns full marks,
    so the scorer is not simply refusing everything. (The code rows state the contract, not an answer.)"""
    from autograder.grading.written import suggest

    item = next(it for it in rubric(assignment)["items"] if it["id"] == item_id)
    assert suggest(_table_row_text(assignment, item_id), item).score == 0.0
    written = [it["id"] for it in rubric(assignment)["items"] if it["kind"] == "written"]
    every_row = "\n\n".join(_table_row_text(assignment, i) for i in written)
    assert suggest(every_row, item).score == 0.0  # all written rows pasted together
    nb = notebook("solutions", assignment)
    reference = next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == item_id)
    assert suggest(source(reference), item).score == item["points"]
