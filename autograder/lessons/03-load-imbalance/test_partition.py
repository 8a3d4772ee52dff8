"""Hidden tests for lesson 03, rubric item ``partition`` (2 points).

Contract (notebook, 练习 2): ``min_max_partition(layer_costs, num_stages) -> list[int]``: P Python ints,
each >= 1, summing to the number of layers, whose slowest stage (sum of its consecutive layer costs) is
the least over all contiguous partitions; any optimal partition is accepted. ValueError for invalid
costs (as in 练习 1) or num_stages not an integer in [1, L]. Up to 400 layers and 64 stages.

Weights: core 3 + 2 + 1 = 6, edge/validation 0.5 + 0.5 + 1 = 2 (a quarter); total 8.
Credit per part of the contract (issue 12): each core test weighs the partition (P Python ints, each
>= 1, summing to the number of layers: 1) and its bottleneck (the slowest stage is the least possible,
judged on the counts' values: 2) separately. Counts and sum are one part because "P counts >= 1" alone
is met by the null output [1] * P. A well-formed partition earns its part only when the submission's
partition of an ordinary case is also optimal, and the edge and validation tests (whose answers, for
P = L and P = 1, are the only partitions there are) likewise: code that does nothing (``null_*``) or
never minimises anything (an even split, [1]·(P−1) + [L−P+1]) earns nothing for being well-formed
(issue 21).
Oracles (this module): enumeration of every composition (small), the O(P·L²) linear-partition DP
(medium), and for the large case a bisection on the bottleneck value with a greedy feasibility test.
Per-student hidden cases (issue 27): random cases come from ``seed(<fixed seed>)`` (the student's own
with a course secret); every test with random cases also holds hand-written fixed cases, which alone
catch each catalogued mistake (tests/test_seeding.py grades the catalogue under several secrets).
"""

from __future__ import annotations

import itertools
import math
import random

from autograder.testing import Array, approx, item, memo, part, seed

FN = "min_max_partition"
HINT = "请检查：最优的最慢段耗时一定等于某一段连续层之和；二分这个值并用贪心判断可行性，或用动态规划"


def loads(costs, counts):
    out, start = [], 0
    for c in counts:
        out.append(math.fsum(costs[start : start + c]))
        start += c
    return out


@memo  # computed once per grader process
def brute_force(costs, p):
    L = len(costs)
    return min(
        max(loads(costs, [b - a for a, b in zip((0, *cuts), (*cuts, L), strict=True)]))
        for cuts in itertools.combinations(range(1, L), p - 1)
    )


@memo  # computed once per grader process
def dp(costs, p):
    L = len(costs)
    pre = [0.0]
    for c in costs:
        pre.append(pre[-1] + c)
    inf = math.inf
    best = [[inf] * (L + 1) for _ in range(p + 1)]
    best[0][0] = 0.0
    for k in range(1, p + 1):
        for j in range(k, L + 1):
            best[k][j] = min(max(best[k - 1][i], pre[j] - pre[i]) for i in range(k - 1, j))
    return best[p][L]


@memo  # computed once per grader process
def bisection(costs, p):
    def stages_needed(cap):
        n, acc = 1, 0.0
        for c in costs:
            if acc + c > cap:
                n, acc = n + 1, c
            else:
                acc += c
        return n

    lo, hi = max(costs), math.fsum(costs)
    for _ in range(200):
        mid = (lo + hi) / 2
        if stages_needed(mid) <= p:
            hi = mid
        else:
            lo = mid
    return hi


PARTS = {"partition": 1, "bottleneck": 2}  # credit per part of the contract
PLAUSIBLE = ([1.5, 4.0, 0.5, 2.5, 3.0, 1.0, 2.0, 0.75], 3)  # an ordinary case, not a core test's


def valid_counts(r, costs, p, what):
    """The returned counts' values, asserted to form a partition (any integer type)."""
    assert r.ok, r.describe_failure()
    counts = r.value
    assert isinstance(counts, list) and len(counts) == p, f"{what}：应返回长度为 阶段数的 list"
    assert all(isinstance(c, int) and not isinstance(c, bool) and c >= 1 for c in counts), (
        f"{what}：每一项都应是 ≥ 1 的整数"
    )
    assert sum(counts) == len(costs), f"{what}：各项之和应等于层数"
    return counts


def check_answer(r, costs, p, optimum, what):
    """The partition (with Python ints) and its bottleneck; in a test with parts each is its own part."""
    counts = None
    with part("partition"):
        counts = valid_counts(r, costs, p, what)
        assert all(t == "int" for t in r.types[1]), (
            f"{what}：元素应是 Python int（numpy 整数请用 int(...) 转换）"
        )
    if counts is None:
        counts = valid_counts(r, costs, p, what)  # fails the test unless only the element type was wrong
    with part("bottleneck"):
        assert approx(max(loads(costs, counts)), optimum, rel=1e-9), f"{what}：最慢段不是最小的。{HINT}"


