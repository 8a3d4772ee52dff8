"""Hidden tests for lesson 16, rubric item ``min_microbatches`` (1 point).

Contract (notebook, 练习, 契约三): ``min_microbatches_for_bubble(stage_latencies, target_bubble)``
returns the smallest Python int m >= 1 whose forward-flow bubble ratio (契约一's definition,
``1 - m*sum(t)/(P*T(m))``, 0 when every latency is 0) is <= ``target_bubble``, or None when no m >= 1
reaches it. Latencies as in 契约一 (non-empty, finite, >= 0, list/tuple/numpy, not modified); the
target a real number in [0, 1); ValueError otherwise. The text before the exercise gives neither the
closed form nor the inverse: the student derives them (section 3, after the exercise, shows the closed
form and the m -> infinity floor, never the threshold).

Floating point, as the contract states it: the answer is defined by exact arithmetic on the given
values (each float is an exact binary fraction), and the oracle below computes it so, with
``fractions.Fraction``. The hidden targets stay at least 1e-9 away from the reachable/unreachable
boundary, and, where the answer is at most 10**6, the exact real threshold X (bubble(X) = target) is
at least 0.01 away from every integer, so any sound float formula rounds to the same m. Answers above
10**6 are accepted within a relative 1e-6 (there a double's rounding can move the last digits).

Weights: core 4 + 3 + 2 + 1 + 2 = 12, edge/validation 6 * 0.5 + 1 = 4 (exactly a quarter); total 16, so
one weight unit is 1/16 = 0.0625 points. The two scale tests separate derivation from search: answers of
10**4..2*10**5 (a scan with the student's own O(mP) simulator runs out of the 2 s per call, a scan with
the closed form does not) and of 10**8..4*10**8 (any scan over m runs out). Every edge test also asks for
the right answer on an ordinary case, so code that does nothing (``null_*`` in mistakes/) scores 0.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

from autograder.testing import Array, Tuple, item, per_submission, seed, type_name

MINMB = "AsymmetricPipelineScheduler.min_microbatches_for_bubble"

# Messages name what to check, never the hidden inputs.
DEF = "气泡率按契约一的定义 1 − m·Σt / (P·T(m))，T(m) 是前向流水的总时间"
EXACT_UP_TO = 10**6  # answers up to this must be exact; above it a relative REL_TOL is accepted
REL_TOL = 1e-6
MARGIN = 0.01  # exact cases: distance of the real threshold X from every integer
FLOOR_GAP = 1e-9  # every target is at least this far from the reachable/unreachable boundary


# -- oracle (exact) --------------------------------------------------------------------------------
def exact(lat: list[float], target: float) -> tuple[int | None, Fraction | None]:
    """(the answer, the real threshold X with bubble(X) = target, or None when the answer is 1 for every
    reason or None). From T(m) = Σt + (m−1)·max t: bubble(m) <= β  <=>  m·a >= r with
    a = Σt − (1−β)·P·max t, r = (1−β)·P·(Σt − max t)."""
    q = [Fraction(float(x)) for x in lat]
    total, top, p, keep = sum(q, Fraction(0)), max(q), len(q), 1 - Fraction(float(target))
    if top == 0:
        return 1, None
    a, r = total - keep * p * top, keep * p * (total - top)
    if a <= 0:
        return (1 if a == 0 and r == 0 else None), None
    x = r / a
    return max(1, math.ceil(x)), x


def floor_of(lat: list[float]) -> Fraction:
    """The m-independent floor 1 − Σt / (P·max t) (exact)."""
    q = [Fraction(float(x)) for x in lat]
    return 1 - sum(q, Fraction(0)) / (len(q) * max(q))


def fair(lat: list[float], target: float) -> bool:
    """The case meets the stated floating-point rules (see the module docstring)."""
    if not 0 <= target < 1 or abs(Fraction(float(target)) - floor_of(lat)) < FLOOR_GAP:
        return False
    answer, x = exact(lat, target)
    if x is None or answer is None or answer > EXACT_UP_TO:
        return True
    return x <= 1 or min(x - math.floor(x), math.ceil(x) - x) >= MARGIN


# -- helpers ---------------------------------------------------------------------------------------
def _answer(r, what: str):
    """The student's answer: a (Python or numpy) integer, or None; bool and float are not integers."""
    assert r.ok, r.describe_failure()
    v = r.value
    if v is None:
        return None
    assert isinstance(v, int | float) and not isinstance(v, bool), f"{what}：应返回整数 m（或 None）"
    if isinstance(v, float):
        assert v.is_integer(), f"{what}：应返回整数 m（或 None），而不是小数"
        v = int(v)
    return v


