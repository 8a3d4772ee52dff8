"""Hidden tests for lesson 03, rubric item ``scheduling`` (2 points).

Contract (notebook, 练习 3): ``simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0)``
returns ``{"static": R, "dynamic": R}``, ``R = {"makespan", "idle", "ops"}``. F(k,p) needs F(k,p-1);
B(k,P-1) needs F(k,P-1); B(k,p) needs B(k,p+1). Static = each stage replays its 1F1B list (warm-up
min(P-1-p, n) forwards, then F/B pairs, then the remaining backwards). Dynamic = non-delay, in global
time order; a stage may start the next forward only while fewer than P-p+extra_in_flight microbatches
are in flight on it; on equal start times a stage prefers its backward; every dynamic op takes
overhead + its cost. idle[p] = makespan - compute on p. ops sorted by (start, stage).

Weights: core 2 + 1 + 1 + 1 + 1 = 6, edge/validation 0.5 + 0.5 + 1 = 2 (a quarter); total 8.
The random static and dynamic cases include batches with n ≤ P−2 microbatches (warm-up min(P−1−p, n)
is n on the first stages), so code that breaks on short batches loses core credit, not one edge test;
the one-microbatch/one-stage test also asks for an ordinary case (issue 21).
Credit per returned value (issue 12): the summary tests weigh ``makespan`` and ``idle`` separately, the
ops test the static and the dynamic timelines. The validation test also asks for the right result on
valid input, so code that does nothing (``null_*``) scores 0.
Oracles (this module): the static schedule by longest-path relaxation over the per-stage orders, the
dynamic one by a time-stepping loop over completion events. Costs are multiples of 0.25, so every sum
is exact and ties are real ties, broken as the contract says.
Per-student hidden cases (issue 27): random cases come from ``seed(<fixed seed>)`` (the student's own
with a course secret); every test with random cases also holds hand-written fixed cases, which alone
catch each catalogued mistake (tests/test_seeding.py grades the catalogue under several secrets).
"""

from __future__ import annotations

import random

from autograder.testing import Array, approx, item, memo, part, seed

FN = "simulate_static_vs_dynamic"
STATIC_HINT = (
    "静态策略：stage p 先做 min(P−1−p, n) 个前向，再交替『前向、反向』，最后做完剩下的反向；"
    "轮到的操作要等上一个操作结束且输入就绪"
)
DYN_HINT = (
    "动态策略：按全局时间推进，每个阶段 只看下一个反向和下一个前向；前向受在途上限 P−p+extra_in_flight "
    "约束；同一时刻反向优先；每个操作占用 overhead + 计算耗时"
)


def one_f_one_b(p, P, n):
    w = min(P - 1 - p, n)
    order = [("F", k) for k in range(w)]
    for i in range(n - w):
        order += [("F", w + i), ("B", i)]
    return order + [("B", k) for k in range(n - w, n)]


def dep_of(kind, k, p, P):
    if kind == "F":
        return ("F", k, p - 1) if p > 0 else None
    return ("F", k, p) if p == P - 1 else ("B", k, p + 1)


@memo  # computed once per grader process
def static_oracle(F, B):
    n, P = len(F), len(F[0])
    orders = [one_f_one_b(p, P, n) for p in range(P)]
    start = {(kind, k, p): 0.0 for p in range(P) for kind, k in orders[p]}

    def end(op):
        kind, k, p = op
        return start[op] + (F[k][p] if kind == "F" else B[k][p])

    changed = True
    while changed:  # longest path: relax until nothing moves (the graph is acyclic)
        changed = False
        for p in range(P):
            for i, (kind, k) in enumerate(orders[p]):
                op = (kind, k, p)
                t = 0.0
                if i:
                    t = end((orders[p][i - 1][0], orders[p][i - 1][1], p))
                d = dep_of(kind, k, p, P)
                if d is not None:
                    t = max(t, end(d))
                if t > start[op]:
                    start[op], changed = t, True
    ops = [[p, kind, k, start[(kind, k, p)], end((kind, k, p))] for (kind, k, p) in start]
    return summarise(ops, F, B)


