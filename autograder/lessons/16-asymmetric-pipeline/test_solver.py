"""Hidden tests for lesson 16, rubric item ``solver`` (2 points).

Contract (notebook, 练习): ``solve_optimal_layer_partition(total_layers, layer_cost, s0_fixed_cost,
s_tail_fixed_cost, num_stages) -> list[int]``. Stage p's time is fixed_p + L_p*layer_cost with
fixed_0 = s0, fixed_{P-1} = s_tail (both on stage 0 when P = 1), else 0. Return P Python ints, each
>= 1, summing to total_layers, minimising the maximum stage time and, among those, the variance of
stage times. ValueError when total_layers < num_stages, num_stages < 1, layer_cost <= 0 or a fixed
cost < 0. Sizes up to 10^4 layers and 256 stages (each call has the engine's ~2 s limit).

Optimal partitions are not unique (ties), so a returned list is judged by its validity, its maximum
stage time and its variance, each compared with an independent oracle: brute force over every
composition on small sizes, water-filling (one layer per stage, then each further layer to the
currently fastest stage; optimal for uniform layer cost, for the maximum and the variance at once) on
larger ones.

Weights: core 4 + 2 + 4 + 2 = 12, edge/validation 1 + 1 + 2 = 4 (exactly a quarter); total 16, so one
weight unit is 2/16 = 0.125 points. Credit per part of the contract: each core test weighs the partition
itself (P layer counts, each >= 1, summing to total_layers: 1), its bottleneck (the maximum stage time is
optimal: 2) and its balance (least variance among optimal partitions: 1) separately (``@item(parts=
...)``); a part is earned when it holds in every case of the test. The counts and their sum are one
part because "P counts >= 1" alone is met by the null output [1] * P; the bottleneck and balance parts
are judged only on valid partitions. Edge and validation credit needs plausible core behaviour too:
every edge test also asks for a valid partition on an ordinary case, which a constant, the input or a
stub cannot give, so code that does nothing (``null_*`` in mistakes/) scores 0. The general random cases keep the fixed costs below the per-stage
share, so the ">= 1 layer per stage" rule only binds in ``test_heavy_ends_and_seed_case`` and the
degenerate sizes.
"""

from __future__ import annotations

import functools
import heapq
import math
import random

from autograder.testing import item, part, per_submission, seed

SOLVE = "AsymmetricPipelineScheduler.solve_optimal_layer_partition"


# -- oracles ---------------------------------------------------------------------------------------
def fixed_costs(s0: float, tail: float, p: int) -> list[float]:
    fixed = [0.0] * p
    fixed[0] += s0
    fixed[-1] += tail  # P = 1: both on stage 0
    return fixed


def stage_times(counts: list[int], c: float, fixed: list[float]) -> list[float]:
    return [f + n * c for f, n in zip(fixed, counts, strict=True)]


def variance(times: list[float]) -> float:
    times = sorted(times)  # a fixed summation order: equal multisets give bitwise-equal variances
    mean = math.fsum(times) / len(times)
    return math.fsum((t - mean) ** 2 for t in times) / len(times)


def compositions(total: int, parts: int):
    """Every way of writing ``total`` as an ordered sum of ``parts`` integers >= 1."""
    if parts == 1:
        yield (total,)
        return
    for first in range(1, total - parts + 2):
        for rest in compositions(total - first, parts - 1):
            yield (first, *rest)


def brute_force(total: int, c: float, s0: float, tail: float, p: int) -> tuple[float, float]:
    """(best maximum stage time, least variance among partitions reaching it), by enumeration."""
    fixed = fixed_costs(s0, tail, p)
    scored = [(max(ts), ts) for ts in (stage_times(list(comp), c, fixed) for comp in compositions(total, p))]
    best = min(mx for mx, _ in scored)
    return best, min(variance(ts) for mx, ts in scored if mx <= best * (1 + 1e-12) + 1e-12)


def water_filling(total: int, c: float, s0: float, tail: float, p: int) -> tuple[float, float]:
    fixed = fixed_costs(s0, tail, p)
    counts = [1] * p
    heap = [(f + c, s) for s, f in enumerate(fixed)]
    heapq.heapify(heap)
    for _ in range(total - p):
        _, s = heapq.heappop(heap)
        counts[s] += 1
        heapq.heappush(heap, (fixed[s] + counts[s] * c, s))
    times = stage_times(counts, c, fixed)
    return max(times), variance(times)


