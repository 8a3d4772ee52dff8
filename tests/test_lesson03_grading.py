"""Lesson 03's catalogue of typical mistakes is complete, and its rubric has the points the lesson states.

(That every file gets exactly the scores it promises, the reference full marks and the stub nothing is
checked for every lesson by tests/test_lessons.py.)

Each file in ``autograder/lessons/03-load-imbalance/mistakes/`` stands for the exercise code (all four functions)
with one thing wrong; ``release_stub`` and ``empty`` are the unsolved release and an empty submission.
The mistakes are patches (``# include: reference``: the reference -- the source notebook's four solution
code cells, ``autograder.authoring.demo.reference_code`` -- then the one wrong function redefined), expanded by
``autograder.authoring.demo.mistake_code``. Each starts with
``# expect: stage_times=<s> partition=<s> scheduling=<s> frontier=<s>`` and is graded by the real engine
(sandboxed worker, the assignment's hidden tests); the scores must match exactly (4 decimals). The
reference code itself must get every point.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ASSIGNMENT = Path(__file__).resolve().parent.parent / "autograder" / "lessons" / "03-load-imbalance"
MISTAKES = sorted((ASSIGNMENT / "mistakes").glob("*.py"))
EXPECT = re.compile(r"^# expect: ((?:\w+=[0-9.]+\s*)+)$", re.MULTILINE)
CODE_ITEMS = ("stage_times", "partition", "scheduling", "frontier")

REQUIRED = {
    "release_stub",
    "empty",
    "stage_times_max_over_min",
    "stage_times_no_sum_check",
    "partition_equal_layer_counts",
    "partition_greedy_average",
    "partition_fewer_stages",
    "partition_numpy_ints",
    "scheduling_static_gpipe",
    "scheduling_dynamic_no_memory_cap",
    "scheduling_forward_first",
    "scheduling_overhead_as_compute",
    "frontier_ignores_schedule",
    "frontier_drops_ties",
    # issue 21: the mistakes the hidden tests used to let through
    "frontier_inflight_p_minus_1",
    "partition_ones_then_rest",
    "scheduling_short_batches_crash",
    # null implementations (issue 12): code that does nothing scores 0 on every code item
    "null_pass",
    "null_constants",
    "null_right_type_wrong_values",
    "null_returns_input",
    "null_raises_value_error",
    "null_empty_list",
}


def expected_scores(text: str) -> dict[str, float]:
    match = EXPECT.search(text)
    assert match, "no '# expect:' header"
    pairs = dict(part.split("=") for part in match[1].split())
    return {k: float(v) for k, v in pairs.items()}


def test_catalogue_is_complete_and_annotated():
    names = {p.stem for p in MISTAKES}
    assert REQUIRED <= names, f"missing mistake files: {sorted(REQUIRED - names)}"
    for path in MISTAKES:
        assert set(expected_scores(path.read_text(encoding="utf-8"))) == set(CODE_ITEMS), path.name


def test_rubric_points_and_pass_line():
    rubric = yaml.safe_load((ASSIGNMENT / "rubric.yaml").read_text(encoding="utf-8"))
    points = {it["id"]: float(it["points"]) for it in rubric["items"]}
    assert points == {"stage_times": 2, "partition": 2, "scheduling": 2, "frontier": 1, "q1": 1, "q2": 2}
    assert rubric["pass_line"] == 8
