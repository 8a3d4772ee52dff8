"""The student release (lessons/) is generated from the source (solutions/) and gives nothing away.

Reference code and reference answers are derived from the source notebook (its ``### BEGIN/END
SOLUTION`` regions and its answer cells), never hard-coded here, so these tests follow the lesson.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograder import release

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "16-asymmetric-pipeline"
NOTEBOOK = "asymmetric_pipeline.ipynb"
SOURCE = ROOT / "solutions" / ASSIGNMENT / NOTEBOOK
RELEASE = ROOT / "lessons" / ASSIGNMENT / NOTEBOOK
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _src(cell: dict) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


def _nbg(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def solution_lines(nb: dict) -> list[str]:
    """Stripped, non-trivial lines inside the source's solution regions."""
    out: list[str] = []
    for cell in nb["cells"]:
        inside = False
        for line in _src(cell).splitlines():
            if BEGIN in line:
                inside = True
            elif END in line:
                inside = False
            elif inside and len(line.strip()) >= 8:
                out.append(line.strip())
    return out


def answer_sentences(nb: dict) -> list[str]:
    """Sentences (>= 12 characters) of the reference answers in the source's written-answer cells."""
    out: list[str] = []
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown" and _nbg(cell).get("solution"):
            for piece in re.split(r"[。；！？\n]", _src(cell)):
                piece = piece.strip(" *>-0123456789.：:")
                if len(piece) >= 12:
                    out.append(piece)
    return out


@pytest.fixture(scope="module")
def source() -> dict:
    return _load(SOURCE)


@pytest.fixture(scope="module")
def released() -> dict:
    return _load(RELEASE)


@pytest.fixture(scope="module")
def fresh() -> dict[str, bytes]:
    return release.generate(ASSIGNMENT)


def test_release_in_sync_with_fresh_generation(fresh):
    problems = release.diff(ASSIGNMENT, fresh, release.current(ASSIGNMENT))
    assert not problems, "lessons/ drifted from solutions/; run `make release`:\n" + "\n".join(problems)


def test_check_mode_reports_drift(fresh):
    stale = dict(fresh)
    stale[NOTEBOOK] = fresh[NOTEBOOK].replace(b"YOUR ANSWER HERE", b"tampered", 1)
    stale["stray.txt"] = b"x"
    problems = release.diff(ASSIGNMENT, fresh, stale)
    assert any(p.startswith("differs:") and NOTEBOOK in p for p in problems)
    assert any("tampered" in p for p in problems), "the summary should show the diff"
    assert any(p.startswith("extra") and "stray.txt" in p for p in problems)
    assert any(p.startswith("missing") for p in release.diff(ASSIGNMENT, fresh, {}))


def test_cli_check_exits_zero_when_in_sync(capsys):
    assert release.main(["--check", ASSIGNMENT]) == 0
    assert "in sync" in capsys.readouterr().out


@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["source", "release"])
def test_no_outputs_and_stable_json(path):
    text = path.read_text(encoding="utf-8")
    nb = json.loads(text)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"cell {cell.get('id')} has outputs"
            assert cell["execution_count"] is None, f"cell {cell.get('id')} has an execution count"
    assert text == release.normalise_notebook(text), f"{path.name} is not in normalised form"


def test_release_has_no_reference_code(source, released):
    ref = solution_lines(source)
    assert len(ref) > 20, "expected the reference implementation inside the solution regions"
    shipped = {line.strip() for cell in released["cells"] for line in _src(cell).splitlines()}
    leaked = [line for line in ref if line in shipped]
    assert not leaked, f"reference code in the release: {leaked[:5]}"
    text = json.dumps(released, ensure_ascii=False)
    assert BEGIN not in text and END not in text


def test_release_has_no_reference_answers(source, released):
    sentences = answer_sentences(source)
    assert len(sentences) >= 9, "expected reference answers in the source's answer cells"
    text = "\n".join(_src(c) for c in released["cells"])
    leaked = [s for s in sentences if s in text]
    assert not leaked, f"reference answer text in the release: {leaked[:3]}"
    answers = [c for c in released["cells"] if c["cell_type"] == "markdown" and _nbg(c).get("solution")]
    assert [_nbg(c)["grade_id"] for c in answers] == ["q1", "q2", "q3"]
    for cell in answers:
        assert _src(cell).strip() == "YOUR ANSWER HERE"


