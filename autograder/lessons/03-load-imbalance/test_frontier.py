"""Hidden tests for lesson 03, rubric item ``frontier`` (1 point).

Contract (notebook, 练习 4): ``throughput_latency_frontier(total_work, stage_options, microbatch_options,
*, overhead, weight_mem, act_mem, mem_cap, schedule, microbatch_size)``: t = W/P + c, latency
T = (m+P-1)·t, throughput = m·b/T, memory per GPU (M_w + k·M_a)/P with k = min(m, P) (1f1b) or m
(gpipe), feasible when memory <= mem_cap (None: no cap); returns the feasible non-dominated
(P, m, throughput, latency) tuples sorted by (latency, P, m); exact ties are all kept; [] when nothing
is feasible; ValueError on invalid arguments.

Weights: core 3 + 1 + 1 + 1 = 6, edge/validation 0.5 + 0.5 + 1 = 2 (a quarter); total 8.
Credit per part of the contract (issue 12): the frontier tests weigh which (P, m) points are on the
frontier and their throughput/latency values separately (the values are judged only when the points
are right). The type test, "nothing feasible" and validation also ask for the right frontier of an
ordinary case, so code that does nothing (``null_*``) scores 0.
One 1F1B case puts the memory cap between P−1 and P microbatches in flight (issue 21), and the
exact-ties test also asks for an ordinary frontier.
Oracle (this module): enumerate the grid, O(N²) dominance check. Random instances are drawn so that no
two distinct points are within 1e-9 of each other, so rounding cannot change the answer.
Per-student hidden cases (issue 27): random cases come from ``seed(<fixed seed>)`` (the student's own
with a course secret); every test with random cases also holds hand-written fixed cases, which alone
catch each catalogued mistake (tests/test_seeding.py grades the catalogue under several secrets).
"""

from __future__ import annotations

import random

from autograder.testing import approx, item, memo, part, seed

FN = "throughput_latency_frontier"
MODEL = "t = W/P + c，延迟 = (m+P−1)·t，吞吐 = m·b/延迟，每卡显存 = (M_w + k·M_a)/P"


@memo  # computed once per grader process
def oracle(W, Ps, ms, c=0.0, wm=0.0, am=0.0, cap=None, schedule="1f1b", b=1):
    pts = []
    for P in sorted(set(Ps)):
        for m in sorted(set(ms)):
            k = min(m, P) if schedule == "1f1b" else m
            if cap is not None and (wm + k * am) / P > cap:
                continue
            lat = (m + P - 1) * (W / P + c)
            pts.append((P, m, m * b / lat, lat))

    def dominated(x):
        return any(y[2] >= x[2] and y[3] <= x[3] and (y[2] > x[2] or y[3] < x[3]) for y in pts)

    return sorted((x for x in pts if not dominated(x)), key=lambda x: (x[3], x[0], x[1])), pts


def well_separated(pts):
    for i, x in enumerate(pts):
        for y in pts[i + 1 :]:
            if abs(x[2] - y[2]) <= 1e-9 * max(x[2], y[2]) or abs(x[3] - y[3]) <= 1e-9 * max(x[3], y[3]):
                if (x[0], x[1]) != (y[0], y[1]):
                    return False
    return True


POINTS = {"points": 1, "values": 1}  # credit per part of the contract


def matches(r, expected, what):
    """The (P, m) points, then their values; in a test with parts each is its own part."""
    assert r.ok, r.describe_failure()
    got = r.value
    assert isinstance(got, list), f"{what}：应返回 list"
    same_points = [tuple(g[:2]) for g in got if isinstance(g, list) and len(g) == 4] == [
        e[:2] for e in expected
    ] and len(got) == len(expected)
    with part("points"):
        assert same_points, (
            f"{what}：前沿上的 (P, m) 组合不对（检查可行性判断、支配关系和排序）。模型：{MODEL}"
        )
    with part("values"):
        assert same_points and all(
            approx(g[2], e[2]) and approx(g[3], e[3]) for g, e in zip(got, expected, strict=True)
        ), f"{what}：吞吐或延迟的数值不对。模型：{MODEL}"


def plausible(sub, what):
    """Credit for types, edge cases and validation needs the right frontier of an ordinary case too."""
    front, _ = oracle(40.0, [1, 2, 4], [1, 2, 4, 8], 0.5)
    matches(
        sub.call(FN, 40.0, [1, 2, 4], [1, 2, 4, 8], overhead=0.5),
        front,
        f"{what}（这一项只在结果也正确时得分）",
    )


def random_config(rng):
    while True:
        cfg = dict(
            overhead=rng.uniform(0.0, 3.0),
            weight_mem=rng.uniform(50, 200),
            act_mem=rng.uniform(5, 60),
            mem_cap=rng.uniform(30, 90),
            schedule=rng.choice(["1f1b", "gpipe"]),
        )
        W = rng.uniform(20.0, 200.0)
        Ps = rng.sample([1, 2, 3, 4, 6, 8, 12, 16], 5)
        ms = rng.sample([1, 2, 3, 4, 6, 8, 16, 24, 32, 64], 6)
        front, pts = oracle(
            W, Ps, ms, cfg["overhead"], cfg["weight_mem"], cfg["act_mem"], cfg["mem_cap"], cfg["schedule"]
        )
        if len(front) >= 2 and well_separated(pts):
            return W, Ps, ms, cfg, front


def fixed_config(W, Ps, ms, c, wm, am, cap, schedule):
    cfg = dict(overhead=c, weight_mem=wm, act_mem=am, mem_cap=cap, schedule=schedule)
    return W, Ps, ms, cfg, oracle(W, Ps, ms, c, wm, am, cap, schedule)[0]