@memo  # computed once per grader process
def dynamic_oracle(F, B, extra, delta):
    n, P = len(F), len(F[0])
    done = {}
    nf, nb, free = [0] * P, [0] * P, [0.0] * P
    ops, now = [], 0.0
    while len(ops) < 2 * n * P:
        for p in range(P):
            if free[p] > now:
                continue
            pick = None
            if nb[p] < nf[p]:
                d = dep_of("B", nb[p], p, P)
                if d in done and done[d] <= now:
                    pick = ("B", nb[p])
            if pick is None and nf[p] < n and nf[p] - nb[p] < P - p + extra:
                d = dep_of("F", nf[p], p, P)
                if d is None or (d in done and done[d] <= now):
                    pick = ("F", nf[p])
            if pick is not None:
                kind, k = pick
                e = now + delta + (F[k][p] if kind == "F" else B[k][p])
                done[(kind, k, p)] = free[p] = e
                ops.append([p, kind, k, now, e])
                if kind == "F":
                    nf[p] += 1
                else:
                    nb[p] += 1
        later = [t for t in done.values() if t > now]
        if len(ops) < 2 * n * P:
            now = min(later)
    return summarise(ops, F, B)


def summarise(ops, F, B):
    P = len(F[0])
    makespan = max(o[4] for o in ops)
    idle = [makespan - sum(F[k][p] + B[k][p] for k in range(len(F))) for p in range(P)]
    return {"makespan": makespan, "idle": idle, "ops": sorted(ops, key=lambda o: (o[3], o[0]))}


def random_instance(rng, n, P):
    lengths = [rng.choice([1, 1, 2, 3, 4]) for _ in range(n)]
    factor = [rng.choice([0.5, 1.0, 1.0, 1.5]) for _ in range(P)]
    fwd = [[lengths[k] * factor[p] for p in range(P)] for k in range(n)]
    bwd = [[x * rng.choice([1.5, 2.0, 2.0, 2.5]) for x in row] for row in fwd]
    return fwd, bwd


def fixed_instance(lengths, factor, mult):
    """A hand-written instance: fwd[k][p] = lengths[k]·factor[p], bwd = fwd × a cycling multiplier."""
    fwd = [[n * f for f in factor] for n in lengths]
    bwd = [[x * mult[(k + p) % len(mult)] for p, x in enumerate(row)] for k, row in enumerate(fwd)]
    return fwd, bwd


# Fixed cases (the same for every student; random ones come on top, seeded per student): on A, B and C,
# GPipe's static order differs from 1F1B, the dynamic in-flight cap binds (at extra_in_flight 0, or at the
# extra each test gives) and a forward-first tie-break changes the dynamic result; SHORT has n ≤ P − 2.
# So each catalogued mistake loses the same tests whatever the random cases.
FIXED_A = fixed_instance([1, 3, 1, 2, 4, 1], [1.0, 0.5, 1.5], [2.0, 1.5, 2.5])  # n = 6, P = 3
FIXED_B = fixed_instance([2, 1, 4, 1, 1, 3, 2, 1], [1.0, 1.5, 0.5, 1.0], [2.0, 2.5, 1.5])  # P = 4, binds at 1
FIXED_C = fixed_instance([1, 4, 1, 1, 2, 3, 1, 2, 1, 1], [0.5, 1.0, 1.5, 1.0, 0.5], [2.0, 1.5, 2.5])
FIXED_SHORT = fixed_instance([2, 1], [1.0, 0.5, 1.5, 1.0], [2.0, 1.5])  # n = 2 ≤ P − 2


def same_summary(got, expected):
    return (
        isinstance(got, dict)
        and approx(got.get("makespan"), expected["makespan"])
        and isinstance(got.get("idle"), list)
        and len(got["idle"]) == len(expected["idle"])
        and all(approx(g, e) for g, e in zip(got["idle"], expected["idle"], strict=True))
    )


SUMMARY = {"makespan": 1, "idle": 1}  # credit per returned value


def check_summary(got, expected, what):
    """makespan and idle of one policy; in a test with parts each is its own part."""
    assert isinstance(got, dict), f"{what}：每种策略的结果应是含 makespan、idle、ops 的 dict"
    with part("makespan"):
        assert approx(got.get("makespan"), expected["makespan"]), f"{what}：makespan 不对"
    with part("idle"):
        idle = got.get("idle")
        assert (
            isinstance(idle, list)
            and len(idle) == len(expected["idle"])
            and all(approx(g, e) for g, e in zip(idle, expected["idle"], strict=True))
        ), f"{what}：各阶段 的空闲时间 idle 不对（idle[p] = makespan − stage p 的计算时间）"