def test_release_stubs_both_methods(released):
    (cell,) = [c for c in released["cells"] if _nbg(c).get("grade_id") == "exercise"]
    code = _src(cell)
    compile(code, "exercise", "exec")
    assert code.count("raise NotImplementedError()") == 2
    for method in ("simulate_1f1b_execution", "solve_optimal_layer_partition"):
        body = code.split(f"def {method}", 1)[1].split("\n    def ", 1)[0]
        assert "raise NotImplementedError()" in body, f"{method} is not stubbed"


@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["source", "release"])
def test_no_hidden_test_material(path):
    text = path.read_text(encoding="utf-8")
    for needle in ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN MARK SCHEME"):
        assert needle not in text
    assert not re.search(r"^\s*(?:from|import)\s+autograder\b", text.replace("\\n", "\n"), re.MULTILINE)
    assert "autograder.testing" not in text


@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["source", "release"])
def test_nbgrader_metadata(path):
    nb = _load(path)
    ids = [c.get("id") for c in nb["cells"]]
    assert len(ids) == len(set(ids)), "cell ids must be unique"
    for cell in nb["cells"]:
        meta = _nbg(cell)
        if cell["cell_type"] == "code":
            assert meta, f"code cell {cell['id']} has no nbgrader metadata"
            assert meta.get("solution") or meta.get("locked"), (
                f"code cell {cell['id']} is neither solution nor locked"
            )
    by_id = {_nbg(c)["grade_id"]: _nbg(c) for c in nb["cells"] if _nbg(c)}
    assert by_id["exercise"]["solution"] and not by_id["exercise"]["grade"]
    for item in ("simulator", "solver"):
        m = by_id[item]
        assert (m["grade"], m["solution"], m["locked"], m["points"]) == (True, False, True, 2)
    for item in ("q1", "q2", "q3"):
        m = by_id[item]
        assert (m["grade"], m["solution"], m["points"]) == (True, True, 2)
        assert by_id[f"{item}-question"]["locked"]
    rubric = ROOT / "autograder" / ASSIGNMENT / "rubric.yaml"
    if rubric.exists():
        yaml = pytest.importorskip("yaml")
        items = {  # an extra-credit item's cell has 0 points, so nbgrader's maximum leaves it out
            i["id"]: 0 if i.get("extra_credit") else i["points"]
            for i in yaml.safe_load(rubric.read_text(encoding="utf-8"))["items"]
        }
        graded = {k: v["points"] for k, v in by_id.items() if v.get("grade")}
        assert graded == items, "graded cells must match the rubric items (grade_id = item id, same points)"


@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["source", "release"])
def test_quarto_renderable(path):
    nb = _load(path)
    # issue 21: no raw YAML front-matter cell (JupyterLab shows it as raw text at the top of the lesson);
    # Quarto takes the title from the first cell's level-1 heading, lang and format from _quarto.yml
    assert not any(c["cell_type"] == "raw" for c in nb["cells"]), "no raw cells (front matter) in a lesson"
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown" and re.match(r"# 第 \d+ 课：\S", _src(first)), (
        "the first cell must open with the lesson's title as a level-1 heading"
    )
    assert (
        sum(
            line.startswith("# ")
            for c in nb["cells"]
            if c["cell_type"] == "markdown"
            for line in _src(c).splitlines()
        )
        == 1
    )
    quarto = (ROOT / "_quarto.yml").read_text(encoding="utf-8")
    assert re.search(r"^lang: zh$", quarto, re.M) and re.search(
        r"^format:\n  html:\n    toc: true", quarto, re.M
    )
    markdown = "\n".join(_src(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert not re.search(
        r"<\s*/?\s*(?:div|span|img|br|p|table|script|style|iframe|details|summary|a|font)(?:\s[^<>]*)?/?>",
        markdown,
        re.IGNORECASE,
    ), "no raw HTML in lesson markdown"
    assert not re.search(r"^:::", markdown, re.MULTILINE), "no Quarto-only callouts"
    assert "mermaid" not in markdown
    assert not any("application/vnd.jupyter.widget" in json.dumps(c) for c in nb["cells"])


def test_quarto_project_lists_lessons():
    text = (ROOT / "_quarto.yml").read_text(encoding="utf-8")
    assert re.search(r"type:\s*website", text)
    assert "lessons/*/*.ipynb" in text
