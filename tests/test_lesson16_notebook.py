"""Lesson 16 runs, renders, and every number its prose states holds for the reference.

* the source notebook executes top to bottom with every visible check passing;
* the release executes top to bottom (a runaway guard of 60 s; about 20 s on an idle 2-core machine), and the only errors are the two exercise methods
  raising ``NotImplementedError`` in the visible-check cells;
* nbconvert renders the executed source to HTML with the figures as images;
* the numbers the lesson states are checked against the reference code taken from the source's
  exercise cell (executed in-process), with oracles written here (closed forms, brute force).
"""

from __future__ import annotations

import itertools
import json
import random
import re
import statistics
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ASSIGNMENT = "16-asymmetric-pipeline"
NOTEBOOK = "asymmetric_pipeline.ipynb"
SOURCE = ROOT / "solutions" / ASSIGNMENT / NOTEBOOK
RELEASE = ROOT / "lessons" / ASSIGNMENT / NOTEBOOK
CHECK_CELLS = {"simulator", "solver", "min_microbatches", "challenge"}  # challenge: the extra-credit check
FIGURES = {"fig-gantt-main", "fig-bubble-vs-m", "fig-stage-bars", "fig-gantt-rebalance"}


def _src(cell) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


def errors(nb) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                out.setdefault(cell.get("id"), []).append((o["ename"], o["evalue"]))
    return out


def stdout(nb, cell_id: str | None = None) -> str:
    return "".join(
        o.get("text", "")
        for c in nb.cells
        if cell_id in (None, c.get("id"))
        for o in c.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
    )


def images(nb) -> set[str]:
    return {c.get("id") for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})}


@pytest.fixture(scope="module")
def executed_source(executed_notebook):
    return executed_notebook(SOURCE)[0]  # shared with test_lesson16_extension (tests/conftest.py)


@pytest.fixture(scope="module")
def executed_release(executed_notebook):
    return executed_notebook(RELEASE)


@pytest.fixture(scope="module")
def Scheduler():
    """The reference class, from the source notebook's exercise cell, run in-process."""
    nb = json.loads(SOURCE.read_text(encoding="utf-8"))
    (cell,) = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "exercise"]
    namespace: dict = {}
    exec(compile(_src(cell), str(SOURCE) + ":exercise", "exec"), namespace)
    return namespace["AsymmetricPipelineScheduler"]


@pytest.fixture()
def sched(Scheduler):
    return Scheduler()


# ----------------------------------------------------------------------------------------- notebooks
def test_source_runs_with_every_visible_check_passing(executed_source):
    assert errors(executed_source) == {}
    for item in CHECK_CELLS:
        out = stdout(executed_source, item)
        assert f"{item}：可视检查全部通过" in out, out
        assert "❌" not in out
    assert FIGURES <= images(executed_source)


def test_release_runs_with_only_the_stubs_failing(executed_release):
    nb, seconds = executed_release
    assert seconds < 60, f"the release took {seconds:.1f} s to run"
    errs = errors(nb)
    assert set(errs) == CHECK_CELLS, f"unexpected errors: {errs}"
    for cell_id, found in errs.items():
        assert [name for name, _ in found] == ["NotImplementedError"], (cell_id, found)
    assert FIGURES <= images(nb), "figures must come from pipelab, not the student's stubs"


def test_source_renders_to_html_with_figures(executed_source):
    from nbconvert import HTMLExporter

    html, _ = HTMLExporter().from_notebook_node(executed_source)
    assert len(re.findall(r'<img[^>]*\ssrc="data:image/png;base64,', html)) >= len(FIGURES)
    assert "第 16 课" in html and "评分表" in html