def _check(r, lat: list[float], target: float, what: str) -> None:
    expected, _ = exact(lat, target)
    got = _answer(r, what)
    if expected is None:
        assert got is None, (
            f"{what}：这个目标任何 m 都达不到，应返回 None。想一想 m 很大时气泡率趋于多少：它有没有与 m 无关的下限？"
        )
        return
    assert got is not None, f"{what}：这个目标是能达到的，不应返回 None。{DEF}"
    if expected > EXACT_UP_TO:
        assert abs(got - expected) <= REL_TOL * expected, (
            f"{what}：m 不对（答案很大时允许 1e-6 的相对误差）。{DEF}；逐个试 m 在这个规模下来不及"
        )
    else:
        assert got == expected, (
            f"{what}：m 不对。要的是使气泡率 <= 目标的**最小**整数 m ≥ 1。{DEF}；检查取整的方向"
        )


def _run(sub, cases: list[tuple[list[float], float]], what: str) -> None:
    for (lat, target), r in zip(cases, sub.calls(MINMB, cases), strict=True):
        _check(r, lat, target, what)


# an ordinary case (not a hidden input of a core test): answer 37
PLAUSIBLE = ([7.5, 2.0, 11.25, 4.0, 6.5], 0.47)


def _plausible(sub, what: str) -> None:
    """Edge credit needs plausible core behaviour: the right answer on an ordinary case."""
    lat, target = PLAUSIBLE
    _check(sub.call(MINMB, lat, target), lat, target, f"{what}（边界情形只在核心结果也正确时得分）")


def _latencies(rng: random.Random, p: int, low: float = 0.5, high: float = 40.0) -> list[float]:
    while True:
        lat = [round(rng.uniform(low, high), 3) for _ in range(p)]
        if max(lat) > min(lat):
            return lat


def _target_above_floor(rng: random.Random, lat: list[float], largest: int) -> float:
    """A fair target above the floor whose answer is between 2 and ``largest``."""
    low, high = float(floor_of(lat)), 1 - 1 / len(lat)
    while True:
        target = round(rng.uniform(low, high), 6)
        answer, _ = exact(lat, target)
        if answer is not None and 2 <= answer <= largest and fair(lat, target):
            return target


def _assert_fair(cases: list[tuple[list[float], float]]) -> list[tuple[list[float], float]]:
    for lat, target in cases:
        # a defect of this file, not the student's (the message never shows a hidden input)
        assert fair(lat, target), "隐藏测试自身的用例不满足契约里的浮点约定：请告诉老师"
    return cases


# -- core behaviour (12 of 16) -----------------------------------------------------------------------
@per_submission  # random cases: the student's own with a course secret
def _reachable_cases() -> list[tuple[list[float], float]]:
    rng = random.Random(seed(16_0301))
    cases = [([30.0, 10.0, 10.0, 20.0], 0.46)]  # the seed's profile: floor 0.4167, answer 17
    cases.append(([6.0, 2.0, 2.0, 2.0, 2.0, 4.0], 0.57))  # dumbbell, floor 0.5: answer 13
    cases.append(([1.5, 0.0, 7.25, 2.0], 0.64))  # a stage that costs nothing, bottleneck in the middle: 17
    for _ in range(9):
        lat = _latencies(rng, rng.randint(2, 10))
        cases.append((lat, _target_above_floor(rng, lat, 200)))
    return _assert_fair(cases)


@item("min_microbatches", weight=4)
def test_reachable_targets_match_exact_answer(sub):
    """能达到的目标：最小的 m 与精确推导一致"""
    _run(sub, _reachable_cases(), "能达到的目标")


@per_submission
def _either_side_cases() -> list[tuple[list[float], float]]:
    """Profiles with a target just below their floor (None) and one above it (an answer)."""
    rng = random.Random(seed(16_0302))
    profiles = [[30.0, 10.0, 10.0, 20.0], [20.0, 10.0, 10.0, 30.0], [12.0, 3.0, 3.0, 3.0, 3.0, 9.0]]
    profiles += [_latencies(rng, rng.randint(2, 12)) for _ in range(5)]
    cases = [([30.0, 10.0, 10.0, 20.0], 0.4)]  # below the seed profile's floor 0.4167
    cases.append(([12.0, 3.0, 3.0, 3.0, 3.0, 9.0], 0.65))  # above its floor 0.5417: answer 6
    for lat in profiles:
        f = float(floor_of(lat))
        below = f - 10 ** rng.uniform(-6, -1.5)
        if below >= 0:
            cases.append((lat, below))
        cases.append((lat, _target_above_floor(rng, lat, 200)))
    cases.append(([5.0, 1.0, 1.0, 1.0], 0.0))  # target 0, floor 0.6: unreachable
    return _assert_fair(cases)


