"""Hidden tests for lesson 16, rubric item ``challenge`` (extra credit, 2 points).

Contract (notebook, 挑战题): ``simulate_1f1b(forward_times, backward_times, num_microbatches)`` returns
``(makespan, bubble_ratio)`` of 1F1B with per-stage forward times f_s and backward times b_s. Stage s
runs, in this order, min(m, P−s) forwards, then one backward and one forward alternately, then the
remaining backwards (PyTorch's Schedule1F1B order; for m < P, where PyTorch refuses, the same rule with
min(m, P−s) warm-up forwards, as Megatron does). F(s,k) needs F(s−1,k) finished, B(s,k) needs B(s+1,k)
finished (the last stage's B(s,k) only its own F(s,k)); no transfer time, unbounded buffers; an op
starts when its stage has finished the previous op and its input is there. makespan = end of the last
op; bubble_ratio = 1 − m·Σ(f+b)/(P·makespan); (0.0, 0.0) when every time is 0. Python floats (numpy
floats accepted); inputs not modified; ValueError for empty or 2-D sequences, different lengths, a
negative/NaN/infinite time, or a num_microbatches that is not an integer >= 1.

Weights: core 5 + 2 + 2 + 1 + 2 = 12 (each core test splits its weight between makespan and
bubble_ratio), edge/validation 1 + 0.5 + 1 + 1.5 = 4 (exactly a quarter); total 16, one weight unit
is 2/16 = 0.125 points. Every edge test also asks for a right makespan on an ordinary case, so code
that does nothing (constants, always ValueError) earns nothing.

Oracles, all in the grader process and independent of the student's namespace: the longest path through
the 1F1B op graph (``simulated``; the grader may not import the course library, so
tests/test_lesson16_challenge.py checks this oracle against pipelab's event simulator, whose 1F1B orders
tests/pipelab checks against PyTorch's goldens), the uniform closed form (m+P−1)(f+b), the lower bound
max_s[Σ_{j<s}(f_j+b_j) + m(f_s+b_s)] on cases where the simulator attains it, and the forward-flow
formula Σ(f+b) + (m−1)·max(f+b), exact when the last stage has both the largest f and the largest b
(ties allowed): then it is the last stage's lower bound. A last stage with only the largest f+b is not
enough: f = [1,12,1,2], b = [12,1,1,12] gives 74 against 70 at m = 3. tests/test_lesson16_challenge.py
checks the condition on thousands of random cases and the counterexample; the generator here draws
the other stages anywhere up to the last stage's f and b (ties included) and checks every case
against the longest-path oracle before using it.
"""

from __future__ import annotations

import graphlib
import math
import random

from autograder.testing import Array, Tuple, approx, is_float, item, memo, part, per_submission, seed

SIM = "simulate_1f1b"
RULE = (
    "stage p 的指令顺序：先做 min(m, P−p) 个前向，然后反向、前向交替，最后做完剩下的反向；"
    "前向 F(p,k) 要等 F(p−1,k) 完成，反向 B(p,k) 要等 B(p+1,k) 完成，每个阶段 一次只做一个操作"
)
BUBBLE_RULE = "bubble_ratio = 1 − m·Σ(f+b) / (P·makespan)：空闲时间占 P × makespan 的比例，前向和反向都算工作"
VALUES = {"makespan": 1, "bubble_ratio": 1}  # credit per returned value