def test_printed_numbers_match_the_prose(executed_source):
    prose = "\n".join(_src(c) for c in executed_source.cells if c.cell_type == "markdown")
    out = stdout(executed_source)
    for printed, stated in [
        ("总时间 T = 280.0, 气泡率 = 0.5", "T=70+7\\times30=280"),
        ("极限 1 - mean/max = 0.4167", "0.4167"),
        ("m = 1 时 1 - 1/P = 0.75", "1-1/P"),
        ("注水切分 [3, 11, 11, 7]", "[3,11,11,7]"),
        ("T = 312.0, 气泡率 = 0.4359", "312 ms"),
        ("T = 242.0, 气泡率 = 0.2727", "242 ms"),
        ("最慢 11.0", "最慢阶段为 11"),
        ("精确最小最大划分: [1, 5] -> 各段耗时 [9.0, 5.0], 最慢 9.0", "最慢阶段只有 9"),
    ]:
        assert printed in out, printed
        assert stated in prose, stated
    for m in (1, 4, 8, 32):  # uniform stages: simulated bubble equals (P-1)/(m+P-1) to 4 places
        line = re.search(rf"均匀阶段 m = +{m}: 模拟 ([0-9.]+), \(P-1\)/\(m\+P-1\) = ([0-9.]+)", out)
        assert line and line.group(1) == line.group(2) == f"{3 / (m + 3):.4f}"


# ----------------------------------------------------------------------------------------- simulator
def _flow_oracle(t, m):
    """Double loop over the (k, p) grid: F(k,p) = max(F(k-1,p), F(k,p-1)) + t_p."""
    finish = [0.0] * len(t)
    for _ in range(m):
        prev = 0.0
        for p, tp in enumerate(t):
            prev = finish[p] = max(finish[p], prev) + tp
    return finish[-1]


def test_main_example(sched):
    total, bubble = sched.simulate_1f1b_execution([30.0, 10.0, 10.0, 20.0], 8)
    assert (total, bubble) == (280.0, 0.5)
    assert type(total) is float and type(bubble) is float


def test_closed_form_is_exact(sched):
    rng = random.Random(16)
    for _ in range(300):
        P, m = rng.randint(1, 9), rng.randint(1, 30)
        t = [rng.choice([0.0, 0.5, 1.0, 3.0, 7.25, rng.uniform(0, 50)]) for _ in range(P)]
        if not any(t):
            continue
        total, bubble = sched.simulate_1f1b_execution(t, m)
        closed = sum(t) + (m - 1) * max(t)
        assert total == pytest.approx(closed, rel=1e-12) == _flow_oracle(t, m)
        assert bubble == pytest.approx(1 - m * sum(t) / (P * closed), abs=1e-12)


def test_uniform_stages_bubble(sched):
    for P in range(1, 7):
        for m in range(1, 21):
            _, bubble = sched.simulate_1f1b_execution([2.5] * P, m)
            assert bubble == pytest.approx((P - 1) / (m + P - 1), abs=1e-12)


def test_single_microbatch_bubble(sched):
    rng = random.Random(1)
    for P in range(1, 8):
        t = [rng.uniform(0.1, 9) for _ in range(P)]
        total, bubble = sched.simulate_1f1b_execution(t, 1)
        assert total == pytest.approx(sum(t)) and bubble == pytest.approx(1 - 1 / P)


def test_bubble_decreases_to_one_minus_mean_over_max(sched):
    for t in ([30.0, 10.0, 10.0, 20.0], [3.0, 1.0, 1.0, 2.0], [1.0, 5.0, 2.0]):
        limit = 1 - statistics.mean(t) / max(t)
        bubbles = [sched.simulate_1f1b_execution(t, m)[1] for m in (1, 2, 8, 64, 512, 4096)]
        assert all(a > b for a, b in itertools.pairwise(bubbles)), bubbles
        assert all(b > limit for b in bubbles)
        assert bubbles[-1] - limit < 1e-3
    assert 1 - statistics.mean([30.0, 10.0, 10.0, 20.0]) / 30.0 == pytest.approx(0.41667, abs=1e-5)


