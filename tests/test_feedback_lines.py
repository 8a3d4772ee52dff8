"""Two feedback lines that used to mislead: an unattempted challenge (extra credit) is one line,
"挑战题未作答：不扣分", not a row of ✘ per hidden test (one of them, "空序列应当抛出 ValueError", wrong for a
stub); and an import the sandbox blocks names the module (from the source, as the self-check reads it)
and says it is not available when grading, instead of "抛出了 ModuleNotFoundError（异常信息不显示）"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.authoring.demo import reference_cells, with_code
from autograder.core.registry import lessons
from autograder.grading.assignment import load_assignment
from autograder.grading.engine import grade_notebook
from autograder.grading.submission import shutdown_workers
from autograder.reporting import feedback

A = "16-asymmetric-pipeline"


@pytest.fixture(scope="module")
def assignment():
    yield load_assignment(lessons()[A].directory)
    shutdown_workers()


def _cell(nb: dict, grade_id: str) -> dict:
    return next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


def _grade(assignment, nb: dict, tmp_path: Path):
    path = tmp_path / A / "asymmetric_pipeline.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return grade_notebook(assignment, path, "s", "auto", "test")


def test_unattempted_challenge_is_one_line(assignment, tmp_path):
    nb = json.loads(assignment.source.read_text(encoding="utf-8"))
    release = json.loads(assignment.release.read_text(encoding="utf-8"))
    _cell(nb, "challenge-exercise")["source"] = _cell(release, "challenge-exercise")["source"]
    result = _grade(assignment, nb, tmp_path)
    challenge = result.item("challenge")
    assert challenge.score == 0 and feedback.unattempted(challenge)
    assert result.code_total == 4  # the regular items are untouched
    page = feedback.render(result)
    assert page.count(feedback.UNATTEMPTED) == 1
    assert "空序列应当抛出 ValueError" not in page  # no challenge rows at all
    others = {t.name for it in result.items if it.id != "challenge" for t in it.tests}
    own = [t.name for t in challenge.tests if t.name not in others]
    assert own and all(name not in page for name in own)
    # a regular item left as a stub keeps its rows (it costs points: the student must see why)
    assert not feedback.unattempted(result.item("simulator"))


def test_a_wrong_challenge_keeps_its_rows(assignment, tmp_path):
    nb = json.loads(assignment.source.read_text(encoding="utf-8"))
    cell = _cell(nb, "challenge-exercise")
    cell["source"] = "".join(cell["source"]) + (
        "\n\n_right = simulate_1f1b\n\n\ndef simulate_1f1b(f, b, m):\n    t, r = _right(f, b, m)\n"
        "    return t + 1.0, r\n"
    )
    result = _grade(assignment, nb, tmp_path)
    assert not feedback.unattempted(result.item("challenge"))
    page = feedback.render(result)
    assert feedback.UNATTEMPTED not in page and "test_matches_course_simulator" in page


def test_blocked_import_names_the_module(assignment, tmp_path):
    code = reference_cells(Path(assignment.directory))["exercise"].replace(
        "    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):\n",
        "    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):\n"
        "        import pipelab.figures  # works in JupyterLab, not when grading\n",
        1,
    )
    assert "import pipelab.figures" in code
    release = json.loads(assignment.release.read_text(encoding="utf-8"))
    result = _grade(assignment, with_code(release, code), tmp_path)
    notes = [m for m in result.messages if "'pipelab'" in m]
    assert len(notes) == 1 and "not available when grading" in notes[0] and "评分时没有这个模块" in notes[0]
    rows = [t.message for t in result.item("simulator").tests if not t.passed]
    assert any("ModuleNotFoundError：它导入的模块评分时不可用" in m for m in rows), rows
    assert not any("ModuleNotFoundError（异常信息不显示" in m for m in rows), rows
    page = feedback.render(result)
    assert "异常信息不显示 / message not shown）" not in page.split("simulator")[1].split("solver")[0]
    assert "imports &#x27;pipelab&#x27;, which is not available when grading" in page or (
        "imports 'pipelab', which is not available when grading" in page
    )
    assert result.item("solver").score == 2  # the other method never imported it