# -- oracles ---------------------------------------------------------------------------------------
@memo  # the same cases for every submission: computed once per grader process
def simulated(f: list[float], b: list[float], m: int) -> float:
    """Makespan of 1F1B as the longest path through the op graph: an op starts after its stage's previous
    op and after its input (graphlib's topological order). The grader may not import the course library,
    so this is written here; tests/test_lesson16_challenge.py checks it against pipelab's event simulator
    (whose 1F1B orders tests/pipelab checks against PyTorch's)."""
    P = len(f)
    preds: dict[tuple[str, int, int], list[tuple[str, int, int]]] = {}
    for s in range(P):
        warm = min(m, P - s)
        seq = [("F", s, k) for k in range(warm)]
        for k in range(m):
            seq += [("B", s, k)] + ([("F", s, warm + k)] if warm + k < m else [])
        for i, op in enumerate(seq):
            kind, _, k = op
            deps = [seq[i - 1]] if i else []
            if kind == "F" and s > 0:
                deps.append(("F", s - 1, k))
            if kind == "B" and s < P - 1:
                deps.append(("B", s + 1, k))
            preds[op] = deps
    end: dict[tuple[str, int, int], float] = {}
    for op in graphlib.TopologicalSorter(preds).static_order():
        kind, s, _ = op
        end[op] = max((end[d] for d in preds[op]), default=0.0) + (f[s] if kind == "F" else b[s])
    return max(end.values())


def bubble_of(f: list[float], b: list[float], m: int, makespan: float) -> float:
    return 0.0 if makespan == 0 else 1.0 - m * (math.fsum(f) + math.fsum(b)) / (len(f) * makespan)


def lower_bound(f: list[float], b: list[float], m: int) -> float:
    fb = [x + y for x, y in zip(f, b, strict=True)]
    return max(math.fsum(fb[:s]) + m * fb[s] for s in range(len(fb)))


def forward_formula(f: list[float], b: list[float], m: int) -> float:
    fb = [x + y for x, y in zip(f, b, strict=True)]
    return math.fsum(fb) + (m - 1) * max(fb)


# -- helpers ---------------------------------------------------------------------------------------
def _pair(r) -> tuple[float, float]:
    assert r.ok, r.describe_failure()
    v = r.value
    assert isinstance(v, list) and len(v) == 2, "应返回二元组 (makespan, bubble_ratio)"
    assert all(isinstance(x, int | float) and not isinstance(x, bool) for x in v), (
        "makespan 与 bubble_ratio 都应是数（float）"
    )
    return v[0], v[1]


def _check(r, f, b, m, makespan: float, what: str, hint: str = RULE) -> None:
    got_t, got_bubble = _pair(r)
    with part("makespan"):
        assert approx(got_t, makespan), f"{what}：makespan 不对。{hint}"
    with part("bubble_ratio"):
        assert approx(got_bubble, bubble_of(f, b, m, makespan)), f"{what}：bubble_ratio 不对。{BUBBLE_RULE}"


def _times(rng: random.Random, p: int, lo: float = 0.5, hi: float = 20.0) -> list[float]:
    return [round(rng.uniform(lo, hi), 3) for _ in range(p)]


PLAUSIBLE = ([4.5, 1.0, 2.25, 3.0], [9.0, 2.5, 4.0, 5.5], 6)  # an ordinary case (no core test's input)


def _plausible(r, what: str) -> None:
    got_t, _ = _pair(r)
    assert approx(got_t, simulated(*PLAUSIBLE)), (
        f"{what}：边界情形只在核心结果也正确时得分，而这里 makespan 不对。{RULE}"
    )


# -- core behaviour (12 of 16) -----------------------------------------------------------------------
@per_submission  # random cases: the student's own with a course secret
def _random_cases() -> list[tuple[list[float], list[float], int, float]]:
    rng = random.Random(seed(16_0301))
    cases = [([30.0, 10.0, 10.0, 20.0], [60.0, 20.0, 20.0, 40.0], 8)]  # the lesson's example: 750
    cases.append(([2.0, 0.0, 5.5, 1.0], [3.0, 0.0, 4.0, 6.5], 7))  # a stage that costs nothing
    for _ in range(4):  # fewer microbatches than stages (PyTorch refuses these; Megatron's warm-up rule)
        p = rng.randint(4, 8)
        cases.append((_times(rng, p, hi=10.0), _times(rng, p), rng.randint(1, p - 1)))
    for _ in range(8):
        p = rng.randint(2, 8)
        cases.append((_times(rng, p, hi=10.0), _times(rng, p), rng.randint(p, 24)))
    return [(f, b, m, simulated(f, b, m)) for f, b, m in cases]