def result_parts(r):
    assert r.ok, r.describe_failure()
    assert isinstance(r.value, dict) and {"static", "dynamic"} <= set(r.value), (
        "返回值应是含 'static' 和 'dynamic' 两个键的 dict"
    )
    return r.value["static"], r.value["dynamic"]


PLAUSIBLE = (
    [[1.0, 2.0, 0.5], [2.0, 1.0, 1.5], [0.5, 1.5, 1.0], [1.5, 0.5, 2.0]],
    [[2.0, 3.5, 1.0], [3.0, 2.0, 2.5], [1.0, 2.5, 2.0], [2.5, 1.0, 3.0]],
)  # an ordinary case


def plausible(sub, what):
    """Credit for an edge case needs the right static summary of an ordinary case too."""
    fwd, bwd = PLAUSIBLE
    static, _ = result_parts(sub.call(FN, fwd, bwd))
    assert same_summary(static, static_oracle(fwd, bwd)), (
        f"{what}：静态 1F1B 的结果不对（边界情形只在普通情形也正确时得分）。{STATIC_HINT}"
    )


@item("scheduling", weight=2, parts=SUMMARY)
def test_static_one_f_one_b(sub):
    rng = random.Random(seed(30321))  # random cases: the student's own with a course secret
    cases = [FIXED_A, FIXED_SHORT]
    cases += [
        random_instance(rng, n, P) for n, P in ((6, 3), (10, 4), (16, 6), (3, 6), (2, 5))
    ]  # n ≤ P−2 too
    for (fwd, bwd), r in zip(cases, sub.calls(FN, cases), strict=True):
        static, _ = result_parts(r)
        check_summary(static, static_oracle(fwd, bwd), f"变长微批次下静态 1F1B：{STATIC_HINT}")


@item("scheduling", weight=1, parts=SUMMARY)
def test_dynamic_same_memory(sub):
    rng = random.Random(seed(30322))  # random cases: the student's own with a course secret
    cases = [FIXED_A, FIXED_SHORT]
    cases += [random_instance(rng, n, P) for n, P in ((8, 4), (12, 5), (2, 6))]  # n ≤ P−2 too
    for (fwd, bwd), r in zip(cases, sub.calls(FN, cases), strict=True):
        _, dynamic = result_parts(r)
        check_summary(
            dynamic, dynamic_oracle(fwd, bwd, 0, 0.0), f"extra_in_flight = 0 时动态策略：{DYN_HINT}"
        )


@item("scheduling", weight=1, parts=SUMMARY)
def test_dynamic_extra_memory(sub):
    rng = random.Random(seed(30323))  # random cases: the student's own with a course secret
    cases = [(*FIXED_B, 1)]
    cases += [(*random_instance(rng, n, P), extra) for n, P, extra in ((10, 4, 2), (14, 5, 1), (3, 7, 1))]
    for (fwd, bwd, extra), r in zip(cases, sub.calls(FN, cases), strict=True):
        _, dynamic = result_parts(r)
        check_summary(
            dynamic, dynamic_oracle(fwd, bwd, extra, 0.0), f"允许额外在途微批次时动态策略：{DYN_HINT}"
        )


@item("scheduling", weight=1, parts=SUMMARY)
def test_dynamic_overhead(sub):
    rng = random.Random(seed(30324))  # random cases: the student's own with a course secret
    for fwd, bwd in (FIXED_B, random_instance(rng, 9, 4)):
        static, dynamic = result_parts(sub.call(FN, fwd, bwd, 1, overhead=0.25))
        check_summary(static, static_oracle(fwd, bwd), "overhead 只作用于动态策略，静态结果不应改变")
        check_summary(
            dynamic,
            dynamic_oracle(fwd, bwd, 1, 0.25),
            "有决策开销时动态策略：每个操作占用 overhead + 计算耗时，开销计入空闲时间",
        )


