"""Forward-flow model: closed forms, asymptote, hop latency and blocking sends."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelab import bubble_limit, forward_closed_form, forward_flow, uniform_bubble
from tests.strategies import op_time


@settings(max_examples=60, deadline=None)
@given(st.lists(op_time, min_size=1, max_size=6), st.integers(1, 12), st.sampled_from([0.0, 0.25, 1.0]))
def test_forward_flow_matches_closed_form(t, m, c):
    tl = forward_flow(t, m, hop_latency=c)
    assert math.isclose(tl.makespan, sum(t) + (len(t) - 1) * c + (m - 1) * max(t))
    assert math.isclose(tl.makespan, forward_closed_form(t, m, hop_latency=c))
    assert len(tl.ops) == len(t) * m


def test_anchor_numbers():
    t = [3, 1, 1, 2]
    assert forward_flow(t, 1).bubble_ratio == pytest.approx(1 - 1 / 4)
    assert forward_flow(t, 256).bubble_ratio == pytest.approx(0.41969, abs=5e-6)
    assert bubble_limit(t) == pytest.approx(5 / 12)
    # T = Σt + (m−1)·max t
    assert forward_flow([30.0, 10.0], 8).makespan == 40.0 + 7 * 30.0


@pytest.mark.parametrize("P,m", [(1, 1), (2, 1), (4, 4), (4, 16), (8, 3)])
def test_uniform_bubble(P, m):
    assert forward_flow([1.0] * P, m).bubble_ratio == pytest.approx((P - 1) / (m + P - 1))
    assert uniform_bubble(P, m) == pytest.approx((P - 1) / (m + P - 1))


def test_bubble_tends_to_limit():
    t = [2.0, 1.0, 4.0, 1.0, 1.0]
    ratios = [forward_flow(t, m).bubble_ratio for m in (1, 4, 16, 64, 512)]
    assert all(a >= b for a, b in zip(ratios, ratios[1:], strict=False))
    assert ratios[-1] == pytest.approx(bubble_limit(t), abs=0.01)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(op_time, min_size=1, max_size=6),
    st.integers(1, 10),
    st.integers(1, 3),
    st.sampled_from([0.0, 0.5]),
)
def test_finite_buffer_never_beats_unbounded(t, m, B, c):
    free = forward_flow(t, m, hop_latency=c)
    tight = forward_flow(t, m, hop_latency=c, buffer_size=B)
    assert tight.makespan >= free.makespan - 1e-12
    # every op starts after its input exists and after the stage's previous microbatch was accepted
    for o in tight.ops:
        if o.stage:
            assert o.start >= tight.find(o.stage - 1, "F", o.mb).end + c - 1e-12
    # blocking rule: stage p cannot start k+1 before stage p+1 started k+1-B
    for p in range(len(t) - 1):
        for k in range(B, m - 1):
            nxt = tight.find(p, "F", k + 1)
            assert nxt.start >= tight.find(p + 1, "F", k - B).start - 1e-12


def test_blocking_is_recorded_as_idle():
    # slow middle stage: stage 0 must wait for a free slot (backpressure)
    tl = forward_flow([1.0, 3.0, 1.0], 4, buffer_size=1)
    assert tl.blocked and all(r == 0 for r, _, _ in tl.blocked)
    assert tl.blocked_per_stage[0] == pytest.approx(3.0)
    assert tl.makespan == forward_flow([1.0, 3.0, 1.0], 4).makespan


@pytest.mark.parametrize(
    "bad,exc",
    [
        (dict(stage_times=[1, -1], m=2), ValueError),
        (dict(stage_times=[], m=2), ValueError),
        (dict(stage_times=[1, float("nan")], m=2), ValueError),
        (dict(stage_times=[1, 2], m=0), ValueError),
        (dict(stage_times=[1, 2], m=2.5), TypeError),
        (dict(stage_times="12", m=2), TypeError),
        (dict(stage_times=[1, 2], m=2, buffer_size=0), ValueError),
        (dict(stage_times=[1, 2], m=2, hop_latency=-1), ValueError),
    ],
)
def test_rejects_bad_input(bad, exc):
    with pytest.raises(exc):
        forward_flow(**bad)