# -- helpers ---------------------------------------------------------------------------------------
def _valid(r, case: tuple, what: str) -> list[int]:
    """The returned counts, asserted to be a partition: P integers, each >= 1, summing to total_layers."""
    total, _c, _s0, _tail, p = case
    assert r.ok, r.describe_failure()
    v = r.value
    assert isinstance(v, list) and len(v) == p, f"{what}：应返回长度为 num_stages 的 list"
    assert all(isinstance(n, int) and not isinstance(n, bool) for n in v), f"{what}：每个元素都应是整数层数"
    assert min(v) >= 1, f"{what}：每个阶段 至少要分到 1 层（固定开销很大的阶段 也一样）"
    assert sum(v) == total, f"{what}：各阶段 层数之和必须等于 total_layers（层数守恒）"
    return v


def _judge(r, case: tuple, oracle: tuple[float, float], what: str) -> None:
    """The partition, its bottleneck and its balance; in a test with parts, each is its own part (the
    latter two are judged only on a valid partition)."""
    total, c, s0, tail, p = case
    v = None
    with part("partition"):
        v = _valid(r, case, what)
    if v is None:  # (only with parts: the failure is recorded, the other two parts fail with it)
        for name in ("bottleneck", "balance"):
            with part(name):
                raise AssertionError(f"{what}：返回的不是合法的分配，无法评判最大耗时与方差")
        return
    times = stage_times(v, c, fixed_costs(s0, tail, p))
    best_max, best_var = oracle
    with part("bottleneck"):
        assert max(times) <= best_max * (1 + 1e-9) + 1e-9, (
            f"{what}：最慢阶段 的耗时不是最小可能值。阶段耗时 = 固定开销 + 层数·layer_cost，"
            "首尾阶段 的固定开销也要计入，再决定每一层放在哪里"
        )
    with part("balance"):
        assert max(times) <= best_max * (1 + 1e-9) + 1e-9 and (
            variance(times) <= best_var + 1e-9 * max(1.0, best_max * best_max)
        ), (
            f"{what}：各阶段 耗时的方差不是最优分配中最小的：多余的层应分给当前最快的阶段，"
            "而不是集中放在某一个阶段"
        )


PLAUSIBLE = (26, 1.5, 9.0, 4.5, 5)  # an ordinary case (not a hidden input of a core test)


def _plausible(sub, what: str) -> None:
    """Edge credit needs plausible core behaviour: a valid partition on an ordinary case."""
    _valid(sub.call(SOLVE, *PLAUSIBLE), PLAUSIBLE, f"{what}（边界情形只在核心结果也合理时得分）")


def _random_case(rng: random.Random, layers: tuple[int, int], stages: tuple[int, int], grid: bool) -> tuple:
    """Fixed costs up to 0.8 of a stage's fair share of the layer time, so no stage is forced to 1 layer."""
    p = rng.randint(*stages)
    total = rng.randint(max(p, layers[0]), layers[1])
    c = float(rng.randint(1, 4)) if grid else round(rng.uniform(0.2, 5.0), 3)
    share = 0.8 * total * c / p
    if grid:  # integer costs: many exact ties between stage times
        s0, tail = float(rng.randint(0, int(share))), float(rng.randint(0, int(share)))
    else:
        s0, tail = round(rng.uniform(0.0, share), 3), round(rng.uniform(0.0, share), 3)
    return total, c, s0, tail, p


# -- core behaviour (12 of 16) -----------------------------------------------------------------------
PARTS = {"partition": 1, "bottleneck": 2, "balance": 1}  # credit per part of the contract


@per_submission  # random cases: the student's own with a course secret
def _small_cases() -> list[tuple[tuple, tuple[float, float]]]:
    """(case, oracle) pairs, computed once per grader process."""
    rng = random.Random(seed(16_0201))
    cases = [_random_case(rng, (4, 12), (2, 5), grid=i % 2 == 0) for i in range(12)]
    return [(case, brute_force(*case)) for case in cases]


@item("solver", weight=4, parts=PARTS)
def test_small_sizes_match_brute_force(sub):
    """小规模随机情形：最大耗时与方差都与穷举最优一致，分配合法"""
    cases = _small_cases()
    for (case, oracle), r in zip(cases, sub.calls(SOLVE, [case for case, _ in cases]), strict=True):
        _judge(r, case, oracle, "小规模情形")


@functools.cache
def _heavy_cases() -> list[tuple[tuple, tuple[float, float]]]:
    cases = [
        (32, 2.0, 16.0, 8.0, 4),  # the lesson's case: [3, 11, 11, 7], all stages at 22
        (10, 1.0, 50.0, 0.0, 4),  # head heavier than everything else together
        (12, 1.5, 40.0, 35.0, 5),  # both ends keep a single layer
        (9, 2.0, 0.0, 30.0, 3),  # heavy tail only
        (14, 1.0, 9.0, 0.0, 2),  # two stages, exact tie
        (15, 3.0, 7.5, 4.5, 4),  # ties between head, tail and middle stages
    ]
    return [(case, water_filling(*case) if case[0] > 16 else brute_force(*case)) for case in cases]


