"""Hidden tests for lesson 16, rubric item ``simulator`` (2 points).

Contract (notebook, 练习): ``simulate_1f1b_execution(stage_latencies, num_microbatches)`` returns
``(total_time, bubble_ratio)``. Microbatches 0..m-1 pass stages 0..P-1 in order; stage p starts
microbatch k once it has finished k-1 and stage p-1 has finished k (unbounded buffers, no transfer
time). ``total_time`` = finish of microbatch m-1 on stage P-1; ``bubble_ratio = 1 - m*sum(t)/(P*T)``;
both Python floats (numpy floats accepted). Any non-empty sequence (list, tuple, numpy array) of finite
non-negative numbers, not modified; all-zero latencies give (0.0, 0.0); ValueError for empty input, a
negative/NaN/infinite latency, or a num_microbatches that is not an integer >= 1.

Weights: core 6 + 2 + 4 = 12, edge/validation 6 * 0.5 + 1 = 4 (exactly a quarter); total 16, so one
weight unit is 2/16 = 0.125 points. Credit per returned value: each core test gives half its weight to
``total_time`` and half to ``bubble_ratio`` (``@item(parts=...)``), each earned when that value is right
in every case of the test; so a simulator with the right total and a wrong bubble earns half the core.
Edge and validation credit needs plausible core behaviour as well: every edge test also checks a
``total_time`` that a constant, the input or a stub cannot produce, so code that does nothing
(``null_*`` in mistakes/) scores 0.

Oracles are independent of the student's namespace: the closed form T = sum(t) + (m-1)*max(t) (exact
for this forward flow) and, for the large cases, the finish-time recurrence
F(p, k) = max(F(p, k-1), F(p-1, k)) + t_p evaluated on the whole grid.
"""

from __future__ import annotations

import math
import random

from autograder.testing import Array, Tuple, approx, is_float, item, part, per_submission, seed

SIM = "AsymmetricPipelineScheduler.simulate_1f1b_execution"

# Messages name what to check, never the hidden inputs.
RULE = "stage p 开始微批次 k 需同时满足：自己已做完微批次 k−1，且 stage p−1 已做完微批次 k"
BUBBLE_RULE = "气泡率 = 1 − m·Σt / (P·total_time)，请用实际的各阶段 耗时计算，不要套用均匀公式"


# -- oracles ---------------------------------------------------------------------------------------
def closed_form(lat: list[float], m: int) -> tuple[float, float]:
    """T = Σt + (m−1)·max t and the bubble 1 − m·Σt/(P·T); (0.0, 0.0) when every stage takes 0."""
    total = math.fsum(lat) + (m - 1) * max(lat)
    return total, bubble_of(lat, m, total)


def bubble_of(lat: list[float], m: int, total: float) -> float:
    return 0.0 if total == 0 else 1.0 - m * math.fsum(lat) / (len(lat) * total)


def grid_recurrence(lat: list[float], m: int) -> float:
    """Finish time of the last microbatch on the last stage, by F(p,k) = max(F(p,k−1), F(p−1,k)) + t_p."""
    upstream = [0.0] * m  # finish times of stage p−1 (a virtual stage −1 finishes everything at 0)
    for t in lat:
        clock, row = 0.0, []
        for k in range(m):
            clock = max(clock, upstream[k]) + t
            row.append(clock)
        upstream = row
    return upstream[-1]


# -- helpers ---------------------------------------------------------------------------------------
def _pair(r) -> tuple[float, float]:
    """The student's (total_time, bubble_ratio) as two numbers, or a clear assertion failure."""
    assert r.ok, r.describe_failure()
    v = r.value
    assert isinstance(v, list) and len(v) == 2, "应返回二元组 (total_time, bubble_ratio)"
    assert all(isinstance(x, int | float) and not isinstance(x, bool) for x in v), (
        "total_time 与 bubble_ratio 都应是数（float）"
    )
    return v[0], v[1]


def _check(r, lat: list[float], m: int, what: str, total: float | None = None) -> None:
    """Both returned values; in a test with parts, each value is its own part."""
    got_total, got_bubble = _pair(r)
    exp_total, exp_bubble = closed_form(lat, m) if total is None else (total, bubble_of(lat, m, total))
    with part("total_time"):
        assert approx(got_total, exp_total), (
            f"{what}：total_time 不对。{RULE}；total_time 是最后一个微批次在最后一个阶段 完成的时刻"
        )
    with part("bubble_ratio"):
        assert approx(got_bubble, exp_bubble), f"{what}：bubble_ratio 不对。{BUBBLE_RULE}"


PLAUSIBLE = (
    [7.5, 2.0, 11.25, 4.0, 6.5],
    9,
)  # an ordinary non-uniform case (not a hidden input of a core test)


def _plausible_total(r, lat: list[float], m: int, what: str) -> None:
    """Edge credit needs plausible core behaviour: the call's total_time is the right one."""
    got_total, _ = _pair(r)
    assert approx(got_total, closed_form(lat, m)[0]), (
        f"{what}：边界情形只在核心结果也正确时得分，而这里 total_time 不对。{RULE}"
    )


