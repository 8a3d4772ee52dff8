"""The 评分表 students read, generated from the rubric the grader uses (one source for both).

The markdown cell of ``solutions/<lesson>/<notebook>.ipynb`` that starts with ``## 评分表`` is
rendered from ``autograder/lessons/<lesson>/rubric.yaml``: every item with its title, grade_id, points and
how it is graded; for written items what every criterion assesses (得分要点: its ``assessed`` text and
points, never the answer) and how deductions work (扣分标准); for code items the split of the hidden tests'
weight. ``make release`` writes it before generating ``lessons/`` (``python -m autograder.authoring.release``,
one command for both); its ``--check`` exits 1 when a notebook's table differs from its rubric, and
tests/test_scoring_table.py fails in that case, so the table and the rubric cannot drift apart.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from autograder.core import numbers
from autograder.core.layout import REPO, Layout
from autograder.core.notebook_format import normalise_notebook
from autograder.core.registry import lesson

HEADING = "## 评分表"


def _criteria(item: dict) -> str:
    """What each criterion assesses (its ``assessed`` text), never its ``description``: the description
    and the deductions' reasons state the answer, and a copy of the table must earn what a copy of the
    question earns (nothing; tests/test_scoring_table.py)."""
    missing = [c["id"] for c in item["criteria"] if not c.get("assessed")]
    if missing:
        raise ValueError(
            f"item {item['id']}: the 评分表 needs assessed for {', '.join(missing)} in rubric.yaml"
        )
    return "；".join(f"{c['assessed']}（{numbers.score(c['points'])} 分）" for c in item["criteria"])


def _deductions(item: dict) -> str:
    points = "、".join(numbers.score(c["points"]) for c in item["criteria"])
    return f"每个要点没有讲清（或被答案自己否定）时扣该要点的分值（依次为 {points} 分），不重复扣"


def _code_deductions(points: float) -> str:
    return (
        f"按未通过的隐藏测试的权重扣分：核心行为共 {numbers.score(points * 3 / 4)} 分，"
        f"边界情况与输入校验共 {numbers.score(points / 4)} 分"
    )


def render(rubric: dict) -> str:
    """The markdown of the 评分表 cell for ``rubric`` (a dict loaded from rubric.yaml)."""
    rows = ["| 项目 | grade_id | 分值 | 评分方式 | 得分要点 | 扣分标准 |", "|---|---|---|---|---|---|"]
    total = 0.0
    for it in rubric["items"]:
        missing = [k for k in ("title", "summary" if it["kind"] == "code" else "criteria") if not it.get(k)]
        if missing:
            raise ValueError(f"item {it['id']}: the 评分表 needs {' and '.join(missing)} in rubric.yaml")
        extra = bool(it.get("extra_credit"))
        points = numbers.score(it["points"]) + ("（附加分）" if extra else "")
        total += 0 if extra else float(it["points"])
        if it["kind"] == "code":
            cells = ("执行隐藏测试", it["summary"], _code_deductions(float(it["points"])))
        else:
            cells = ("静态审查 + 教师确认", _criteria(it), _deductions(it))
        rows.append(f"| {it['title']} | `{it['id']}` | {points} | {' | '.join(cells)} |")
    rows.append(
        f"| **合计** | | **{numbers.score(total)}** | | **{numbers.score(rubric['pass_line'])} 分及格** | |"
    )
    notes = [
        "* 代码题：分数按通过的隐藏测试的权重比例给出，核心行为占每题的四分之三，边界情况与输入校验占四分之一。"
        "可视检查只是帮你自查的几个例子，隐藏测试用的是另外生成的输入。",
        "* 问答题：「静态审查」表示答案没有被执行，而是按上表的得分要点比对文字得出的**建议**分。每个要点要在同一段话里"
        "讲清因果（或给出公式）；只罗列关键词、照抄题目、或否定该要点的说法都不得分。扣分就是没有做到的要点的分值，"
        "不会重复扣。最终分数以老师在 formgrader 中确认的为准。",
        "* 本表由自动评分使用的评分规则生成，要点、分值和扣分方式与它完全一致；问答题一栏写的是**考查什么**，"
        "不是答案：把本表抄进答案不得分。",
    ]
    extra = [it for it in rubric["items"] if it.get("extra_credit")]
    if extra:
        ids = "、".join(f"`{it['id']}`" for it in extra)
        notes.append(
            f"* 附加分（{ids}）：得分加到总分上，总分可以超过 {numbers.score(total)} 分；满分 {numbers.score(total)} 分与及格线 "
            f"{numbers.score(rubric['pass_line'])} 分不变，附加分也计入及格判断；不做不扣分。"
        )
    return "\n".join([HEADING, "", *rows, "", *notes])


def table_cell(nb: dict) -> dict:
    """The notebook's 评分表 cell (exactly one markdown cell starting with ``## 评分表``)."""
    cells = [c for c in nb["cells"] if c["cell_type"] == "markdown" and _source(c).startswith(HEADING)]
    if len(cells) != 1:
        raise ValueError(f"expected one markdown cell starting with {HEADING!r}, found {len(cells)}")
    return cells[0]


def _source(cell: dict) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def sync(assignment: str, *, write: bool, root: Path = REPO.root) -> bool:
    """True when the notebook's 评分表 matches the rubric; with ``write`` make it match."""
    found = lesson(assignment, Layout(Path(root)))
    rubric_path, nb_path = found.rubric.path, found.source
    text = nb_path.read_text(encoding="utf-8")
    nb = json.loads(text)
    cell = table_cell(nb)
    want = render(yaml.safe_load(rubric_path.read_text(encoding="utf-8")))
    if _source(cell) == want:
        return True
    if write:
        cell["source"] = want.splitlines(keepends=True) if isinstance(cell["source"], list) else want
        plain = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"  # keep the file's own layout
        nb_path.write_text(
            normalise_notebook(plain) if text == normalise_notebook(text) else plain, encoding="utf-8"
        )
    return False
