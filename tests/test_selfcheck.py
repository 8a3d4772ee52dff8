"""Student self-check (``python -m autograder selfcheck``): each way a submission cannot be graded is
caught, the reference passes, and nothing of the hidden tests is ever shown."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.authoring.demo import reference_code, with_code
from autograder.core.layout import REPO as LAYOUT
from autograder.core.registry import lessons
from autograder.grading.assignment import load_assignment
from autograder.grading.submission import shutdown_workers
from autograder.student.selfcheck import (
    FAIL,
    NOTE,
    OK,
    WARN,
    exercise_targets,
    extra_credit_targets,
    selfcheck,
    visible_scenarios,
)

ROOT = LAYOUT.root

A16 = "16-asymmetric-pipeline"


@pytest.fixture(scope="module", autouse=True)
def _workers():
    yield
    shutdown_workers()


def _source(assignment_id: str) -> dict:
    a = load_assignment(lessons()[assignment_id].directory)
    return json.loads(a.source.read_text(encoding="utf-8"))


def _write(tmp_path: Path, nb: dict, folder: str = A16, name: str = "asymmetric_pipeline.ipynb") -> Path:
    path = tmp_path / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return path


def _cell(nb: dict, grade_id: str) -> dict:
    return next(c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


def _fails(report) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in report.findings:
        if f.status == FAIL:
            out.setdefault(f.topic, []).append(f.text)
    return out


def _no_hidden_tests(text: str, assignment_id: str) -> None:
    a = load_assignment(lessons()[assignment_id].directory)
    for test in a.tests:
        assert test.name not in text and (not test.doc or test.doc not in text), test.name
    assert "test_" not in text


@pytest.mark.parametrize("assignment_id", sorted(lessons()))
def test_reference_passes(assignment_id):
    a = load_assignment(lessons()[assignment_id].directory)
    report = selfcheck(a.source)
    assert report.ok, report.format()
    topics = {f.topic for f in report.findings if f.status == OK}
    assert {"naming", "locked cells", "imports", "load", "timing", "answers"} <= topics
    _no_hidden_tests(report.format(), assignment_id)


def test_release_stub_is_not_ready():
    a = load_assignment(lessons()[A16].directory)
    report = selfcheck(a.release)
    fails = _fails(report)
    assert any("NotImplementedError" in t for t in fails["timing"])
    assert len(fails["answers"]) == 3
    _no_hidden_tests(report.format(), A16)


def test_pipelab_import_is_caught(tmp_path):
    nb = _source(A16)
    cell = next(
        c
        for c in nb["cells"]
        if c["metadata"].get("nbgrader", {}).get("solution") and c["cell_type"] == "code"
    )
    cell["source"] = "from pipelab.partition import *  # works in JupyterLab, not in the grader\n" + "".join(
        cell["source"]
    )
    fails = _fails(selfcheck(_write(tmp_path, nb)))
    assert any("pipelab" in t for t in fails["imports"]), fails
    assert "load" in fails  # and the cell really fails in the sandbox


def test_import_inside_a_method_is_caught(tmp_path):
    code = reference_code(lessons()[A16].directory) + (
        "\n\ndef _helper():\n    import pipelab.figures\n    return pipelab\n"
    )
    fails = _fails(selfcheck(_write(tmp_path, with_code(_source(A16), code))))
    assert any("'pipelab'" in t for t in fails["imports"]), fails


def test_infinite_loop_is_caught(tmp_path):
    code = reference_code(lessons()[A16].directory) + (
        "\n\ndef _forever(self, stage_latencies, num_microbatches):\n    while True:\n        pass\n\n\n"
        "AsymmetricPipelineScheduler.simulate_1f1b_execution = _forever\n"
    )
    report = selfcheck(_write(tmp_path, with_code(_source(A16), code)))
    fails = _fails(report)
    assert [t for t in fails["timing"] if "simulate_1f1b_execution" in t and "没有返回" in t], fails
    assert not any("solve_optimal_layer_partition" in t for t in fails["timing"])


def test_loop_at_load_time_is_caught(tmp_path):
    code = reference_code(lessons()[A16].directory) + "\n\nwhile True:\n    pass\n"
    fails = _fails(selfcheck(_write(tmp_path, with_code(_source(A16), code))))
    assert "load" in fails, fails


def _found(report, status: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in report.findings:
        if f.status == status:
            out.setdefault(f.topic, []).append(f.text)
    return out


def test_renamed_notebook_is_a_warning(tmp_path):
    """``grade`` grades a folder's only notebook whatever its name (with a note), so a renamed copy is
    a warning, not a failure."""
    report = selfcheck(_write(tmp_path, _source(A16), name="asymmetric_pipeline-Copy1.ipynb"))
    assert report.ok, report.format()
    assert any("asymmetric_pipeline.ipynb" in t for t in _found(report, WARN)["naming"]), report.format()


@pytest.mark.parametrize("folder", ["Downloads", "hw16", "作业"])
def test_any_folder_name_is_fine(tmp_path, folder):
    """A student's notebook in Downloads/ (or any folder): recognised by its cells, a note, exit 0."""
    report = selfcheck(_write(tmp_path, _source(A16), folder=folder))
    assert report.ok and not _found(report, WARN), report.format()
    assert report.assignment == A16  # recognised by its cells, so the rest is still checked
    notes = _found(report, NOTE)["naming"]
    assert len(notes) == 1 and folder in notes[0] and "不影响评分" in notes[0]
    assert "❌" not in report.format() and "ℹ️" in report.format()