# Fixed configurations (the same for every student; the random ones come on top, seeded per student):
# GPipe with the cap between m = 8 and m = 16 in flight on P = 8 ((64 + 8·8)/8 = 16 ≤ 17 < 24), so costing
# it as 1F1B keeps (8, 16); 1F1B with the cap between 5 and 6 in flight on P = 6 (23.3 ≤ 25 < 26.7), so
# min(m, P − 1) keeps (6, 6) and (6, 12).
FIXED = [
    (60.0, [1, 2, 4, 8], [1, 2, 4, 8, 16], 0.5, 64.0, 8.0, 17.0, "gpipe"),
    (90.0, [2, 3, 4, 6], [2, 4, 6, 12], 1.0, 40.0, 20.0, 25.0, "1f1b"),
]


@item("frontier", weight=3, parts=POINTS)
def test_random_configurations(sub):
    rng = random.Random(seed(30331))  # random cases: the student's own with a course secret
    cases = [fixed_config(*args) for args in FIXED] + [random_config(rng) for _ in range(3)]
    calls = sub.calls_with(FN, [((W, Ps, ms), cfg) for W, Ps, ms, cfg, _ in cases])
    for (*_, front), r in zip(cases, calls, strict=True):
        matches(r, front, "随机配置")


@item("frontier", weight=1, parts=POINTS)
def test_gpipe_memory_grows_with_m(sub):
    kw = dict(overhead=0.5, weight_mem=64.0, act_mem=24.0, mem_cap=40.0)
    for schedule in ("gpipe", "1f1b"):
        front, _ = oracle(50.0, [2, 4, 8], [1, 2, 4, 8, 16], 0.5, 64.0, 24.0, 40.0, schedule)
        matches(
            sub.call(FN, 50.0, [2, 4, 8], [1, 2, 4, 8, 16], schedule=schedule, **kw),
            front,
            f"schedule = {schedule!r}（GPipe 在途 m 个、1F1B 在途 min(m, P) 个微批次的激活）",
        )
    # the cap between P−1 and P microbatches in flight on P = 8: (64 + 7·32)/8 = 36 ≤ 38 < 40 = (64 + 8·32)/8
    front, _ = oracle(50.0, [2, 4, 8], [1, 2, 4, 8, 16], 2.0, 64.0, 32.0, 38.0, "1f1b")
    matches(
        sub.call(
            FN, 50.0, [2, 4, 8], [1, 2, 4, 8, 16], overhead=2.0, weight_mem=64.0, act_mem=32.0, mem_cap=38.0
        ),
        front,
        "1F1B 的 stage 0 在途 min(m, P) 个微批次（不是 P−1 个）：显存上限落在两者之间时",
    )


@item("frontier", weight=1, parts=POINTS)
def test_microbatch_size_and_duplicates(sub):
    front, _ = oracle(30.0, [4, 2, 4], [8, 2, 8, 1], 1.0, b=3)
    matches(
        sub.call(FN, 30.0, [4, 2, 4], [8, 2, 8, 1], overhead=1.0, microbatch_size=3),
        front,
        "microbatch_size ≠ 1、选项中有重复值",
    )


@item("frontier", weight=1)
def test_plain_types(sub):
    r = sub.call(FN, 12.0, [1, 3], [1, 2, 5], overhead=0.5)
    assert r.ok, r.describe_failure()
    ok = r.types[0] == "list" and all(
        t[0] == "tuple" and t[1] == ["int", "int", "float", "float"] for t in r.types[1]
    )
    assert ok and r.value, (
        "返回值应是 (int, int, float, float) 元组组成的 list（P、m 为 Python int，吞吐、延迟为 Python float）"
    )
    front, _ = oracle(12.0, [1, 3], [1, 2, 5], 0.5)
    matches(r, front, "检查返回类型时（这一项只在结果也正确时得分）")


@item("frontier", weight=0.5, edge=True)
def test_nothing_feasible(sub):
    r = sub.call(FN, 10.0, [1, 2], [1, 4], weight_mem=100.0, mem_cap=10.0)
    assert r.ok, r.describe_failure()
    assert r.value == [], "没有可行组合时应返回 []"
    plausible(sub, "有可行组合时")


@item("frontier", weight=0.5, edge=True)
def test_exact_ties_are_kept(sub):
    front, _ = oracle(6.0, [1, 2, 3], [1], 0.0)
    matches(sub.call(FN, 6.0, [1, 2, 3], [1]), front, "吞吐和延迟完全相同的组合互不支配，应全部保留")
    plausible(sub, "没有并列的组合时")


@item("frontier", weight=1, edge=True)
def test_validation(sub):
    bad = [
        ((0.0, [1], [1]), {}, "total_work 为 0"),
        ((10.0, [], [1]), {}, "stage_options 为空"),
        ((10.0, [0, 2], [1]), {}, "stage_options 中有 0"),
        ((10.0, [2], [1.5]), {}, "microbatch_options 中有非整数"),
        ((10.0, [2], [1]), {"overhead": -1.0}, "overhead 为负"),
        ((10.0, [2], [1]), {"schedule": "interleaved"}, "未知的 schedule"),
        ((10.0, [2], [1]), {"mem_cap": float("nan")}, "mem_cap 为 NaN"),
    ]
    for (_, _, what), r in zip(bad, sub.calls_with(FN, [(a, k) for a, k, _ in bad]), strict=True):
        assert r.raised("ValueError"), f"{what}时应抛出 ValueError"
    plausible(sub, "合法输入")  # only raising ValueError validates nothing
