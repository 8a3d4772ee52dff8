"""Hidden tests for lesson 03, rubric item ``stage_times`` (2 points).

Contract (notebook, 练习 1): ``stage_times(layer_costs, partition) -> (times, ratio)``; stage p holds the
next ``partition[p]`` consecutive layers; ``times`` is a list of Python floats, ``ratio`` =
max(times)/mean(times) (1.0 when every time is 0); inputs (list, tuple, numpy) are not modified;
ValueError for empty/negative/NaN/infinite/non-numeric costs, an empty partition, a non-integer (bool
included) or < 1 entry, or a partition whose sum is not the number of layers.

Weights: core 3 + 1 + 1 + 1 = 6, edge/validation 0.5 + 0.5 + 1 = 2 (a quarter); total 8.
Credit per returned value (issue 12): the value tests give half their weight to ``times`` and half to
``ratio``. Every test that a stub or a constant could pass (types, not modified, all-zero, validation)
also checks the values of an ordinary case, so code that does nothing (``null_*``) scores 0; so
does the single-stage test (issue 21: every edge test is gated on an ordinary case).
Oracle: prefix sums with math.fsum, in this module.
Per-student hidden cases (issue 27): random cases come from ``seed(<fixed seed>)`` (the student's own
with a course secret); every test with random cases also holds hand-written fixed cases, which alone
catch each catalogued mistake (tests/test_seeding.py grades the catalogue under several secrets).
"""

from __future__ import annotations

import math
import random

from autograder.testing import Array, Tuple, approx, is_float, item, part, seed

FN = "stage_times"
RULE = "stage p 的耗时是它按顺序连续分到的那几层的耗时之和；不均衡比 = 最大值 / 平均值"


def oracle(costs, counts):
    times, start = [], 0
    for c in counts:
        times.append(math.fsum(costs[start : start + c]))
        start += c
    mean = math.fsum(times) / len(times)
    return times, (max(times) / mean if mean > 0 else 1.0)


def random_case(rng, layers, stages):
    costs = [round(rng.uniform(0.2, 5.0), 3) for _ in range(layers)]
    cuts = sorted(rng.sample(range(1, layers), stages - 1))
    bounds = [0, *cuts, layers]
    return costs, [bounds[i + 1] - bounds[i] for i in range(stages)]


VALUES = {"times": 1, "ratio": 1}  # credit per returned value
PLAUSIBLE = ([2.5, 0.75, 4.0, 1.25, 3.0, 0.5, 2.0], [2, 3, 2])  # an ordinary case, not a core test's


def check(r, costs, counts, what):
    """Both returned values; in a test with parts each is its own part."""
    times, ratio = oracle(costs, counts)
    assert r.ok, r.describe_failure()
    v = r.value
    assert isinstance(v, list) and len(v) == 2 and isinstance(v[0], list), "返回值应是 (times, ratio)"
    with part("times"):
        assert len(v[0]) == len(times) and all(approx(g, e) for g, e in zip(v[0], times, strict=True)), (
            f"{what}：各段耗时不对：{RULE}"
        )
    with part("ratio"):
        assert approx(v[1], ratio), f"{what}：不均衡比不对：{RULE}"


def plausible(r, what, costs=PLAUSIBLE[0], counts=PLAUSIBLE[1]):
    """Credit for types, untouched inputs, edge cases and validation needs plausible core behaviour too:
    the stage times (the first returned value) of the call are right."""
    assert r.ok, r.describe_failure()
    v = r.value
    times, _ = oracle(costs, counts)
    assert isinstance(v, list) and len(v) == 2 and isinstance(v[0], list) and len(v[0]) == len(times), (
        "返回值应是 (times, ratio)"
    )
    assert all(approx(g, e) for g, e in zip(v[0], times, strict=True)), (
        f"{what}：各段耗时不对（这一项只在核心结果也正确时得分）：{RULE}"
    )


def same(value, costs, counts):
    times, ratio = oracle(costs, counts)
    if not isinstance(value, list) or len(value) != 2 or not isinstance(value[0], list):
        return False
    got_times, got_ratio = value
    return (
        len(got_times) == len(times)
        and all(approx(g, e) for g, e in zip(got_times, times, strict=True))
        and approx(got_ratio, ratio)
    )


