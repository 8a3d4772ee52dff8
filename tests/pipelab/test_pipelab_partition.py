"""Partitioners: the exact min-max partition is checked against enumeration."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelab.partition import (
    bottleneck,
    brute_force_partition,
    min_max_partition,
    spread_balance_partition,
    stage_loads,
    uniform_partition,
    water_fill,
)
from tests.strategies import partition_case


def _loads_kw(kw):
    return {k: v for k, v in kw.items() if k in ("head_cost", "tail_cost", "speed")}


def _mem_ok(costs, counts, kw):
    if "mem" not in kw:
        return True
    b = 0
    for p, c in enumerate(counts):
        if sum(kw["mem"][b : b + c]) > kw["mem_cap"][p] + 1e-9:
            return False
        b += c
    return True


@settings(max_examples=250, deadline=None)
@given(partition_case())
def test_min_max_is_exact(case):
    costs, P, kw = case
    try:
        oracle = brute_force_partition(costs, P, **kw)
    except ValueError:
        with pytest.raises(ValueError):
            min_max_partition(costs, P, **kw)
        return
    got = min_max_partition(costs, P, **kw)
    assert len(got) == P and sum(got) == len(costs) and min(got) >= 1
    assert _mem_ok(costs, got, kw)
    assert bottleneck(costs, got, **_loads_kw(kw)) == pytest.approx(
        bottleneck(costs, oracle, **_loads_kw(kw)), rel=1e-9, abs=1e-12
    )


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 12),
    st.integers(1, 12),
    st.sampled_from([0.5, 1.0, 2.0]),
    st.sampled_from([0.0, 1.0, 2.5, 7.0]),
    st.sampled_from([0.0, 1.0, 3.0, 9.0]),
)
def test_water_fill_optimal_for_uniform_cost(L, P, c, h, t):
    if P > L:
        with pytest.raises(ValueError):
            water_fill(L, c, h, t, P)
        return
    wf = water_fill(L, c, h, t, P)
    assert sum(wf) == L and min(wf) >= 1
    best = brute_force_partition([c] * L, P, head_cost=h, tail_cost=t)
    lw = stage_loads([c] * L, wf, head_cost=h, tail_cost=t)
    lb = stage_loads([c] * L, best, head_cost=h, tail_cost=t)
    assert max(lw) == pytest.approx(max(lb))
    var = lambda xs: sum((x - sum(xs) / len(xs)) ** 2 for x in xs)  # noqa: E731
    assert var(lw) == pytest.approx(var(lb), abs=1e-9)  # water-filling also minimises the variance
    mm = min_max_partition([c] * L, P, head_cost=h, tail_cost=t)
    assert max(stage_loads([c] * L, mm, head_cost=h, tail_cost=t)) == pytest.approx(max(lb))


def test_water_fill_fails_for_non_uniform_cost():
    costs = [9, 1, 1, 1, 1, 1]
    assert bottleneck(costs, [3, 3]) == 11
    assert min_max_partition(costs, 2) == [1, 5]
    assert bottleneck(costs, min_max_partition(costs, 2)) == 9


def test_single_stage_gets_head_and_tail():
    assert water_fill(5, 1.0, 2.0, 3.0, 1) == [5]
    assert stage_loads([1.0] * 5, [5], head_cost=2.0, tail_cost=3.0) == [10.0]
    assert min_max_partition([1.0] * 5, 1, head_cost=2.0, tail_cost=3.0) == [5]


def test_speed_and_memory():
    # a device twice as fast takes twice the work
    assert min_max_partition([1.0] * 9, 2, speed=[2.0, 1.0]) == [6, 3]
    # memory caps force a worse time split
    counts = min_max_partition([1.0] * 6, 2, mem=[1.0] * 6, mem_cap=[2.0, 10.0])
    assert counts == [2, 4]
    with pytest.raises(ValueError, match="memory"):
        min_max_partition([1.0] * 6, 2, mem=[1.0] * 6, mem_cap=[2.0, 2.0])


def test_max_minus_min_balancer_is_never_better():
    import random

    rng = random.Random(5)
    for _ in range(40):
        L = rng.randint(4, 40)
        P = rng.randint(2, min(8, L))
        costs = [rng.lognormvariate(0, 1) for _ in range(L)]
        exact = bottleneck(costs, min_max_partition(costs, P))
        assert exact <= bottleneck(costs, spread_balance_partition(costs, P)) + 1e-9
        assert exact <= bottleneck(costs, uniform_partition(L, P)) + 1e-9


@pytest.mark.parametrize(
    "args,kw,exc",
    [
        (([1, 2], 3), {}, ValueError),
        (([1, -2], 1), {}, ValueError),
        (([1, 2], 0), {}, ValueError),
        (([1, 2], 2), {"speed": [1.0]}, ValueError),
        (([1, 2], 2), {"speed": [1.0, 0.0]}, ValueError),
        (([1, 2], 2), {"mem": [1, 1]}, ValueError),
        (([1, 2], 2), {"head_cost": -1}, ValueError),
        (("ab", 2), {}, TypeError),
    ],
)
def test_rejects_bad_input(args, kw, exc):
    with pytest.raises(exc):
        min_max_partition(*args, **kw)


@pytest.mark.parametrize("L,P", [(40, 5), (1200, 4)])
def test_heterogeneous_engine_agrees_with_greedy(L, P):
    # speed=[1]*P takes the reachability path (candidate search for small, bisection for large L)
    import random

    rng = random.Random(L)
    costs = [rng.lognormvariate(0, 1) for _ in range(L)]
    a = bottleneck(costs, min_max_partition(costs, P, head_cost=2.0))
    b = bottleneck(costs, min_max_partition(costs, P, head_cost=2.0, speed=[1.0] * P), head_cost=2.0)
    assert bottleneck(costs, min_max_partition(costs, P, head_cost=2.0), head_cost=2.0) == pytest.approx(
        b, rel=1e-9
    )
    assert a <= bottleneck(costs, min_max_partition(costs, P, head_cost=2.0), head_cost=2.0)


def _var(xs):
    mu = sum(xs) / len(xs)
    return sum((x - mu) ** 2 for x in xs) / len(xs)


@settings(max_examples=250, deadline=None)
@given(partition_case(hetero=False), st.booleans())
def test_ties_are_broken_by_variance(case, with_mem):
    """Among the min-max optima the library returns one of least variance (lesson 16's contract)."""
    costs, P, kw = case
    if with_mem:
        kw = dict(kw, mem=[1.0 + (i % 3) for i in range(len(costs))], mem_cap=[7.0] * P)
    try:
        oracle = brute_force_partition(costs, P, **kw)  # least variance among the optima
    except ValueError:
        return
    got = min_max_partition(costs, P, **kw)
    assert _mem_ok(costs, got, kw)
    lk = _loads_kw(kw)
    assert bottleneck(costs, got, **lk) == pytest.approx(bottleneck(costs, oracle, **lk), rel=1e-9, abs=1e-12)
    assert _var(stage_loads(costs, got, **lk)) == pytest.approx(
        _var(stage_loads(costs, oracle, **lk)), abs=1e-9
    )


def test_lesson03_case_ties():
    """Lesson 03's case: 70 splits reach the bottleneck 4.0; the library returns one of least variance."""
    costs = [1.0] * 24
    costs[15] = costs[16] = 2.2
    got = min_max_partition(costs, 8)
    assert got == [3, 3, 4, 4, 2, 2, 3, 3]
    assert _var(stage_loads(costs, got)) == pytest.approx(0.17)
    first = min_max_partition(costs, 8, tie_break=None)  # the search's first optimum: no variance rule
    assert bottleneck(costs, first) == pytest.approx(4.0) and _var(stage_loads(costs, first)) > 0.17


def test_tie_break_budget_warns_and_falls_back(monkeypatch):
    import pipelab.partition as pt

    costs = [1.0, 3.0, 1.0, 2.0, 2.0, 1.0, 1.0, 3.0]
    monkeypatch.setattr(pt, "TIE_BREAK_BUDGET", 1)
    with pytest.warns(RuntimeWarning, match="tie-break"):
        got = pt.min_max_partition(costs, 3)
    assert got == pt.min_max_partition(costs, 3, tie_break=None)
    with pytest.raises(ValueError, match="tie_break"):
        pt.min_max_partition(costs, 3, tie_break="spread")