def _random_latencies(rng: random.Random, p: int) -> list[float]:
    while True:
        lat = [round(rng.uniform(0.5, 40.0), 3) for _ in range(p)]
        if max(lat) > min(lat):
            return lat


# -- core behaviour (12 of 16) -----------------------------------------------------------------------
VALUES = {"total_time": 1, "bubble_ratio": 1}  # credit per returned value


@per_submission  # random cases: the student's own with a course secret
def _nonuniform_cases() -> list[tuple[list[float], int]]:
    rng = random.Random(seed(16_0101))
    cases = [([30.0, 10.0, 10.0, 20.0], 8)]  # the seed's scenario: (280.0, 0.5)
    cases.append(([6.0, 2.0, 2.0, 2.0, 2.0, 4.0], 12))  # dumbbell: heavy head, lighter tail
    cases.append(([1.5, 0.0, 7.25, 2.0], 5))  # a stage that costs nothing; bottleneck in the middle
    for _ in range(9):
        p = rng.randint(2, 8)
        cases.append((_random_latencies(rng, p), rng.randint(2, 24)))
    return cases


@item("simulator", weight=6, parts=VALUES)
def test_nonuniform_stages_match_derivation(sub):
    """非均匀 stage 耗时、多个微批次：总时间与气泡率与独立推导一致"""
    cases = _nonuniform_cases()
    for (lat, m), r in zip(cases, sub.calls(SIM, cases), strict=True):
        _check(r, lat, m, "非均匀 stage、多个微批次")


@item("simulator", weight=2, parts=VALUES)
def test_uniform_stages_give_classic_bubble(sub):
    """均匀 stage：总时间 (m+P−1)·t，气泡率 (P−1)/(m+P−1)"""
    rng = random.Random(seed(16_0102))
    cases = [(rng.randint(2, 10), rng.randint(2, 30), round(rng.uniform(0.5, 20.0), 2)) for _ in range(4)]
    for (p, m, t), r in zip(cases, sub.calls(SIM, [([t] * p, m) for p, m, t in cases]), strict=True):
        got_total, got_bubble = _pair(r)
        with part("total_time"):
            assert approx(got_total, (m + p - 1) * t), f"均匀 stage：total_time 应为 (m+P−1)·t。{RULE}"
        with part("bubble_ratio"):
            assert approx(got_bubble, (p - 1) / (m + p - 1)), "均匀 stage：bubble_ratio 应为 (P−1)/(m+P−1)"


@per_submission  # random cases: the student's own with a course secret
def _long_cases() -> list[tuple[list[float], int, float]]:
    """(latencies, m, total by the recurrence): computed once per grader process."""
    rng = random.Random(seed(16_0103))
    cases = []
    for p, m in ((rng.randint(16, 64), rng.randint(64, 256)), (rng.randint(16, 64), rng.randint(64, 256))):
        cases.append((_random_latencies(rng, p), m))
    # integer costs with a tied bottleneck at both ends and zero-cost stages in between
    lat = [float(rng.randint(0, 9)) for _ in range(40)]
    lat[0] = lat[-1] = 12.0
    cases.append((lat, 100))
    return [(lat, m, grid_recurrence(lat, m)) for lat, m in cases]


@item("simulator", weight=4, parts=VALUES)
def test_long_pipelines_match_recurrence(sub):
    """较长流水线、较多微批次：与逐格推进的完成时间递推一致"""
    cases = _long_cases()
    for (lat, m, total), r in zip(cases, sub.calls(SIM, [(lat, m) for lat, m, _ in cases]), strict=True):
        _check(r, lat, m, "较长流水线", total=total)


# -- edge cases and validation (4 of 16) ----------------------------------------------------------------
@item("simulator", weight=0.5, edge=True)
def test_single_microbatch(sub):
    """m = 1：总时间 Σt，气泡率 1 − 1/P"""
    rng = random.Random(seed(16_0104))
    cases = [_random_latencies(rng, rng.randint(2, 8)) for _ in range(3)]
    for lat, r in zip(cases, sub.calls(SIM, [(lat, 1) for lat in cases]), strict=True):
        p = len(lat)
        got_total, got_bubble = _pair(r)
        assert approx(got_total, math.fsum(lat)), "只有 1 个微批次时，total_time 应为各阶段 耗时之和"
        assert approx(got_bubble, 1 - 1 / p), "只有 1 个微批次时，bubble_ratio 应为 1 − 1/P"


@item("simulator", weight=0.5, edge=True)
def test_single_stage(sub):
    """P = 1：总时间 m·t，没有气泡"""
    rng = random.Random(seed(16_0105))
    cases = [(round(rng.uniform(0.5, 30.0), 3), rng.randint(1, 20)) for _ in range(3)]
    for (t, m), r in zip(cases, sub.calls(SIM, [([t], m) for t, m in cases]), strict=True):
        got_total, got_bubble = _pair(r)
        assert approx(got_total, m * t), "只有 1 个阶段 时，它要依次处理全部 m 个微批次：total_time = m·t"
        assert approx(got_bubble, 0.0), "只有 1 个阶段 时没有空闲，bubble_ratio 应为 0"