@item("challenge", weight=5, parts=VALUES)
def test_matches_course_simulator(sub):
    """各阶段前向、反向耗时不同：与课程库的 1F1B 事件模拟一致（含 m < P）"""
    cases = _random_cases()
    for (f, b, m, makespan), r in zip(cases, sub.calls(SIM, [c[:3] for c in cases]), strict=True):
        _check(r, f, b, m, makespan, "非均质 stage")


@item("challenge", weight=2, parts=VALUES)
def test_uniform_stages_closed_form(sub):
    """均匀 stage：makespan = (m+P−1)(f+b)，气泡率 (P−1)/(m+P−1)"""
    rng = random.Random(seed(16_0302))
    cases = [
        (
            rng.randint(2, 8),
            rng.randint(1, 20),
            round(rng.uniform(0.5, 5.0), 2),
            round(rng.uniform(0.5, 10.0), 2),
        )
        for _ in range(5)
    ]
    calls = sub.calls(SIM, [([fwd] * p, [bwd] * p, m) for p, m, fwd, bwd in cases])
    for (p, m, fwd, bwd), r in zip(cases, calls, strict=True):
        got_t, got_bubble = _pair(r)
        with part("makespan"):
            assert approx(got_t, (m + p - 1) * (fwd + bwd)), f"均匀 stage：makespan 应为 (m+P−1)(f+b)。{RULE}"
        with part("bubble_ratio"):
            assert approx(got_bubble, (p - 1) / (m + p - 1)), "均匀 stage：bubble_ratio 应为 (P−1)/(m+P−1)"


@per_submission  # random cases: the student's own with a course secret
def _bound_cases() -> list[tuple[list[float], list[float], int, float]]:
    """Cases where the simulator attains the lower bound (checked here, not assumed)."""
    rng = random.Random(seed(16_0303))
    cases = [([3.0, 1.0, 1.0, 1.0], [6.0, 2.0, 2.0, 2.0], 8)]  # 72 = 8·(3+6); the forward formula says 81
    while len(cases) < 6:
        p = rng.randint(3, 7)
        f, b = _times(rng, p, hi=3.0), _times(rng, p, hi=6.0)
        f[0], b[0] = f[0] + round(rng.uniform(4.0, 8.0), 3), b[0] + round(rng.uniform(8.0, 16.0), 3)
        m = rng.randint(p, 16)
        bound = lower_bound(f, b, m)
        if math.isclose(simulated(f, b, m), bound) and not math.isclose(forward_formula(f, b, m), bound):
            cases.append((f, b, m))
    return [(f, b, m, lower_bound(f, b, m)) for f, b, m in cases]


@item("challenge", weight=2, parts=VALUES)
def test_heavy_head_attains_the_lower_bound(sub):
    """最慢的是 stage 0：makespan 恰好取到下界 max_p[Σ_{j<p}(f_j+b_j) + m(f_p+b_p)]"""
    cases = _bound_cases()
    for (f, b, m, bound), r in zip(cases, sub.calls(SIM, [c[:3] for c in cases]), strict=True):
        _check(
            r,
            f,
            b,
            m,
            bound,
            "最慢的是 stage 0",
            "这些情形里 stage 0 除了等第一个梯度回来以外从不空闲，makespan 等于下界 m·(f_0+b_0)；"
            "把前向流水的公式搬到 f+b 上会高估",
        )


def _tail_heavy(rng: random.Random, p: int) -> tuple[list[float], list[float]]:
    """The last stage holds the largest f and the largest b; the others anywhere up to them (ties too)."""
    f_top, b_top = round(rng.uniform(1.0, 10.0), 2), round(rng.uniform(1.0, 20.0), 2)
    f = [rng.choice([f_top, round(rng.uniform(0.0, f_top), 2)]) for _ in range(p - 1)] + [f_top]
    b = [rng.choice([b_top, round(rng.uniform(0.0, b_top), 2)]) for _ in range(p - 1)] + [b_top]
    return f, b


