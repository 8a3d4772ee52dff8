"""The student's path in a real JupyterLab in headless Chromium: open a lesson's release, Run All, see the
figures, paste a correct implementation into the exercise cell(s), re-run the visible checks and see ✅,
then a wrong one and see the friendly ❌ message (期望 … 实际 …), not a bare AssertionError.

Screenshots go to ``build/test-artifacts/browser/<test name>/`` (see ``conftest.py``; ``$BROWSER_ARTIFACTS``
overrides the root): ``*-timeline.png`` (the lesson with its timeline figure), ``*-success.png``,
``*-failure.png``, and ``FAILED.png`` when a test fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.authoring.demo import mistake_code, reference_cells

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
# issue 21: the message comes first and the only location shown is the check cell's failing line
FRIENDLY_FAILURE = r"❌ [^\n]*：期望 [^\n]*，实际[^\n]*\s*（没有通过的检查在单元格第 \d+ 行"


def split_functions(code: str) -> dict[str, str]:
    """A module made of top-level ``def``s → {function name: its source} (comments before the first
    ``def`` are dropped)."""
    parts = re.split(r"(?m)^(?=def )", code)
    return {re.match(r"def (\w+)", p).group(1): p.rstrip() + "\n" for p in parts if p.startswith("def ")}


def known_backend_defect(nb) -> str | None:
    """The one known reason for figures not to render, diagnosed precisely: the kernel inherits
    ``MPLBACKEND=Agg`` (the Makefile exports it to everything, ``make lab`` included) and the notebook
    never selects the inline backend. Anything else that stops a figure is a plain failure."""
    if nb.lab.env.get("MPLBACKEND", "").lower() != "agg":
        return None
    sources = nb.js("return panel.content.widgets.map(c => c.model.sharedModel.getSource());")
    if any(re.search(r"(?m)^\s*%matplotlib\s+inline", src) for src in sources):
        return None
    return (
        f"KNOWN DEFECT: {nb.path} draws nothing in JupyterLab when MPLBACKEND=Agg is in the environment, as "
        "`make lab` sets it (Makefile: export MPLBACKEND := Agg) and the notebook has no `%matplotlib inline`; "
        "fix: add `%matplotlib inline` to its setup cell in solutions/ (then `make release`), and/or unset "
        "MPLBACKEND for `make lab`"
    )


def assert_no_error(text: str, what: str) -> None:
    assert "Traceback" not in text and "❌" not in text, f"{what} shows an error:\n{text}"


def test_lesson16_student_path(notebook_ui, artifacts, steps):
    """Lesson 16: figures render on Run All; reference → ✅ in the three checks; a simulator that ignores the
    upstream stage → ❌ with expected and actual values in the simulator check."""
    assignment = REPO / "autograder" / "lessons" / "16-asymmetric-pipeline"
    mistakes = assignment / "mistakes"
    nb = notebook_ui("16-asymmetric-pipeline/asymmetric_pipeline.ipynb")
    steps("open the release, kernel idle")
    figure_cells = [k for k in nb.index if k.startswith("fig-")]
    assert "fig-gantt-main" in figure_cells and len(figure_cells) >= 3

    # 1. Run All on the untouched release: the lesson's figures render, the checks stop at the stub
    nb.run_all()
    out = nb.wait_output("simulator", r"NotImplementedError")
    nb.wait_idle()
    for key in figure_cells:
        nb.wait_figure(key)
    assert "✅" not in out
    nb.screenshot(artifacts / "lesson16-timeline.png", "fig-gantt-main")
    assert re.search(r"总时间 T = 280", nb.outputs("fig-gantt-main"))
    steps("run all, figures rendered")

    # 2. the reference implementation (the source notebook's solution cell): both visible checks pass
    nb.set_source("exercise", reference_cells(assignment)["exercise"])
    nb.run_from("exercise")
    sim = nb.wait_output("simulator", r"simulator：可视检查全部通过")
    sol = nb.wait_output("solver", r"solver：可视检查全部通过")
    inv = nb.wait_output("min_microbatches", r"min_microbatches：可视检查全部通过")
    nb.wait_idle()
    for text, what in ((sim, "simulator check"), (sol, "solver check"), (inv, "min_microbatches check")):
        assert_no_error(text, what)
        assert text.count("✅") >= 3, text
    assert "✅ [30, 10, 10, 20]、m = 8 的总时间" in sim
    nb.screenshot(artifacts / "lesson16-success.png", "simulator")
    steps("reference: checks pass")

    # 3. a wrong simulator: the friendly message, with what was expected and what came back
    nb.set_source("exercise", mistake_code(mistakes / "sim_ignores_upstream.py"))
    nb.run_from("exercise")
    sim = nb.wait_output("simulator", FRIENDLY_FAILURE)
    nb.wait_idle()
    assert re.search(r"❌ \[30, 10, 10, 20\]、m = 8 的总时间：期望 280(\.0)?，实际得到 160(\.0)?", sim), sim
    assert "可视检查全部通过" not in sim
    assert "checks.py" not in sim and "Traceback" not in sim, sim  # no library frames
    nb.screenshot(artifacts / "lesson16-failure.png", "simulator")
    steps("wrong simulator: friendly failure")


def test_lesson03_student_path(notebook_ui, artifacts, steps):
    """Lesson 03: the reference in the four exercise cells, Run All → all four checks ✅ and every figure
    rendered; a wrong ``stage_times`` (max/min) → ❌ with expected and actual values. (Run All on the
    untouched release is covered by the lesson 16 test; skipped here to keep the suite under 3 minutes.)"""
    assignment = REPO / "autograder" / "lessons" / "03-load-imbalance"
    mistakes = assignment / "mistakes"
    nb = notebook_ui("03-load-imbalance/load_imbalance.ipynb")
    steps("open the release, kernel idle")
    exercises = {  # exercise cell → its visible-check cell, in notebook order
        "ex-stage-times": "stage_times",
        "ex-partition": "partition",
        "ex-scheduling": "scheduling",
        "ex-frontier": "frontier",
    }
    assert set(exercises) | set(exercises.values()) <= set(nb.index)
    figure_cells = [k for k in nb.index if k.startswith("fig-")]
    assert len(figure_cells) >= 2

    # 1. the reference, each source solution cell in its exercise cell: every check passes, figures render
    reference = reference_cells(assignment)
    assert set(reference) == set(exercises)
    for cell in exercises:
        nb.set_source(cell, reference[cell])
    nb.run_all()
    for check in exercises.values():
        text = nb.wait_output(check, rf"{check}：可视检查全部通过")
        assert_no_error(text, f"{check} check")
        assert "✅" in text
    nb.wait_idle()
    nb.screenshot(artifacts / "lesson03-success.png", "stage_times")
    figure_problem = None  # judged at the end, so that the failure path below is checked regardless
    try:
        for key in figure_cells:
            nb.wait_figure(key)
        nb.screenshot(artifacts / "lesson03-figure.png", figure_cells[0])
    except AssertionError as exc:
        figure_problem = exc
    steps("reference in 4 cells, run all: checks pass, figures checked")

    # 2. a wrong stage_times (imbalance ratio max/min instead of max/mean)
    wrong = split_functions((mistakes / "stage_times_max_over_min.py").read_text(encoding="utf-8"))
    nb.set_source("ex-stage-times", wrong["stage_times"])
    nb.run_from("ex-stage-times")
    text = nb.wait_output("stage_times", FRIENDLY_FAILURE)
    nb.wait_idle()
    assert re.search(r"❌ [^\n]*不均衡比[^\n]*：期望 1\.4，实际得到 ", text), text
    nb.screenshot(artifacts / "lesson03-failure.png", "stage_times")
    steps("wrong stage_times: friendly failure")

    if figure_problem is not None:
        reason = known_backend_defect(nb)
        if reason:
            pytest.xfail(reason)
        raise figure_problem