def test_notebook_in_another_lessons_folder_is_a_warning(tmp_path):
    report = selfcheck(_write(tmp_path, _source(A16), folder="03-load-imbalance"))
    assert report.ok and report.assignment == A16
    assert any(A16 in t for t in _found(report, WARN)["naming"]), report.format()


def test_unattempted_challenge_costs_nothing_and_private_helpers_are_ignored(tmp_path):
    """The reference with the challenge left as the release's stub, and a private helper of the
    student's own beside the exercise: exit 0, the challenge a ⚠️ "不扣分", the helper not mentioned."""
    a = load_assignment(lessons()[A16].directory)
    assert extra_credit_targets(a) == {"simulate_1f1b"}
    nb = _source(A16)
    release = json.loads(a.release.read_text(encoding="utf-8"))
    _cell(nb, "challenge-exercise")["source"] = _cell(release, "challenge-exercise")["source"]
    exercise = _cell(nb, "exercise")
    exercise["source"] = "".join(exercise["source"]) + (
        "\n\ndef _check_m(m):\n    if m < 1:\n        raise ValueError('m >= 1')\n    return m\n"
    )
    path = _write(tmp_path, nb, folder="Downloads")
    report = selfcheck(path)
    assert report.ok, report.format()
    warns = _found(report, WARN)["timing"]
    assert warns == ["挑战题（附加分）simulate_1f1b 未作答（抛出 NotImplementedError）：不扣分，做对了加分"]
    assert "_check_m" not in report.format()
    # ... and a private helper in the release's own exercise cell is not an exercise either
    targets = exercise_targets(a)
    assert all(not name.startswith("_") for name in targets) and "simulate_1f1b" in targets
    cli = subprocess.run(
        [sys.executable, "-m", "autograder", "selfcheck", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0 and "⚠️" in cli.stdout and "不扣分" in cli.stdout, cli.stdout + cli.stderr


def test_edited_locked_cell_is_caught(tmp_path):
    nb = _source(A16)
    cell = _cell(nb, "simulator")
    cell["source"] = "".join(cell["source"]).replace(
        "check_close(total_time, 280.0", "check_close(total_time, total_time"
    )
    fails = _fails(selfcheck(_write(tmp_path, nb)))
    assert any("'simulator'" in t for t in fails["locked cells"]), fails


def test_empty_answer_is_caught(tmp_path):
    nb = _source(A16)
    _cell(nb, "q2")["source"] = "YOUR ANSWER HERE\n\n  "
    fails = _fails(selfcheck(_write(tmp_path, nb)))
    assert len(fails["answers"]) == 1 and "q2" in fails["answers"][0], fails


def test_visible_scenarios_come_from_check_cells():
    """The scenarios are the literal calls of the notebook's check cells, e.g. the seed's case."""
    scenarios = visible_scenarios(load_assignment(lessons()[A16].directory))
    sim = scenarios["AsymmetricPipelineScheduler.simulate_1f1b_execution"]
    assert (([30.0, 10.0, 10.0, 20.0], 8), {}) in sim
    assert ((32, 2.0, 16.0, 8.0, 4), {}) in scenarios[
        "AsymmetricPipelineScheduler.solve_optimal_layer_partition"
    ]


def test_cli_exit_codes():
    a = load_assignment(lessons()[A16].directory)

    def cli(path):
        cmd = [sys.executable, "-m", "autograder", "selfcheck", str(path)]
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)

    ok, bad = cli(a.source), cli(a.release)
    assert ok.returncode == 0 and "可以提交" in ok.stdout, ok.stdout + ok.stderr
    assert bad.returncode == 1 and "❌" in bad.stdout


def test_validate_button_reply(tmp_path):
    """What nbgrader's Validate button receives (autograder.student.lab_selfcheck): nbgrader's success reply for a
    ready notebook, None (nbgrader's own validator) for a notebook of no course assignment, and a report
    whose every text is HTML-escaped (nbgrader's dialog puts it into innerHTML)."""
    from autograder.student.lab_selfcheck import run_selfcheck

    a = load_assignment(lessons()[A16].directory)
    # a ready notebook: the self-check's verdict and caveat, never nbgrader's stock "Success!"
    ready = run_selfcheck(a.source)["value"]["failed"]
    assert len(ready) == 1 and ready[0]["source"].startswith("自检 (selfcheck) ✅ 结论：可以提交")
    assert "不代表隐藏测试 (hidden tests) 的得分" in ready[0]["source"]
    assert "[timing]" in ready[0]["error"]
    not_ready = run_selfcheck(a.release)["value"]["failed"]
    assert not_ready[0]["source"].startswith("自检 (selfcheck) ❌ 结论：请先修正")
    other = tmp_path / "elsewhere" / "notes.ipynb"
    other.parent.mkdir()
    other.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}))
    assert run_selfcheck(other) is None
    code = reference_code(lessons()[A16].directory) + "\nraise ValueError('<img src=x onerror=alert(1)>')\n"
    reply = run_selfcheck(_write(tmp_path, with_code(_source(A16), code)))
    error = reply["value"]["failed"][0]["error"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in error and "<img" not in error