@item("stage_times", weight=3, parts=VALUES)
def test_random_partitions(sub):
    rng = random.Random(seed(30301))  # random cases: the student's own with a course secret
    cases = [([4.0, 1.0, 1.0, 3.0, 0.5, 2.5], [1, 3, 2])]  # fixed: max/mean 1.25, max/min 5/3
    cases += [random_case(rng, layers, stages) for layers, stages in ((7, 3), (24, 8), (50, 11))]
    for (costs, counts), r in zip(cases, sub.calls(FN, cases), strict=True):
        check(r, costs, counts, "随机的层耗时与切分下")


@item("stage_times", weight=1, parts=VALUES)
def test_numpy_and_tuple_inputs(sub):
    rng = random.Random(seed(30302))  # random cases: the student's own with a course secret
    for costs, counts in (([2.0, 6.0, 1.0, 3.0, 4.0], [2, 1, 2]), random_case(rng, 12, 4)):  # fixed, random
        check(
            sub.call(FN, Array(costs, "float64"), Array(counts, "int64")),
            costs,
            counts,
            "layer_costs 为 numpy 数组、partition 为 numpy 整数数组时",
        )
        check(sub.call(FN, Tuple(*costs), Tuple(*counts)), costs, counts, "输入为 tuple 时")


@item("stage_times", weight=1)
def test_returns_plain_floats(sub):
    r = sub.call(FN, Array([1.0, 2.0, 3.0, 4.0, 5.0], "float64"), Array([2, 3], "int64"))
    plausible(r, "检查返回类型时", [1.0, 2.0, 3.0, 4.0, 5.0], [2, 3])
    top = r.types
    ok = (
        isinstance(top, list)
        and top[0] == "tuple"
        and len(top[1]) == 2
        and isinstance(top[1][0], list)
        and top[1][0][0] == "list"
        and all(t == "float" for t in top[1][0][1])
        and is_float(top[1][1])
    )
    assert ok, "返回值应是 (list, float)，list 中每个元素是 Python float（用 float(...) 转换 numpy 数值）"


@item("stage_times", weight=1)
def test_inputs_not_modified(sub):
    costs, counts = [3.0, 1.0, 2.0, 5.0, 4.0], [2, 1, 2]
    r = sub.call(FN, costs, counts)
    assert r.ok, r.describe_failure()
    assert r.args_after == [costs, counts], "函数修改了传入的 layer_costs 或 partition"
    plausible(r, "检查输入是否被修改时", costs, counts)


@item("stage_times", weight=0.5, edge=True)
def test_all_zero_costs(sub):
    r = sub.call(FN, [0.0, 0.0, 0.0], [1, 2])
    assert r.ok, r.describe_failure()
    assert isinstance(r.value, list) and r.value[0] == [0.0, 0.0] and approx(r.value[1], 1.0), (
        "所有层耗时都为 0 时，各段耗时为 0，不均衡比按约定为 1.0"
    )
    plausible(sub.call(FN, *PLAUSIBLE), "耗时不全为 0 时")


@item("stage_times", weight=0.5, edge=True)
def test_single_stage(sub):
    r = sub.call(FN, [2.0, 3.0], [2])
    assert r.ok, r.describe_failure()
    assert isinstance(r.value, list) and same(r.value, [2.0, 3.0], [2]), "只有一个阶段 时不均衡比应为 1.0"
    plausible(sub.call(FN, *PLAUSIBLE), "多个阶段 时")


@item("stage_times", weight=1, edge=True)
def test_validation(sub):
    bad = [
        (([1.0, 2.0, 3.0], [1, 1]), "partition 的总和与层数不一致"),
        (([], []), "layer_costs 为空"),
        (([1.0, -1.0], [1, 1]), "含负的耗时"),
        (([1.0, float("nan")], [1, 1]), "含 NaN"),
        (([1.0, 2.0, 3.0], [0, 3]), "partition 中有 0"),
        (([1.0, 2.0], [1.5, 0.5]), "partition 中有非整数"),
        (([1.0, 2.0], [True, True]), "partition 中有 bool"),
    ]
    for (_, what), r in zip(bad, sub.calls(FN, [args for args, _ in bad]), strict=True):
        assert r.raised("ValueError"), f"{what}时应抛出 ValueError"
    plausible(sub.call(FN, *PLAUSIBLE), "合法输入")  # only raising ValueError validates nothing