def plausible(sub, what):
    """Credit for a well-formed partition, edge cases and validation needs an optimal partition of an
    ordinary case too: the even split and [1]·(P−1) + [L−P+1] are well-formed without minimising."""
    costs, p = PLAUSIBLE
    counts = valid_counts(sub.call(FN, costs, p), costs, p, f"{what}（这一项只在普通情形也正确时得分）")
    assert approx(max(loads(costs, counts)), brute_force(costs, p), rel=1e-9), (
        f"{what}：这一项只在普通情形的最慢段也是最小的时才得分，而这里不是。{HINT}"
    )


def ordinary_case_gates_the_partition_part(sub):
    with part("partition"):
        plausible(sub, "划分合法")


@item("partition", weight=3, parts=PARTS)
def test_small_against_enumeration(sub):
    rng = random.Random(seed(30311))  # random cases: the student's own with a course secret
    # fixed: optimum 6.0; neither an even split, the greedy against the average nor [1, 1, 1, 6] is
    # optimal, and the greedy pass at the optimum fills only 3 of the 4 stages
    cases = [([2.0, 1.0, 1.0, 1.0, 1.0, 6.0, 1.0, 1.0, 2.0], 4)]
    for _ in range(6):
        L = rng.randint(4, 10)
        p = rng.randint(2, min(5, L))
        cases.append(([rng.choice([0.5, 1.0, 1.0, 2.2, 3.7, 9.0]) for _ in range(L)], p))
    for (costs, p), r in zip(cases, sub.calls(FN, cases), strict=True):
        check_answer(r, costs, p, brute_force(costs, p), "小规模随机输入")
    ordinary_case_gates_the_partition_part(sub)


@item("partition", weight=2, parts=PARTS)
def test_heavy_layers_against_dp(sub):
    rng = random.Random(seed(30312))  # random cases: the student's own with a course secret
    # fixed: two heavy layers in 24, optimum 9.0 (no even split, greedy against the average or [1, 1, 1, 21])
    cases = [([1.0] * 10 + [5.0, 1.0, 1.0, 6.0] + [1.0] * 10, 4)]
    for L, p in ((40, 6), (60, 9)):
        costs = [1.0] * L
        for i in rng.sample(range(L), 4):
            costs[i] = round(rng.uniform(2.0, 6.0), 2)
        cases.append(([c * rng.uniform(0.9, 1.1) for c in costs], p))
    for (costs, p), r in zip(cases, sub.calls(FN, cases), strict=True):
        check_answer(r, costs, p, dp(costs, p), "带若干重层的中等规模输入")
    ordinary_case_gates_the_partition_part(sub)


@item("partition", weight=1, parts=PARTS)
def test_large_within_time(sub):
    rng = random.Random(seed(30313))  # random cases: the student's own with a course secret
    fixed = [0.5 + (7 * i % 13) * 0.75 + (6.0 if i % 50 == 17 else 0.0) for i in range(400)]  # optimum 34.0
    for costs in (fixed, [rng.uniform(0.1, 10.0) for _ in range(400)]):
        r = sub.call(FN, Array(costs, "float64"), 64)
        check_answer(r, costs, 64, bisection(costs, 64), "400 层、64 个阶段（numpy 数组输入）")
    ordinary_case_gates_the_partition_part(sub)


@item("partition", weight=0.5, edge=True)
def test_one_stage_per_layer(sub):
    r = sub.call(FN, [3.0, 1.0, 2.0], 3)
    assert r.ok, r.describe_failure()
    assert r.value == [1, 1, 1], "阶段数等于层数时只能每段一层"
    plausible(sub, "阶段数少于层数时")


@item("partition", weight=0.5, edge=True)
def test_single_stage(sub):
    r = sub.call(FN, [3.0, 1.0, 2.0], 1)
    assert r.ok, r.describe_failure()
    assert r.value == [3], "只有一个阶段 时所有层都在这一段"
    plausible(sub, "多个阶段 时")


@item("partition", weight=1, edge=True)
def test_validation(sub):
    bad = [
        (([1.0, 2.0], 3), "阶段数多于层数"),
        (([1.0, 2.0], 0), "阶段数为 0"),
        (([1.0, 2.0], 1.5), "阶段数不是整数"),
        (([], 1), "layer_costs 为空"),
        (([1.0, -2.0], 1), "含负的耗时"),
    ]
    for (_, what), r in zip(bad, sub.calls(FN, [args for args, _ in bad]), strict=True):
        assert r.raised("ValueError"), f"{what}时应抛出 ValueError"
    plausible(sub, "合法输入")  # only raising ValueError validates nothing
