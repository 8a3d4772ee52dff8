"""The one-click self-check in a real JupyterLab in headless Chromium: nbgrader's Validate toolbar button
runs ``python -m autograder selfcheck``'s check (``autograder.student.lab_selfcheck``) and shows its report:
first on the untouched release (stubs, empty answers), then after the student imports ``pipelab``.

Screenshots: ``build/test-artifacts/browser/<test name>/validate-*.png``."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from autograder.authoring.demo import reference_cells

from .test_student_path import REPO

pytestmark = pytest.mark.browser

ASSIGNMENT = "16-asymmetric-pipeline"
COPY = f"selfcheck/{ASSIGNMENT}/asymmetric_pipeline.ipynb"  # its own copy: Validate saves the notebook


def validate(nb, shot) -> str:
    """Click the notebook's Validate button; return the dialog's text once the report is in, then close it."""
    nb.page.locator(f'[id="{nb.panel_id}"] .validate-button').first.click()
    dialog = nb.page.locator(".jp-Dialog")
    dialog.get_by_text("Validation Results").wait_for(timeout=120_000)
    text = dialog.inner_text()
    nb.page.screenshot(path=str(shot))
    dialog.locator(".jp-mod-accept").click()
    dialog.wait_for(state="detached")
    return text


def test_validate_button_runs_the_selfcheck(lab, notebook_ui, artifacts, steps):
    enabled = Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / "autograder.json"
    assert enabled.is_file(), (
        f"{enabled} is missing: the Validate → selfcheck extension is not enabled (make setup)"
    )
    dest = lab.root_dir / COPY
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(lab.root_dir / ASSIGNMENT / "asymmetric_pipeline.ipynb", dest)
    nb = notebook_ui(COPY)
    steps("open a copy of the release")

    text = validate(nb, artifacts / "validate-release.png")
    assert "自检 (selfcheck)" in text, text  # the self-check's report, not nbgrader's own validator
    assert "NotImplementedError" in text and "q1" in text and "❌" in text
    assert "test_" not in text  # no hidden test names
    # the self-check's own verdict heads the dialog (the lab extension), not nbgrader's "cell failed"
    assert (
        "自检结果 / self-check: 还不能完整评分 (not ready)" in text
        and "The following cell failed" not in text
    )
    steps("validate the release: stubs and empty answers reported")

    code = (
        "import pipelab.figures  # 只在 JupyterLab 里有\n"
        + reference_cells(REPO / "autograder" / "lessons" / ASSIGNMENT)["exercise"]
    )
    nb.set_source("exercise", code)
    text = validate(nb, artifacts / "validate-pipelab.png")
    assert "'pipelab'" in text and "[imports]" in text, text
    # the pasted exercise methods are no longer stubs (the extra-credit challenge still is)
    assert "simulate_1f1b_execution 还没有实现" not in text, text
    assert "solve_optimal_layer_partition 还没有实现" not in text, text
    steps("validate after importing pipelab: reported")


def test_validate_shows_the_verdict_and_caveat_of_a_ready_notebook(lab, notebook_ui, artifacts, steps):
    """A notebook the grader can grade (the reference, in a folder of the student's own naming): the
    dialog says so in the self-check's words, with its caveat (the hidden tests were not run) and the
    unattempted challenge's ⚠️ 不扣分; never nbgrader's stock "Success! Your notebook passes all the tests.",
    which reads as full marks."""
    import json

    source = REPO / "solutions" / ASSIGNMENT / "asymmetric_pipeline.ipynb"
    release = lab.root_dir / ASSIGNMENT / "asymmetric_pipeline.ipynb"
    nb_json = json.loads(source.read_text(encoding="utf-8"))
    stub = next(
        c
        for c in json.loads(release.read_text(encoding="utf-8"))["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id") == "challenge-exercise"
    )
    for cell in nb_json["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "challenge-exercise":
            cell["source"] = stub["source"]  # the optional challenge left undone
    copy = "my-work/asymmetric_pipeline.ipynb"
    dest = lab.root_dir / copy
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(nb_json, ensure_ascii=False), encoding="utf-8")
    nb = notebook_ui(copy)
    steps("open a ready notebook in a folder of the student's own")

    text = validate(nb, artifacts / "validate-ready.png")
    assert "自检结果 / self-check: 可以提交 (ready to submit)" in text, text
    assert "不代表隐藏测试 (hidden tests) 的得分" in text, text  # the caveat is shown
    assert "挑战题（附加分）simulate_1f1b 未作答" in text and "不扣分" in text, text
    assert "my-work" in text and "不影响评分" in text, text  # the folder's name: a note, not a failure
    assert "Success!" not in text and "passes all the tests" not in text, text
    assert "The following cell failed" not in text and "❌" not in text, text
    steps("validate a ready notebook: the self-check's verdict and caveat, not nbgrader's Success!")