@per_submission  # random cases: the student's own with a course secret
def _tail_cases() -> list[tuple[list[float], list[float], int]]:
    rng = random.Random(seed(16_0304))
    cases = []
    while len(cases) < 4:
        p, m = rng.randint(2, 7), rng.randint(2, 16)
        f, b = _tail_heavy(rng, p)
        assert math.isclose(simulated(f, b, m), forward_formula(f, b, m)), (f, b, m)  # checked, not assumed
        cases.append((f, b, m))
    return cases


@item("challenge", weight=1, parts=VALUES)
def test_heavy_tail_matches_forward_formula(sub):
    """最后一个阶段的前向和反向都最慢：makespan = Σ(f+b) + (m−1)·(f_{P−1}+b_{P−1})"""
    cases = _tail_cases()
    for (f, b, m), r in zip(cases, sub.calls(SIM, cases), strict=True):
        _check(r, f, b, m, forward_formula(f, b, m), "最后一个阶段的前向和反向都最慢")


@per_submission  # random cases: the student's own with a course secret
def _long_cases() -> list[tuple[list[float], list[float], int, float]]:
    rng = random.Random(seed(16_0305))
    cases = []
    for p, m in ((rng.randint(16, 32), rng.randint(64, 256)), (rng.randint(16, 32), rng.randint(64, 256))):
        cases.append((_times(rng, p, hi=10.0), _times(rng, p), m))
    f = [float(rng.randint(0, 6)) for _ in range(24)]  # integer costs, ties, zero-cost stages
    b = [2.0 * x for x in f]
    f[0] = f[-1] = 8.0
    b[0] = b[-1] = 16.0
    cases.append((f, b, 96))
    return [(f, b, m, simulated(f, b, m)) for f, b, m in cases]


@item("challenge", weight=2, parts=VALUES)
def test_long_pipelines_match_course_simulator(sub):
    """较长流水线（最多 32 个阶段、256 个微批次）：与课程库的模拟一致，并在时限内算完"""
    cases = _long_cases()
    for (f, b, m, makespan), r in zip(cases, sub.calls(SIM, [c[:3] for c in cases]), strict=True):
        _check(r, f, b, m, makespan, "较长流水线")


# -- edge cases and validation (4 of 16) ----------------------------------------------------------------
@item("challenge", weight=1, edge=True)
def test_single_microbatch_and_single_stage(sub):
    """m = 1：makespan = Σf + Σb；P = 1：makespan = m(f+b)，没有气泡"""
    rng = random.Random(seed(16_0306))
    cases = []
    for _ in range(2):
        p = rng.randint(2, 6)
        cases.append((_times(rng, p), _times(rng, p), 1))
    for (f, b, _), r in zip(cases, sub.calls(SIM, cases), strict=True):
        p = len(f)
        got_t, got_bubble = _pair(r)
        assert approx(got_t, math.fsum(f) + math.fsum(b)), (
            "只有 1 个微批次时，makespan 应为所有前向与反向耗时之和"
        )
        assert approx(got_bubble, 1 - 1 / p), "只有 1 个微批次时，bubble_ratio 应为 1 − 1/P"
    cases = [
        (round(rng.uniform(0.5, 9.0), 3), round(rng.uniform(0.5, 9.0), 3), rng.randint(1, 12))
        for _ in range(2)
    ]
    for (fwd, bwd, m), r in zip(cases, sub.calls(SIM, [([f], [b], m) for f, b, m in cases]), strict=True):
        got_t, got_bubble = _pair(r)
        assert approx(got_t, m * (fwd + bwd)), "只有 1 个阶段 时，makespan = m·(f+b)"
        assert approx(got_bubble, 0.0), "只有 1 个阶段 时没有空闲，bubble_ratio 应为 0"
    _plausible(sub.call(SIM, *PLAUSIBLE), "普通情形")


