"""Lesson 16's challenge (extra credit): notebook cells, rubric, catalogue and the facts the contract states.

* the source has the challenge section after the questions: the contract, a solution cell defining
  ``simulate_1f1b``, and a locked 0-point check cell whose grade_id is the rubric's extra-credit item;
  the release shows the stub; the source notebook earns the item when it executes (its check prints ✅);
* the rubric makes ``challenge`` a 2-point extra-credit code item and keeps the pass line at 8 of 10;
* the catalogue has its typical mistakes and null implementations, each with a stated challenge score
  (``tests/test_lesson16_grading.py`` grades every file and compares exactly; nulls state 0);
* the order the contract describes is the course library's 1F1B order (which tests/pipelab compares with
  PyTorch's goldens), and the facts the contract offers for self-checking hold for the simulator: the
  uniform closed form, the lower bound, the forward formula when the last stage has both the largest f
  and the largest b (thousands of random cases; a last stage with only the largest f+b is not enough:
  f = [1,12,1,2], b = [12,1,1,12]), and the visible check's numbers.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from pathlib import Path

import pytest
import yaml

from pipelab import one_f_one_b, run

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = ROOT / "autograder" / "lessons" / "16-asymmetric-pipeline"
SOURCE = ROOT / "solutions" / "16-asymmetric-pipeline" / "asymmetric_pipeline.ipynb"
RELEASE = ROOT / "lessons" / "16-asymmetric-pipeline" / "asymmetric_pipeline.ipynb"
CHALLENGE_EXPECT = re.compile(r"^# expect: .*\bchallenge=([0-9.]+)\s*$", re.MULTILINE)
REQUIRED = {
    "challenge_forward_formula",
    "challenge_lower_bound",
    "challenge_gpipe_order",
    "challenge_same_warmup",
    "challenge_bubble_forward_only",
    "challenge_missing_validation",
    "challenge_null_zeros",
    "challenge_null_raises_value_error",
    "challenge_null_returns_inputs",
}


def _cells(path: Path) -> dict[str, dict]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return {c["id"]: c for c in nb["cells"]}


def _src(cell) -> str:
    return cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])


def test_rubric_item_is_extra_credit_and_the_pass_line_stays():
    rubric = yaml.safe_load((ASSIGNMENT / "rubric.yaml").read_text(encoding="utf-8"))
    items = {it["id"]: it for it in rubric["items"]}
    ch = items["challenge"]
    assert (ch["kind"], ch["points"], ch["extra_credit"]) == ("code", 2, True)
    regular = sum(it["points"] for it in rubric["items"] if not it.get("extra_credit"))
    assert (rubric["pass_line"], regular) == (8, 10)


@pytest.mark.parametrize("path", [SOURCE, RELEASE], ids=["source", "release"])
def test_notebook_cells(path):
    cells = _cells(path)
    order = list(cells)
    assert order.index("q3") < order.index("challenge-intro") < order.index("challenge-exercise")
    assert order.index("challenge-exercise") < order.index("challenge") < order.index("grading")
    assert _src(cells["challenge-intro"]).startswith("## 挑战题（附加分）")
    ex, check = (
        cells["challenge-exercise"]["metadata"]["nbgrader"],
        cells["challenge"]["metadata"]["nbgrader"],
    )
    assert (ex["solution"], ex["grade"], ex["grade_id"]) == (True, False, "challenge-exercise")
    assert (check["grade"], check["solution"], check["locked"], check["points"]) == (True, False, True, 0)
    code = _src(cells["challenge-exercise"])
    assert "def simulate_1f1b(forward_times, backward_times, num_microbatches):" in code
    if path == RELEASE:
        assert "raise NotImplementedError()" in code and "BEGIN SOLUTION" not in code
    else:
        assert code.count("### BEGIN SOLUTION") == 1 and "import pipelab" not in code
    grading = _src(cells["grading"])
    assert "`challenge`" in grading and "附加" in grading


def test_source_notebook_passes_its_visible_check(executed_notebook):
    nb, _ = executed_notebook(SOURCE)
    cell = next(c for c in nb.cells if c.get("id") == "challenge")
    text = "".join(o.get("text", "") for o in cell.get("outputs", []))
    assert "challenge：可视检查全部通过" in text and not any(
        o.get("output_type") == "error" for o in cell.outputs
    )


def test_catalogue_states_the_challenge_scores():
    files = {p.stem: p.read_text(encoding="utf-8") for p in (ASSIGNMENT / "mistakes").glob("challenge_*.py")}
    assert REQUIRED <= set(files), f"missing: {sorted(REQUIRED - set(files))}"
    for name, text in files.items():
        m = CHALLENGE_EXPECT.search(text)
        assert m, f"{name}: the expect line must state challenge=<score>"
        if "_null_" in name:
            assert float(m[1]) == 0.0, f"{name}: a null implementation must score 0"
        else:
            assert 0.0 < float(m[1]) < 2.0 or name == "challenge_same_warmup", name


def contract_order(P: int, m: int, s: int) -> list[tuple[str, int]]:
    """The per-stage order exactly as the contract words it."""
    w = min(m, P - s)
    ops = [("F", k) for k in range(w)]
    for k in range(m):
        ops.append(("B", k))
        if w + k < m:
            ops.append(("F", w + k))
    return ops


def test_contract_order_is_the_course_library_1f1b():
    for P in range(1, 9):
        for m in range(1, 13):
            lib = one_f_one_b(P, m).orders
            for s in range(P):
                assert [(kind, k) for _, kind, k in lib[s]] == contract_order(P, m, s), (P, m, s)


def _makespan(f, b, m):
    return run("1f1b", f, b, microbatches=m).makespan


def test_the_facts_the_contract_offers_for_self_checking():
    rng = random.Random(13)
    for _ in range(200):
        P, m = rng.randint(1, 8), rng.randint(1, 20)
        f = [round(rng.uniform(0.0, 10.0), 2) for _ in range(P)]
        b = [round(rng.uniform(0.0, 20.0), 2) for _ in range(P)]
        fb = [x + y for x, y in zip(f, b, strict=True)]
        T = _makespan(f, b, m)
        assert T >= max(sum(fb[:s]) + m * fb[s] for s in range(P)) - 1e-9
        if f[-1] == max(f) and b[-1] == max(b):
            assert math.isclose(T, sum(fb) + (m - 1) * max(fb))
        assert math.isclose(_makespan([f[0]] * P, [b[0]] * P, m), (m + P - 1) * fb[0], abs_tol=1e-9)


def _tail_formula(f, b, m):
    return math.fsum(f) + math.fsum(b) + (m - 1) * max(x + y for x, y in zip(f, b, strict=True))


def test_the_tail_formula_holds_when_the_last_stage_has_the_largest_f_and_b():
    """The self-check's third fact, on 4,000 random cases drawn to be hard: the other stages anywhere up to
    the last stage's f and b, ties included, integer and real costs, m < P included; checked against
    pipelab's simulator and the hidden tests' own longest-path oracle (no pipelab in the grader)."""
    hidden = _hidden_tests()
    rng = random.Random(2121)
    for i in range(4000):
        P, m = rng.randint(1, 9), rng.randint(1, 24)
        if i % 2:
            f_top, b_top = rng.randint(1, 12), rng.randint(1, 24)
            f = [float(rng.randint(0, f_top)) for _ in range(P - 1)] + [float(f_top)]
            b = [float(rng.randint(0, b_top)) for _ in range(P - 1)] + [float(b_top)]
        else:
            f_top, b_top = round(rng.uniform(0.5, 10.0), 2), round(rng.uniform(0.5, 20.0), 2)
            f = [rng.choice([f_top, round(rng.uniform(0.0, f_top), 2)]) for _ in range(P - 1)] + [f_top]
            b = [rng.choice([b_top, round(rng.uniform(0.0, b_top), 2)]) for _ in range(P - 1)] + [b_top]
        want = _tail_formula(f, b, m)
        assert math.isclose(_makespan(f, b, m), want, abs_tol=1e-9), (f, b, m)
        assert math.isclose(hidden.simulated(f, b, m), want, abs_tol=1e-9), (f, b, m)
        # and it is the last stage's lower bound
        assert math.isclose(hidden.lower_bound(f, b, m), want, abs_tol=1e-9), (f, b, m)


def test_the_largest_f_plus_b_last_is_not_enough():
    """The counterexample the lesson prints (issue 21): stage 3 is the unique maximum of f+b, yet the tail
    formula underestimates; on a small grid of such cases it fails 36 times of 882."""
    f, b = [1.0, 12.0, 1.0, 2.0], [12.0, 1.0, 1.0, 12.0]
    fb = [x + y for x, y in zip(f, b, strict=True)]
    assert fb.index(max(fb)) == 3 and fb.count(max(fb)) == 1
    assert [(_makespan(f, b, m), _tail_formula(f, b, m)) for m in (3, 4, 6)] == [
        (74, 70),
        (87, 84),
        (113, 112),
    ]
    assert [_hidden_tests().simulated(f, b, m) for m in (3, 4, 6)] == [74, 87, 113]
    cases = wrong = 0
    for f in itertools.product([1.0, 2.0, 12.0], repeat=4):
        for b in itertools.product([1.0, 2.0, 12.0], repeat=4):
            fb = [x + y for x, y in zip(f, b, strict=True)]
            if fb[-1] <= max(fb[:-1]) or (f[-1] == max(f) and b[-1] == max(b)):
                continue
            for m in (3, 4, 6):
                cases += 1
                wrong += _makespan(list(f), list(b), m) != _tail_formula(f, b, m)
    assert (cases, wrong) == (882, 36)


def test_the_lesson_prints_the_counterexample_and_the_check(executed_notebook):
    nb, _ = executed_notebook(SOURCE)
    out = _text(next(c for c in nb.cells if c.get("id") == "ext-tail-formula"))
    for m, sim, formula in ((3, 74, 70), (4, 87, 84), (6, 113, 112)):
        assert f"m = {m}：1F1B 模拟 T = {sim}，公式 sum(f+b) + (m-1)*max(f+b) = {formula}" in out
    assert "1000 个随机情形中公式精确 1000 个" in out
    assert "网格上 882 个情形中公式不成立 36 个" in out
    intro = _src(_cells(SOURCE)["challenge-intro"])
    assert "$f=[1,12,1,2]$、$b=[12,1,1,12]$" in intro and "makespan 是 74，公式给 70" in intro
    assert "前向耗时和反向耗时**都**是各阶段中最大的" in intro


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []))


def _hidden_tests():
    import importlib.util

    spec = importlib.util.spec_from_file_location("challenge_hidden_tests", ASSIGNMENT / "test_challenge.py")
    hidden = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hidden)
    return hidden


def test_visible_check_numbers():
    tl = run("1f1b", [30.0, 10.0, 10.0, 20.0], [60.0, 20.0, 20.0, 40.0], microbatches=8)
    assert (tl.makespan, round(tl.bubble_ratio, 12)) == (750.0, 0.44)
    assert _makespan([1.0] * 4, [2.0] * 4, 6) == 27.0
    assert _makespan([1.0, 2.0], [3.0, 4.0], 1) == 10.0
    check = _src(_cells(SOURCE)["challenge"])
    for number in ("750.0", "0.44", "27.0", "10.0"):
        assert number in check


def test_the_hidden_tests_oracle_is_the_course_library_simulator():
    """The grader may not import pipelab, so the hidden tests carry their own 1F1B oracle: it must agree
    with pipelab's event simulator everywhere (random cases, m < P, zero-cost stages, long pipelines)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("challenge_hidden_tests", ASSIGNMENT / "test_challenge.py")
    hidden = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hidden)
    rng = random.Random(1613)
    cases = [([30.0, 10.0, 10.0, 20.0], [60.0, 20.0, 20.0, 40.0], 8), ([0.0, 0.0], [0.0, 0.0], 3)]
    for _ in range(300):
        P, m = rng.randint(1, 9), rng.randint(1, 20)
        cases.append(
            (
                [round(rng.uniform(0, 10), 2) for _ in range(P)],
                [round(rng.uniform(0, 20), 2) for _ in range(P)],
                m,
            )
        )
    cases.append(([rng.uniform(0, 10) for _ in range(32)], [rng.uniform(0, 20) for _ in range(32)], 256))
    for f, b, m in cases:
        assert math.isclose(hidden.simulated(f, b, m), _makespan(f, b, m), rel_tol=1e-12, abs_tol=1e-12), (
            f,
            b,
            m,
        )