@item("simulator", weight=0.5, edge=True)
def test_all_zero_latencies(sub):
    """所有耗时为 0：返回 (0.0, 0.0)，不能除以 0"""
    for r in sub.calls(SIM, (([0.0, 0.0, 0.0], 4), ([0.0], 1), ([0, 0], 3))):
        got_total, got_bubble = _pair(r)
        assert approx(got_total, 0.0) and approx(got_bubble, 0.0), (
            "所有 stage 耗时都为 0 时应返回 (0.0, 0.0)：total_time 为 0 时不要再用它做除数"
        )
    _plausible_total(sub.call(SIM, *PLAUSIBLE), *PLAUSIBLE, "耗时不全为 0 时")


@item("simulator", weight=0.5, edge=True)
def test_accepts_tuple_numpy_and_int_sequences(sub):
    """接受 list、tuple、numpy 数组（含整数元素）"""
    rng = random.Random(seed(16_0106))
    lat = _random_latencies(rng, 5)
    ints = [rng.randint(1, 9) for _ in range(4)]
    cases = (
        (Tuple(lat), lat, "tuple"),
        (Array(lat, "float64"), lat, "float64 的 numpy 数组"),
        (Array(ints, "int64"), ints, "int64 的 numpy 数组"),
        (ints, ints, "元素为 int 的 list"),
    )
    for (_, values, kind), r in zip(cases, sub.calls(SIM, [(arg, 6) for arg, _, _ in cases]), strict=True):
        assert r.ok, f"输入是{kind}时：" + r.describe_failure()
        _check(r, [float(v) for v in values], 6, f"输入是{kind}时")


@item("simulator", weight=0.5, edge=True)
def test_does_not_modify_input(sub):
    """不修改传入的耗时序列"""
    rng = random.Random(seed(16_0107))
    lat = _random_latencies(rng, 6)
    cases = ((list(lat), "list"), (Array(lat, "float64"), "numpy 数组"))
    for (_, kind), r in zip(cases, sub.calls(SIM, [(arg, 5) for arg, _ in cases]), strict=True):
        assert r.ok, r.describe_failure()
        after = r.args_after[0] if r.args_after else None
        assert after == lat, f"调用后传入的 {kind} 被修改了（排序、改写或增删元素）：请在副本上计算"
        _plausible_total(r, lat, 5, f"输入是 {kind} 时")


@item("simulator", weight=0.5, edge=True)
def test_returns_floats(sub):
    """返回值两项都是 float（numpy 浮点数也可以），整数输入时也一样"""
    rng = random.Random(seed(16_0108))
    cases = (_random_latencies(rng, 4), [rng.randint(1, 9) for _ in range(4)])
    for lat, r in zip(cases, sub.calls(SIM, [(lat, 7) for lat in cases]), strict=True):
        _plausible_total(r, [float(v) for v in lat], 7, "检查返回类型时")
        kids = r.types[1] if isinstance(r.types, list) and len(r.types) == 2 else []
        assert len(kids) == 2 and all(is_float(k) for k in kids), (
            "total_time 与 bubble_ratio 应是 Python float（numpy 浮点数也接受）；输入全是整数时也要转换成 float"
        )


# Contract 1 says True/False do not count as integers (issue 21), so num_microbatches=True must raise.
# 3.0 is left untested: "not an integer" could be read either way for an integral float.
@item("simulator", weight=1, edge=True)
def test_rejects_invalid_input(sub):
    """非法输入抛出 ValueError"""
    bad = [
        (([], 4), "耗时序列为空"),
        (([3.0, -1.0, 2.0], 4), "某个阶段 耗时为负"),
        (([3.0, float("nan"), 2.0], 4), "某个阶段 耗时为 NaN"),
        (([3.0, 1.0, float("inf")], 4), "某个阶段 耗时为无穷大"),
        (([3.0, 1.0, 2.0], 0), "num_microbatches 为 0"),
        (([3.0, 1.0, 2.0], -2), "num_microbatches 为负"),
        (([3.0, 1.0, 2.0], 2.5), "num_microbatches 不是整数"),
        (([3.0, 1.0, 2.0], "3"), "num_microbatches 是字符串"),
        (([3.0, 1.0, 2.0], True), "num_microbatches 是 bool（True/False 不算整数）"),
    ]
    for (_, why), r in zip(bad, sub.calls(SIM, [args for args, _ in bad]), strict=True):
        assert r.raised("ValueError"), f"{why}时应抛出 ValueError，实际" + (
            f"抛出了 {r.error['type']}" if not r.ok else "正常返回了"
        )
    # valid input must not be rejected: code that only raises ValueError has validated nothing
    _plausible_total(sub.call(SIM, *PLAUSIBLE), *PLAUSIBLE, "合法输入")