@item("challenge", weight=0.5, edge=True)
def test_all_zero_times(sub):
    """所有耗时为 0：返回 (0.0, 0.0)，不能除以 0"""
    for r in sub.calls(SIM, (([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], 4), ([0.0], [0.0], 1), ([0, 0], [0, 0], 3))):
        got_t, got_bubble = _pair(r)
        assert approx(got_t, 0.0) and approx(got_bubble, 0.0), (
            "所有耗时都为 0 时应返回 (0.0, 0.0)：makespan 为 0 时不要再用它做除数"
        )
    _plausible(sub.call(SIM, *PLAUSIBLE), "耗时不全为 0 时")


@item("challenge", weight=1, edge=True)
def test_accepts_sequences_leaves_them_unchanged_returns_floats(sub):
    """接受 list、tuple、numpy 数组（含整数元素），不修改输入，返回 float"""
    f, b, m = PLAUSIBLE
    ints_f, ints_b = [3, 1, 2, 2], [5, 2, 4, 3]
    cases = (
        ((Tuple(f), Tuple(b)), (f, b), "tuple"),
        ((Array(f, "float64"), Array(b, "float64")), (f, b), "float64 的 numpy 数组"),
        ((Array(ints_f, "int64"), Array(ints_b, "int64")), (ints_f, ints_b), "int64 的 numpy 数组"),
        ((ints_f, ints_b), (ints_f, ints_b), "元素为 int 的 list"),
    )
    for (_, values, kind), r in zip(cases, sub.calls(SIM, [(*args, m) for args, _, _ in cases]), strict=True):
        assert r.ok, f"输入是{kind}时：" + r.describe_failure()
        fv, bv = [float(x) for x in values[0]], [float(x) for x in values[1]]
        got_t, _ = _pair(r)
        assert approx(got_t, simulated(fv, bv, m)), f"输入是{kind}时 makespan 不对"
        kids = r.types[1] if isinstance(r.types, list) and len(r.types) == 2 else []
        assert len(kids) == 2 and all(is_float(k) for k in kids), (
            "makespan 与 bubble_ratio 应是 Python float（numpy 浮点数也接受）；输入全是整数时也要转换成 float"
        )
        after = [list(a) for a in r.args_after[:2]] if r.args_after else None
        assert after == [list(values[0]), list(values[1])], (
            f"调用后传入的 {kind} 被修改了（排序、改写或增删元素）：请在副本上计算"
        )


@item("challenge", weight=1.5, edge=True)
def test_rejects_invalid_input(sub):
    """非法输入抛出 ValueError：空序列、二维、长度不同、负数/NaN/无穷、m 不是 ≥ 1 的整数"""
    f, b = [1.0, 2.0, 3.0], [2.0, 4.0, 6.0]
    bad = [
        (([], [], 2), "空序列"),
        (([[1.0, 2.0]], [[1.0, 2.0]], 2), "二维序列"),
        (([1.0, 2.0], [1.0, 2.0, 3.0], 2), "前向与反向的长度不同"),
        (([1.0, -2.0, 3.0], b, 2), "负的前向耗时"),
        ((f, [2.0, float("nan"), 6.0], 2), "NaN"),
        ((f, [2.0, 4.0, float("inf")], 2), "无穷大"),
        ((f, b, 0), "m = 0"),
        ((f, b, 2.5), "m = 2.5"),
        ((f, b, True), "m = True"),
    ]
    for (_, what), r in zip(bad, sub.calls(SIM, [args for args, _ in bad]), strict=True):
        assert r.raised("ValueError"), f"{what}应当抛出 ValueError"
    _plausible(sub.call(SIM, *PLAUSIBLE), "合法输入")
