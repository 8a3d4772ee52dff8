"""Figure layout (issue 21, point 8): the bar chart's legend covers no bar, the memory figure names its
lines like the Gantt chart names its rows (stage p), and every time axis of lesson 16 states its unit."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from pipelab import run  # noqa: E402
from pipelab.plot import memory_over_time, stage_bars  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "before,after",
    [
        ([32.0, 16.0, 16.0, 24.0], [22.0, 22.0, 22.0, 22.0]),  # lesson 16, §4
        ([22.0, 19.25, 22.0, 27.25], [22.0, 22.75, 21.0, 22.75]),  # lesson 16, extension D (its shape)
        ([3.0] * 5 + [5.4, 3.0, 3.0], [4.0, 3.0, 4.0, 4.0, 3.4, 4.0, 4.0, 3.0]),  # lesson 03's case study
    ],
)
def test_the_legend_covers_no_bar(before, after):
    ax = stage_bars(before, after, labels=("平均切分", "精确划分"))
    fig = ax.figure
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    bars = [p.get_window_extent() for p in ax.patches]
    assert bars and not any(legend.overlaps(b) for b in bars)
    plt.close(fig)


def test_memory_lines_are_named_by_stage():
    tl = run("1f1b", [1.0, 2.0, 1.0], [2.0, 4.0, 2.0], microbatches=4, activation_bytes=[1.0, 1.0, 1.0])
    ax = memory_over_time(tl)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["stage 0", "stage 1", "stage 2"]
    plt.close(ax.figure)


def test_every_time_axis_of_lesson_16_states_its_unit():
    nb = json.loads(
        (ROOT / "solutions" / "16-asymmetric-pipeline" / "asymmetric_pipeline.ipynb").read_text("utf-8")
    )
    calls = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code" or "gantt(" not in cell["source"]:
            continue
        tree = ast.parse("\n".join(line for line in cell["source"].splitlines() if not line.startswith("%")))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "gantt":
                calls += 1
                assert any(k.arg == "time_unit" for k in node.keywords), (cell["id"], ast.unparse(node)[:80])
    assert calls >= 6