@item("min_microbatches", weight=3)
def test_targets_either_side_of_the_floor(sub):
    """目标低于与 m 无关的下限时返回 None，高于它时给出最小的 m"""
    _run(sub, _either_side_cases(), "下限两侧的目标")


@per_submission
def _uniform_cases() -> list[tuple[list[float], float]]:
    rng = random.Random(seed(16_0303))
    cases = [([5.0] * 8, 0.3)]  # answer 17
    while len(cases) < 6:
        p, t = rng.randint(2, 16), float(rng.randint(1, 50))  # integer costs: Σt is exact
        target = round(rng.uniform(0.005, 1 - 1 / p), 5)
        if fair([t] * p, target) and exact([t] * p, target)[0] >= 2:
            cases.append(([t] * p, target))
    return cases


@item("min_microbatches", weight=2)
def test_uniform_stages(sub):
    """均匀阶段（下限为 0）：任何正的目标都能达到"""
    _run(sub, _uniform_cases(), "均匀阶段")


def _scaled_case(rng: random.Random, lat: list[float], answer_range: tuple[float, float]) -> tuple:
    """A target above the floor by Δ such that the answer falls in ``answer_range``: X ≈ c/Δ with
    c = (1−β)(Σt/max t − 1)."""
    f = floor_of(lat)
    while True:
        want = rng.uniform(*answer_range)
        c = (1 - f) * (sum(Fraction(x) for x in lat) / max(Fraction(x) for x in lat) - 1)
        target = float(f + c / Fraction(want))
        answer, _ = exact(lat, target)
        if (
            answer is not None
            and answer_range[0] <= answer <= answer_range[1] * 1.1
            and Fraction(target) - f >= 10 * FLOOR_GAP
            and fair(lat, target)
        ):
            return lat, target


@per_submission
def _thousands_cases() -> list[tuple[list[float], float]]:
    rng = random.Random(seed(16_0304))
    cases = [_scaled_case(rng, [30.0, 10.0, 10.0, 20.0], (1e4, 2e5))]
    cases += [_scaled_case(rng, _latencies(rng, rng.randint(3, 12)), (1e4, 2e5)) for _ in range(3)]
    return cases


@item("min_microbatches", weight=1)
def test_thousands_of_microbatches(sub):
    """答案上万到二十万：每次调用 2 秒内算完（逐个 m 模拟来不及）"""
    _run(sub, _thousands_cases(), "需要上万个微批次的目标")


@per_submission
def _huge_cases() -> list[tuple[list[float], float]]:
    rng = random.Random(seed(16_0305))
    cases = []
    for _ in range(3):  # many stages near the mean, so Σt/max t − 1 is large and Δ stays >= 1e-8
        lat = _latencies(rng, rng.randint(8, 24), 10.0, 20.0)
        cases.append(_scaled_case(rng, lat, (1e8, 4e8)))
    return cases


@item("min_microbatches", weight=2)
def test_near_the_floor_needs_huge_m(sub):
    """目标贴近下限时答案上亿：只有推导出的公式来得及（允许 1e-6 的相对误差）"""
    _run(sub, _huge_cases(), "贴近下限的目标")


# -- edge cases and validation (4 of 16) ----------------------------------------------------------------
@item("min_microbatches", weight=0.5, edge=True)
def test_target_met_by_one_microbatch(sub):
    """目标不低于 m = 1 的气泡率 1 − 1/P 时，m = 1"""
    rng = random.Random(seed(16_0306))
    cases = []
    for _ in range(3):
        lat = _latencies(rng, rng.randint(2, 8))
        cases.append((lat, round(rng.uniform(1 - 1 / len(lat) + 1e-3, 0.999), 4)))
    _run(sub, _assert_fair(cases), "m = 1 就能达到的目标")
    _plausible(sub, "m = 1 的情形")


@item("min_microbatches", weight=0.5, edge=True)
def test_constant_bubble_profiles(sub):
    """P = 1，或只有一个阶段有耗时：气泡率与 m 无关，m = 1 或 None"""
    cases = [([12.5], 0.05), ([3.0], 0.3), ([0.0, 5.0, 0.0], 0.7), ([0.0, 5.0, 0.0], 0.5), ([0.0, 4.0], 0.25)]
    _run(sub, _assert_fair(cases), "气泡率与 m 无关的流水线")
    _plausible(sub, "气泡率与 m 无关的情形")