def test_simulator_contract_edges(sched):
    import numpy as np

    assert sched.simulate_1f1b_execution([0.0, 0.0, 0.0], 5) == (0.0, 0.0)
    arr = np.array([3.0, 1.0, 2.0])
    lst = [3.0, 1.0, 2.0]
    expected = sched.simulate_1f1b_execution((3.0, 1.0, 2.0), 4)
    assert sched.simulate_1f1b_execution(arr, 4) == expected == sched.simulate_1f1b_execution(lst, 4)
    assert arr.tolist() == lst == [3.0, 1.0, 2.0]
    assert sched.simulate_1f1b_execution([4], np.int64(3)) == (12.0, 0.0)
    for args in (
        [[], 3],
        [[1.0, -1.0], 3],
        [[1.0, float("nan")], 3],
        [[float("inf")], 3],
        [[1.0], 0],
        [[1.0], -2],
        [[1.0], 2.5],
        [[1.0], "3"],
    ):
        with pytest.raises(ValueError):
            sched.simulate_1f1b_execution(*args)


# ----------------------------------------------------------------------------------------- solver
def _loads(counts, cost, head, tail):
    loads = [cost * c for c in counts]
    loads[0] += head
    loads[-1] += tail
    return loads


def _brute(L, cost, head, tail, P):
    """(max, variance) of the best composition of L into P parts >= 1."""
    best = None
    for cuts in itertools.combinations(range(1, L), P - 1):
        b = (0, *cuts, L)
        loads = _loads([b[i + 1] - b[i] for i in range(P)], cost, head, tail)
        key = (max(loads), statistics.pvariance(loads))
        best = key if best is None or key < best else best
    return best


def test_seed_partition_example(sched):
    counts = sched.solve_optimal_layer_partition(32, 2.0, 16.0, 8.0, 4)
    assert counts == [3, 11, 11, 7] and all(type(c) is int for c in counts)
    assert _loads(counts, 2.0, 16.0, 8.0) == [22.0] * 4


def test_rebalancing_example_numbers(sched):
    before = sched.simulate_1f1b_execution(_loads([8, 8, 8, 8], 2.0, 16.0, 8.0), 8)
    after = sched.simulate_1f1b_execution(_loads([3, 11, 11, 7], 2.0, 16.0, 8.0), 8)
    assert before[0] == 312.0 and round(before[1], 4) == 0.4359
    assert after[0] == 242.0 and after[1] == pytest.approx(3 / 11) == pytest.approx((4 - 1) / (8 + 4 - 1))


def test_partition_is_max_then_variance_optimal(sched):
    rng = random.Random(7)
    for _ in range(400):
        P = rng.randint(1, 5)
        L = rng.randint(P, 12)
        cost = rng.choice([0.5, 1.0, 2.0, 3.3])
        head, tail = rng.choice([0.0, 1.0, 2.5, 16.0, 30.0]), rng.choice([0.0, 3.0, 8.0, 13.7])
        counts = sched.solve_optimal_layer_partition(L, cost, head, tail, P)
        assert len(counts) == P and sum(counts) == L and min(counts) >= 1
        loads = _loads(counts, cost, head, tail) if P > 1 else [cost * L + head + tail]
        best = _brute(L, cost, head, tail, P) if P > 1 else (loads[0], 0.0)
        assert max(loads) == pytest.approx(best[0]) and statistics.pvariance(loads) == pytest.approx(best[1])


def test_single_stage_takes_every_layer(sched):
    assert sched.solve_optimal_layer_partition(5, 1.0, 4.0, 3.0, 1) == [5]


def test_partition_contract_edges(sched):
    for args in (
        [3, 1.0, 0.0, 0.0, 4],
        [4, 1.0, 0.0, 0.0, 0],
        [4, 0.0, 0.0, 0.0, 2],
        [4, -1.0, 0.0, 0.0, 2],
        [4, 1.0, -1.0, 0.0, 2],
        [4, 1.0, 0.0, -0.5, 2],
    ):
        with pytest.raises(ValueError):
            sched.solve_optimal_layer_partition(*args)


