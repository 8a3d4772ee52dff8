"""Lesson 16's catalogue of typical mistakes: complete, annotated, and its promises readable.

(That every file gets exactly the scores it promises, the reference full marks and the stub nothing is
checked for every lesson by tests/test_lessons.py.)

Each file in ``autograder/lessons/16-asymmetric-pipeline/mistakes/`` stands for an exercise class that gets one
thing wrong (or, for the correct alternatives, nothing) and starts with
``# expect: simulator=<score> min_microbatches=<score> solver=<score>``. Most are patches (``# include: reference``: the reference
-- the source notebook's solution code cells, ``autograder.authoring.demo.reference_code`` -- followed by a subclass
that overrides the one wrong method, expanded by ``autograder.authoring.demo.mistake_code``); the release stub and
the alternative solutions are complete files. The code is graded by the real engine, through the
sandboxed worker, with the assignment's hidden tests; the scores must match exactly (the engine rounds to
4 decimals). The reference code itself must get every point. The same files feed the demo class.
"""

from __future__ import annotations

import re
from pathlib import Path

ASSIGNMENT = Path(__file__).resolve().parent.parent / "autograder" / "lessons" / "16-asymmetric-pipeline"
MISTAKES = sorted((ASSIGNMENT / "mistakes").glob("*.py"))
EXPECT = re.compile(
    r"^# expect: simulator=([0-9.]+) min_microbatches=([0-9.]+) solver=([0-9.]+)(?: challenge=([0-9.]+))?\s*$",
    re.MULTILINE,
)  # challenge= (extra credit): stated by the files about it, defaulted below for the others

# The catalogue the rubric relies on (demo class, README); more files may be added.
REQUIRED = {
    "closed_form",
    "release_stub",
    "hardcoded_seed_answer",
    "sim_ignores_upstream",
    "sim_ignores_own_previous",
    "bubble_uniform_formula",
    "missing_validation",
    "numpy_floats_ok",
    "numpy_int_list",
    "modifies_input",
    "seed_reference",
    "partition_ignores_fixed_costs",
    "partition_remainder_on_last",
    "partition_allows_zero_layers",
    "solver_pure_python_quadratic",
    "solver_exponential",
    "bubble_steady_state_limit",
    # min_microbatches (issue 22): brute force, off-by-one, no floor, uniform formula, float type, no
    # validation; and a float binary search that must earn everything (the float rules are fair)
    "minmb_linear_scan",
    "minmb_simulator_search",
    "minmb_floor_not_ceil",
    "minmb_ignores_floor",
    "minmb_uniform_formula",
    "minmb_returns_float",
    "minmb_missing_validation",
    "minmb_binary_search_ok",
    # null implementations (issue 12): code that does nothing scores 0 on every code item
    "null_pass",
    "null_zeros",
    "null_ones",
    "null_returns_input",
    "null_raises_value_error",
    "null_empty_list",
}


def test_catalogue_is_complete_and_annotated():
    names = {p.stem for p in MISTAKES}
    assert REQUIRED <= names, f"missing mistake files: {sorted(REQUIRED - names)}"
    for path in MISTAKES:
        assert EXPECT.search(path.read_text(encoding="utf-8")), f"{path.name} has no '# expect:' header"


def test_null_implementations_score_zero_and_half_the_contract_earns_about_half():
    """The promises the catalogue's expect lines carry (issue 12), stated once more where they can be read."""
    nulls = [p for p in MISTAKES if p.stem.startswith("null_")]
    assert len(nulls) >= 6
    for path in nulls:
        m = EXPECT.search(path.read_text(encoding="utf-8"))
        assert (float(m[1]), float(m[2]), float(m[3])) == (0.0, 0.0, 0.0), path.name
    m = EXPECT.search((ASSIGNMENT / "mistakes" / "bubble_steady_state_limit.py").read_text(encoding="utf-8"))
    assert 0.4 <= float(m[1]) / 1 <= 0.6, "right total_time, wrong bubble: about half the simulator item"