@item("scheduling", weight=1, parts={"static": 1, "dynamic": 1})
def test_ops_listing(sub):
    rng = random.Random(seed(30325))  # random cases: the student's own with a course secret
    for fwd, bwd in (FIXED_C, random_instance(rng, 7, 3)):
        static, dynamic = result_parts(sub.call(FN, fwd, bwd, 1))
        for got, expected, name in (
            (static, static_oracle(fwd, bwd), "静态"),
            (dynamic, dynamic_oracle(fwd, bwd, 1, 0.0), "动态"),
        ):
            ops = got.get("ops") if isinstance(got, dict) else None
            with part("static" if name == "静态" else "dynamic"):
                assert isinstance(ops, list) and len(ops) == len(expected["ops"]), (
                    f"{name}结果的 ops 应列出全部 2·n·P 个操作"
                )
                ok = all(
                    isinstance(o, list)
                    and len(o) == 5
                    and o[:3] == e[:3]
                    and approx(o[3], e[3])
                    and approx(o[4], e[4])
                    for o, e in zip(ops, expected["ops"], strict=True)
                )
                assert ok, (
                    f"{name}结果的 ops 与正确的时间线不一致（每项 [stage, 'F'/'B', 微批次, 开始, 结束]，按 (开始, stage) 排序）"
                )


@item("scheduling", weight=0.5, edge=True)
def test_degenerate_shapes(sub):
    for fwd, bwd in (([[1.0, 2.0, 0.5]], [[2.0, 1.0, 1.0]]), ([[1.0], [3.0], [2.0]], [[1.0], [1.0], [0.5]])):
        static, dynamic = result_parts(sub.call(FN, fwd, bwd))
        assert same_summary(static, static_oracle(fwd, bwd)) and same_summary(
            dynamic, dynamic_oracle(fwd, bwd, 0, 0.0)
        ), "只有一个微批次或只有一个阶段 时结果不对"
    plausible(sub, "多个微批次、多个阶段 时")


@item("scheduling", weight=0.5, edge=True)
def test_numpy_input_not_modified(sub):
    fwd, bwd = [[1.0, 2.0], [2.0, 1.0], [1.0, 1.0]], [[2.0, 4.0], [4.0, 2.0], [2.0, 2.0]]
    r = sub.call(FN, Array(fwd, "float64"), Array(bwd, "float64"), 1)
    static, dynamic = result_parts(r)
    assert same_summary(static, static_oracle(fwd, bwd)) and same_summary(
        dynamic, dynamic_oracle(fwd, bwd, 1, 0.0)
    ), "输入为二维 numpy 数组时结果不对"
    r = sub.call(FN, fwd, bwd)
    assert r.ok, r.describe_failure()
    assert r.args_after[:2] == [fwd, bwd], "函数修改了传入的 fwd 或 bwd"


@item("scheduling", weight=1, edge=True)
def test_validation(sub):
    ok_f, ok_b = [[1.0, 1.0]], [[1.0, 1.0]]
    bad = [
        (([[1.0, 0.0]], ok_b), {}, "耗时为 0"),
        (([[1.0, -1.0]], ok_b), {}, "耗时为负"),
        (([], []), {}, "矩阵为空"),
        (([[1.0, 1.0], [1.0]], [[1.0, 1.0], [1.0]]), {}, "各行长度不一"),
        ((ok_f, [[1.0, 1.0, 1.0]]), {}, "fwd 与 bwd 形状不同"),
        ((ok_f, ok_b), {"extra_in_flight": -1}, "extra_in_flight 为负"),
        ((ok_f, ok_b), {"overhead": float("inf")}, "overhead 为无穷大"),
    ]
    for (_, _, what), r in zip(bad, sub.calls_with(FN, [(a, k) for a, k, _ in bad]), strict=True):
        assert r.raised("ValueError"), f"{what}时应抛出 ValueError"
    fwd, bwd = [[1.0, 2.0], [2.0, 1.0], [1.0, 1.5]], [[2.0, 3.0], [3.0, 2.0], [2.0, 2.5]]
    static, dynamic = result_parts(sub.call(FN, fwd, bwd))  # valid input: only raising validates nothing
    assert same_summary(static, static_oracle(fwd, bwd)) or same_summary(
        dynamic, dynamic_oracle(fwd, bwd, 0, 0.0)
    ), "合法输入的结果不对：静态与动态策略都不对（校验这一项只在核心结果也合理时得分）"
