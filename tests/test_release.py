"""The release tool reports drift, and lesson 16's release gives nothing away that is particular to it.

(Every lesson's release is in sync, without outputs, with no reference code and with nbgrader's cells as
its rubric says: tests/test_lessons.py.)

Reference code and reference answers are derived from the source notebook (its ``### BEGIN/END
SOLUTION`` regions and its answer cells), never hard-coded here, so these tests follow the lesson.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autograder.authoring import release

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


def test_release_stubs_every_method(released):
    (cell,) = [c for c in released["cells"] if _nbg(c).get("grade_id") == "exercise"]
    code = _src(cell)
    compile(code, "exercise", "exec")
    assert code.count("raise NotImplementedError()") == 3
    for method in ("simulate_1f1b_execution", "solve_optimal_layer_partition", "min_microbatches_for_bubble"):
        body = code.split(f"def {method}", 1)[1].split("\n    def ", 1)[0]
        assert "raise NotImplementedError()" in body, f"{method} is not stubbed"


def test_quarto_project_lists_lessons():
    text = (ROOT / "_quarto.yml").read_text(encoding="utf-8")
    assert re.search(r"type:\s*website", text)
    assert "lessons/*/*.ipynb" in text