@item("min_microbatches", weight=0.5, edge=True)
def test_all_zero_latencies(sub):
    """所有耗时为 0：气泡率按契约一为 0，m = 1"""
    _run(sub, [([0.0, 0.0, 0.0], 0.0), ([0.0], 0.2), ([0, 0], 0.5)], "所有耗时为 0")
    _plausible(sub, "耗时不全为 0 时")


@item("min_microbatches", weight=0.5, edge=True)
def test_accepts_tuple_numpy_and_int_sequences(sub):
    """接受 list、tuple、numpy 数组（含整数元素）"""
    rng = random.Random(seed(16_0307))
    lat = _latencies(rng, 5)
    ints = [rng.randint(1, 9) for _ in range(4)]
    while max(ints) == min(ints):
        ints = [rng.randint(1, 9) for _ in range(4)]
    t_lat, t_int = _target_above_floor(rng, lat, 200), _target_above_floor(rng, [float(v) for v in ints], 200)
    cases = (
        (Tuple(lat), lat, t_lat, "tuple"),
        (Array(lat, "float64"), lat, t_lat, "float64 的 numpy 数组"),
        (Array(ints, "int64"), ints, t_int, "int64 的 numpy 数组"),
        (ints, ints, t_int, "元素为 int 的 list"),
    )
    calls = [(arg, t) for arg, _, t, _ in cases]
    for (_, values, t, kind), r in zip(cases, sub.calls(MINMB, calls), strict=True):
        assert r.ok, f"输入是{kind}时：" + r.describe_failure()
        _check(r, [float(v) for v in values], t, f"输入是{kind}时")
    _plausible(sub, "检查输入类型时")


@item("min_microbatches", weight=0.5, edge=True)
def test_does_not_modify_input(sub):
    """不修改传入的耗时序列"""
    rng = random.Random(seed(16_0308))
    lat = _latencies(rng, 6)
    target = _target_above_floor(rng, lat, 200)
    cases = ((list(lat), "list"), (Array(lat, "float64"), "numpy 数组"))
    for (_, kind), r in zip(cases, sub.calls(MINMB, [(arg, target) for arg, _ in cases]), strict=True):
        assert r.ok, r.describe_failure()
        after = r.args_after[0] if r.args_after else None
        assert after == lat, f"调用后传入的 {kind} 被修改了（排序、改写或增删元素）：请在副本上计算"
        _check(r, lat, target, f"输入是 {kind} 时")
    _plausible(sub, "检查是否修改输入时")


@item("min_microbatches", weight=0.5, edge=True)
def test_returns_int_or_none(sub):
    """返回 Python int（numpy 整数也接受），达不到时返回 None 本身"""
    rng = random.Random(seed(16_0309))
    lat = _latencies(rng, 5)
    cases = [(lat, _target_above_floor(rng, lat, 200)), ([4, 1, 1, 2], 0.56), ([30.0, 10.0, 10.0, 20.0], 0.3)]
    for (c_lat, target), r in zip(cases, sub.calls(MINMB, cases), strict=True):
        _check(r, [float(v) for v in c_lat], target, "检查返回类型时")
        name = type_name(r.types)
        assert r.value is None or name == "int" or name.startswith(("numpy.int", "numpy.uint")), (
            "m 应是 Python int（numpy 整数也接受），不是 float；达不到时返回 None"
        )
    _plausible(sub, "检查返回类型时")


@item("min_microbatches", weight=1, edge=True)
def test_rejects_invalid_input(sub):
    """非法输入抛出 ValueError"""
    bad = [
        (([], 0.3), "耗时序列为空"),
        (([3.0, -1.0, 2.0], 0.3), "某个阶段 耗时为负"),
        (([3.0, float("nan"), 2.0], 0.3), "某个阶段 耗时为 NaN"),
        (([3.0, 1.0, float("inf")], 0.3), "某个阶段 耗时为无穷大"),
        (([3.0, 1.0, 2.0], -0.1), "target_bubble 为负"),
        (([3.0, 1.0, 2.0], 1.5), "target_bubble 大于 1"),
        (([3.0, 1.0, 2.0], float("nan")), "target_bubble 为 NaN"),
        (([3.0, 1.0, 2.0], float("inf")), "target_bubble 为无穷大"),
        (([3.0, 1.0, 2.0], "0.3"), "target_bubble 是字符串"),
    ]
    for (_, why), r in zip(bad, sub.calls(MINMB, [args for args, _ in bad]), strict=True):
        assert r.raised("ValueError"), f"{why}时应抛出 ValueError，实际" + (
            f"抛出了 {r.error['type']}" if not r.ok else "正常返回了"
        )
    # valid input must not be rejected: code that only raises ValueError has validated nothing
    _plausible(sub, "合法输入")