def test_partition_is_fast_at_the_stated_sizes(sched):
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        counts = sched.solve_optimal_layer_partition(10_000, 1.7, 1234.5, 777.1, 256)
        best = min(best, time.perf_counter() - start)
    assert sum(counts) == 10_000 and len(counts) == 256
    assert best < 0.1, f"{best:.3f} s"


def test_water_filling_counterexample(sched):
    weights = [9.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    # water-filling assumes every layer costs the same (the mean): it splits 3/3
    counts = sched.solve_optimal_layer_partition(len(weights), statistics.mean(weights), 0.0, 0.0, 2)
    assert counts == [3, 3]
    assert max(sum(weights[:3]), sum(weights[3:])) == 11.0
    optimum = min(max(sum(weights[:k]), sum(weights[k:])) for k in range(1, len(weights)))
    assert optimum == 9.0


# ----------------------------------------------------------------------------------------- structure and contract
def _cells() -> list[dict]:
    return json.loads(SOURCE.read_text(encoding="utf-8"))["cells"]


def test_contract_and_exercise_come_before_the_derivation():
    """The recurrence and the contract come first; the closed form and water-filling follow the visible
    checks as "check your result" (issue 13), so the exercise is not solved in the text above it."""
    cells = _cells()
    ids = [c["id"] for c in cells]
    order = [
        "stall",
        "exercise-intro",
        "exercise",
        "simulator",
        "solver",
        "min_microbatches",
        "derivation-intro",
        "exact-formula",
        "rebalance",
        "errata",
        "questions-intro",
    ]
    assert [ids.index(i) for i in order] == sorted(ids.index(i) for i in order), ids
    before = "\n".join(
        _src(c) for c in cells[: ids.index("derivation-intro")] if c["cell_type"] == "markdown"
    )
    assert "F(k,p)=\\max\\{F(k-1,p),\\;F(k,p-1)\\}+t_p" in before  # the recurrence, in 核心概念
    for revealing in ("(m-1)\\,t_{\\max}", "注水法", "当前耗时最小"):  # the closed form, the method
        assert revealing not in before, revealing
    assert "推导与核对" in _src(cells[ids.index("derivation-intro")])


def test_contract_states_the_time_limit_from_the_rubric_and_accepts_any_optimum():
    import yaml

    rubric = yaml.safe_load(
        (ROOT / "autograder" / "lessons" / ASSIGNMENT / "rubric.yaml").read_text(encoding="utf-8")
    )
    limits = rubric["limits"]
    contract = _src(next(c for c in _cells() if c["id"] == "exercise-intro"))
    assert f"每次调用最多 {limits['call_timeout']:g} 秒" in contract
    assert f"整份提交的评分最多 {limits['submission_timeout']:g} 秒" in contract
    assert "返回其中任意一个都算对" in contract


def test_visible_simulator_check_accepts_numpy_floats():
    """The contract accepts numpy floats, so the visible check must too (np.float32 is not a Python float)."""
    import numpy as np

    from pipelab import checks

    class NumpyScheduler:
        def simulate_1f1b_execution(self, t, m):
            if m < 1:
                raise ValueError(m)
            total = sum(t) + (m - 1) * max(t)
            return np.float32(total), np.float64(
                1 - m * sum(t) / (len(t) * total)
            )  # the totals are exact in float32

    (cell,) = [c for c in _cells() if c["id"] == "simulator"]
    namespace = {"AsymmetricPipelineScheduler": NumpyScheduler}
    exec(compile(_src(cell), "simulator", "exec"), namespace)  # raises AssertionError on a ❌
    assert isinstance(namespace["total_time"], np.float32) and checks is not None


def test_visible_checks_let_run_all_go_on_to_the_figures_after_them():
    """In the release the checks raise NotImplementedError; JupyterLab's Run All stops at the first error
    unless the cell is tagged ``raises-exception``, and the derivation's figures come after the checks."""
    cells = _cells()
    ids = [c["id"] for c in cells]
    assert any(i.startswith("fig-") for i in ids[ids.index("solver") :])
    for cell in cells:
        if cell["id"] in CHECK_CELLS:
            assert "raises-exception" in cell["metadata"].get("tags", []), cell["id"]


def test_tail_cost_is_a_stated_assumption_with_training_time_reasons():
    """Issue 13, point 1: multi-step denoising happens at inference, not in training."""
    text = _src(next(c for c in _cells() if c["id"] == "dumbbell"))
    assert "需要实测的假设" in text and "只发生在推理时" in text and "一个**随机采样的噪声水平" in text
    assert "动作专家" in text and "OpenVLA" in text and "V/(12h)" in text


def test_pinned_stage_breaks_alignment_within_one_layer(executed_source):
    """Issue 13, point 5 (erratum 2): a large fixed cost pins a stage at one layer, and then the stages
    are not within one layer's cost of each other; the optimum cannot do better."""
    loads = _loads(_water_fill_oracle(10, 1.0, 50.0, 0.0, 4), 1.0, 50.0, 0.0)
    assert loads == [51.0, 3.0, 3.0, 3.0]
    assert _brute(10, 1.0, 50.0, 0.0, 4)[0] == 51.0  # no partition has a faster slowest stage
    out = stdout(executed_source, "numbers-rebalance")
    assert "注水切分 [1, 3, 3, 3]，各阶段耗时 [51.0, 3.0, 3.0, 3.0]，最慢与最快相差 48（一层只有 1）" in out
    text = _src(next(c for c in _cells() if c["id"] == "rebalance"))
    assert "**分到 2 层以上的阶段**彼此相差不超过一层的耗时 $c$" in text and "钉在 1 层上" in text


def _water_fill_oracle(L, cost, head, tail, P):
    counts = [1] * P
    for _ in range(L - P):
        loads = _loads(counts, cost, head, tail)
        counts[loads.index(min(loads))] += 1
    return counts


def test_seed_overwrite_at_one_stage_cannot_change_the_partition(sched):
    """Issue 13, point 5 (erratum 5): with P = 1 the only valid partition is [L], whatever fixed costs the
    seed's overwrite loses; the lesson says so."""

    def seed_solver(L, cost, head, tail, P):  # the seed's reference, overwrite included
        fixed = [0.0] * P
        fixed[0] = head
        fixed[-1] = tail
        layers = [1] * P
        for _ in range(L - P):
            t = [fixed[i] + layers[i] * cost for i in range(P)]
            layers[t.index(min(t))] += 1
        return layers

    for L in (1, 5, 32):
        assert (
            seed_solver(L, 2.0, 16.0, 8.0, 1)
            == [L]
            == sched.solve_optimal_layer_partition(L, 2.0, 16.0, 8.0, 1)
        )
    text = _src(next(c for c in _cells() if c["id"] == "errata"))
    assert "**不会改变返回的划分**" in text and "唯一合法的划分就是 $[L]$" in text


def test_a_blocked_send_is_a_rendezvous_that_profilers_show():
    """Issue 13, point 3 (the lesson's own text): a blocked NCCL send/recv is a rendezvous and shows as a
    long NCCL kernel that nvidia-smi counts as busy, not as low utilisation."""
    text = _src(next(c for c in _cells() if c["id"] == "stall"))
    assert "**会合**（rendezvous）" in text and "很长的 NCCL kernel" in text and "算作 GPU 忙" in text
    assert "指令序列走到这个 recv" in text
    assert "缓冲区空出来" not in text and "缓冲区有限" not in text


def test_q1_reference_answer_explains_the_rendezvous_and_what_profilers_show():
    """Issue 13, point 3 (the Q1 reference answer): the send completes only when the downstream stage posts its
    recv, which its own instruction order decides; a blocked send/recv is a long NCCL kernel that nvidia-smi
    counts as busy, so utilisation does not reveal it; no receive buffer "freeing up"."""
    text = _src(
        next(c for c in _cells() if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "q1")
    )
    assert "会合（rendezvous）" in text and "send 要和 stage 3 的 recv 配对" in text
    assert "走不到那个 recv" in text and "`NCCL_BUFFSIZE`，默认 4 MiB" in text  # issue 21: NCCL's buffer
    assert "很长的 NCCL kernel" in text and "`nvidia-smi` 也把它算作忙" in text and "看利用率发现不了" in text
    assert "计算 kernel 之间夹着的通信 kernel" in text
    for wrong in ("缓冲区空出来", "缓冲区没有释放", "缓冲区占满", "只会表现为 GPU 利用率偏低"):
        assert wrong not in text, wrong


def test_intro_counts_the_check_cells_that_raise_and_names_contract_three():
    """Issue 21, point 9: the release has four check cells that raise NotImplementedError (simulator,
    solver, min_microbatches, challenge), and each docstring names its contract by its heading (the
    challenge's is 契约四 since issue 22 made min_microbatches 契约三)."""
    release = ROOT / "lessons" / "16-asymmetric-pipeline" / "asymmetric_pipeline.ipynb"
    cells = json.loads(release.read_text(encoding="utf-8"))["cells"]
    checks = [c for c in cells if "raises-exception" in c.get("metadata", {}).get("tags", [])]
    assert len(checks) == 4
    intro = next(c for c in cells if c["id"] == "intro")
    assert "四个检查单元格" in "".join(intro["source"])
    src = {c["id"]: "".join(c["source"]) for c in cells}
    assert "### 契约四" in src["challenge-intro"] and "「契约四」" in src["challenge-exercise"]
    assert "### 契约三：`min_microbatches_for_bubble" in src["exercise-intro"]
    assert "「契约三」" in src["exercise"].split("def min_microbatches_for_bubble", 1)[1]
    assert "挑战题契约" not in src["challenge-exercise"]


def test_solver_check_does_not_depend_on_the_students_simulator(capsys):
    """Issue 21, point 9: a simulator bug must not fail the solver's visible check with a misleading
    message: the check cell computes the bubbles with the course library. Run the release's check cell on
    the reference solver and a simulator that returns (-1.0, -1.0)."""
    cells = {c["id"]: c for c in json.loads(SOURCE.read_text(encoding="utf-8"))["cells"]}
    check = _src(cells["solver"])
    assert "simulate_1f1b_execution" not in check and "forward_flow(" in check
    namespace: dict = {}
    exec(_src(cells["exercise"]), namespace)
    broken = namespace["AsymmetricPipelineScheduler"]
    broken.simulate_1f1b_execution = lambda self, *args: (-1.0, -1.0)
    exec(check, namespace)
    assert "solver：可视检查全部通过" in capsys.readouterr().out


def test_one_meaning_per_symbol():
    """Issue 21, point 6: f_p/b_p are forward/backward times only (fixed costs are e_p), the micro-batch
    size is b_μ (not b), s is only a sequence length (stage indices are p) in lesson 16's maths."""
    text = "\n".join(
        _src(c)
        for c in json.loads(SOURCE.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "markdown"
    )
    maths = "\n".join(re.findall(r"\$\$.+?\$\$|\$[^$]+\$", text, flags=re.S))
    for stale in (
        "f_0",
        "f_{P-1}=",
        "T_p=f_p",
        "f_j+c",
        "f_s",
        "b_s",
        "w_s",
        "\\max_s",
        "_{j<s}",
        "P-s",
        "s\\,b\\,h",
    ):
        assert stale not in maths, stale
    assert not re.search(r"\$b=\d\$|\$b\$|\$6b\$", text)
    assert "$T_p=e_p+c\\,L_p .$" in text.replace("$$", "$") and "s\\,b_\\mu\\,h\\,(34+5as/h)" in maths
    assert "$w_p=\\min(m,P-p)$" in text


def test_an_expert_q1_answer_that_denies_backpressure_in_the_main_example_earns_full_marks():
    import yaml

    from autograder.grading.written import suggest

    rubric = yaml.safe_load(
        (ROOT / "autograder" / "lessons" / ASSIGNMENT / "rubric.yaml").read_text(encoding="utf-8")
    )
    q1 = next(it for it in rubric["items"] if it["id"] == "q1")
    expert = (
        "在 [30,10,10,20] 里没有背压：最慢的 stage 0 在最前面，下游每个阶段都比它快，所以 stage 1 的停顿全部是饥饿，"
        "因为 stage 0 每 30 ms 才交出一个微批次，stage 1 算完 10 ms 后只能等输入。背压只在下游更慢时出现，例如 "
        "[20,10,10,30]：stage 3 还在算上一个 30 ms 的微批次、没发出 recv，stage 2 的 send 就完成不了，因为 send 要等"
        "对应的 recv，等待沿反方向传到上游。"
    )
    assert suggest(expert, q1).score == 2.0


# ----------------------------------------------------------------------------------------- min_microbatches
def test_no_text_gives_the_inverse_of_the_bubble():
    """Issue 22, "derive, not transcribe": task three's answer is not in the text. No markdown cell (nor a
    release code cell) states the threshold: no ceiling, no solved-for-m form; the closed form and the
    floor appear only after the exercise (section 3), as for the simulator."""
    release = json.loads(RELEASE.read_text(encoding="utf-8"))["cells"]
    texts = [_src(c) for c in _cells() if c["cell_type"] == "markdown"]
    texts += [_src(c) for c in release if c["cell_type"] == "code"]
    for text in texts:
        for revealing in ("\\lceil", "⌈", "ceil(", "m\\ge\\frac", "m \\ge \\frac", "m^*", "m^\\ast"):
            assert revealing not in text, (revealing, text[:80])
    intro = _src(next(c for c in _cells() if c["id"] == "exercise-intro"))
    assert "**任务三" in intro and "没有给出" in intro and "推导" in intro
    goals = _src(next(c for c in _cells() if c["id"] == "goals"))
    assert "**推导**" in goals and "最少要多少个微批次" in goals


def test_min_microbatches_reference_agrees_with_a_scan_of_its_own_simulator(sched):
    """The reference's answer is the first m at which the reference simulator's bubble is <= the target
    (checked by scanning m on random small cases), and None exactly when the scan's bubbles stay above it
    (the floor 1 − mean/max lies above the target). Fair targets only: 0.01 away from every bubble(m)."""
    import random

    rng = random.Random(22)
    checked = unreachable = 0
    while checked < 60:
        lat = [float(rng.randint(1, 20)) for _ in range(rng.randint(2, 6))]
        target = round(rng.uniform(0.0, 0.9), 4)
        bubbles = [sched.simulate_1f1b_execution(lat, m)[1] for m in range(1, 400)]
        if min(abs(b - target) for b in bubbles) < 1e-3:
            continue
        floor = 1 - sum(lat) / (len(lat) * max(lat))
        got = sched.min_microbatches_for_bubble(lat, target)
        first = next((m for m, b in enumerate(bubbles, start=1) if b <= target), None)
        if first is None and target < floor:
            assert got is None, (lat, target)
            unreachable += 1
        elif first is None:  # reachable, beyond the scan
            assert got is not None and got >= 400, (lat, target, got)
        else:
            assert got == first and type(got) is int, (lat, target, got, first)
        checked += 1
    assert unreachable >= 5  # both sides of the floor were exercised