@item("solver", weight=2, parts=PARTS)
def test_heavy_ends_and_seed_case(sub):
    """首尾固定开销很大（某些阶段 只能放 1 层）以及课文中的 32 层情形"""
    cases = _heavy_cases()
    for (case, oracle), r in zip(cases, sub.calls(SOLVE, [case for case, _ in cases]), strict=True):
        _judge(r, case, oracle, "首尾固定开销很大的情形")


@per_submission  # random cases: the student's own with a course secret
def _larger_cases() -> list[tuple[tuple, tuple[float, float]]]:
    rng = random.Random(seed(16_0203))
    cases = [_random_case(rng, (100, 3000), (8, 64), grid=i == 3) for i in range(4)]
    return [(case, water_filling(*case)) for case in cases]


@item("solver", weight=4, parts=PARTS)
def test_larger_sizes_match_water_filling(sub):
    """中大规模随机情形（数百到数千层、数十个阶段）：与注水法最优一致"""
    cases = _larger_cases()
    for (case, oracle), r in zip(cases, sub.calls(SOLVE, [case for case, _ in cases]), strict=True):
        _judge(r, case, oracle, "中大规模情形")


@per_submission  # random cases: the student's own with a course secret
def _largest_cases() -> list[tuple[tuple, tuple[float, float]]]:
    rng = random.Random(seed(16_0204))
    cases = []
    for p in (256, 7):
        c = round(rng.uniform(0.2, 5.0), 3)
        share = 0.8 * 10_000 * c / p
        cases.append((10_000, c, round(rng.uniform(0.0, share), 3), round(rng.uniform(0.0, share), 3), p))
    return [(case, water_filling(*case)) for case in cases]


@item("solver", weight=2, parts=PARTS)
def test_largest_sizes_in_time(sub):
    """题目规定的最大规模（10^4 层、256 个阶段）：在时限内给出最优分配"""
    cases = _largest_cases()
    for (case, oracle), r in zip(cases, sub.calls(SOLVE, [case for case, _ in cases]), strict=True):
        _judge(r, case, oracle, "最大规模情形")


# -- edge cases and validation (4 of 16) ----------------------------------------------------------------
@item("solver", weight=1, edge=True)
def test_returns_list_of_python_ints(sub):
    """返回 Python int 组成的 list（numpy 整数不符合约定）"""
    r = sub.call(SOLVE, 12, 1.5, 4.0, 2.0, 4)
    assert r.ok, r.describe_failure()
    t = r.types
    assert isinstance(t, list) and t[0] == "list", "返回值应是 list（不是 tuple 或 numpy 数组）"
    assert all(k == "int" for k in t[1]), "list 的元素应是 Python int：numpy 整数请用 int(...) 转换"
    _valid(r, (12, 1.5, 4.0, 2.0, 4), "检查返回类型时（边界情形只在核心结果也合理时得分）")


@item("solver", weight=1, edge=True)
def test_degenerate_stage_counts(sub):
    """只有 1 个阶段（首尾开销都在 stage 0）或层数恰好等于 阶段数"""
    cases = ((7, 1), (1, 1), (5, 5), (3, 3))
    for (total, p), r in zip(cases, sub.calls(SOLVE, [(t, 2.0, 6.0, 5.0, p) for t, p in cases]), strict=True):
        assert r.ok, r.describe_failure()
        if p == 1:
            assert r.value == [total], "只有 1 个阶段 时，全部层都在这个阶段 上（首尾固定开销都计在它身上）"
        else:
            assert r.value == [1] * p, "层数等于 阶段数时，每个阶段 恰好 1 层，无论固定开销多大"
    _plausible(sub, "层数多于 阶段数时")


@item("solver", weight=2, edge=True)
def test_rejects_invalid_input(sub):
    """非法参数抛出 ValueError"""
    bad = [
        ((3, 1.0, 0.0, 0.0, 4), "total_layers 小于 num_stages"),
        ((8, 1.0, 0.0, 0.0, 0), "num_stages 为 0"),
        ((8, 1.0, 0.0, 0.0, -2), "num_stages 为负"),
        ((8, 0.0, 1.0, 1.0, 2), "layer_cost 为 0"),
        ((8, -1.5, 1.0, 1.0, 2), "layer_cost 为负"),
        ((8, 1.0, -1.0, 1.0, 2), "s0_fixed_cost 为负"),
        ((8, 1.0, 1.0, -0.5, 2), "s_tail_fixed_cost 为负"),
    ]
    for (_, why), r in zip(bad, sub.calls(SOLVE, [args for args, _ in bad]), strict=True):
        assert r.raised("ValueError"), f"{why}时应抛出 ValueError，实际" + (
            f"抛出了 {r.error['type']}" if not r.ok else "正常返回了"
        )
    _plausible(sub, "合法输入")  # code that only raises ValueError has validated nothing
