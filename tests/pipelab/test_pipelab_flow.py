"""Forward-flow model: closed forms, asymptote, hop latency and blocking sends."""

import math
import random

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


def _rendezvous(t, m):
    """No buffer, written independently of pipelab: stage p posts its recv of microbatch k once its own
    send of k−1 has completed; the upstream send of k completes when that recv is posted."""
    P = len(t)
    start = [[0.0] * m for _ in range(P)]
    sent = [[0.0] * m for _ in range(P)]  # when stage p's send of microbatch k completed
    for k in range(m):
        for p in range(P):
            free = sent[p][k - 1] if k else 0.0
            if p:
                sent[p - 1][k] = max(start[p - 1][k] + t[p - 1], free)
            start[p][k] = max(free, sent[p - 1][k] if p else 0.0)
            if p == P - 1:
                sent[p][k] = start[p][k] + t[p]
    blocked = [sum(sent[p][k] - start[p][k] - t[p] for k in range(m)) for p in range(P)]
    return max(start[-1][k] + t[-1] for k in range(m)), blocked


def test_no_buffer_is_a_rendezvous():
    """buffer_size=0: issue 21's numbers for the mirrored dumbbell, none for the lesson's own, and an
    independent rendezvous simulator on random cases."""
    tl = forward_flow([20.0, 10.0, 10.0, 30.0], 8, buffer_size=0)
    assert (tl.makespan, tl.blocked_per_stage) == (280.0, [30.0, 90.0, 130.0, 0.0])
    assert forward_flow([30.0, 10.0, 10.0, 20.0], 8, buffer_size=0).blocked_per_stage == [0.0] * 4
    rng = random.Random(2104)
    for _ in range(500):
        t = [float(rng.randint(0, 9)) for _ in range(rng.randint(1, 6))]
        m = rng.randint(1, 10)
        tl = forward_flow(t, m, buffer_size=0)
        makespan, blocked = _rendezvous(t, m)
        assert tl.makespan == pytest.approx(makespan)
        assert tl.blocked_per_stage == pytest.approx(blocked)
        assert tl.makespan >= forward_flow(t, m, buffer_size=1).makespan - 1e-12  # a rendezvous only delays
        one = forward_flow(t, m, buffer_size=1).blocked_per_stage
        assert all(x >= y - 1e-9 for x, y in zip(tl.blocked_per_stage, one, strict=True))


@pytest.mark.parametrize(
    "bad,exc",
    [
        (dict(stage_times=[1, -1], m=2), ValueError),
        (dict(stage_times=[], m=2), ValueError),
        (dict(stage_times=[1, float("nan")], m=2), ValueError),
        (dict(stage_times=[1, 2], m=0), ValueError),
        (dict(stage_times=[1, 2], m=2.5), TypeError),
        (dict(stage_times="12", m=2), TypeError),
        (dict(stage_times=[1, 2], m=2, buffer_size=-1), ValueError),
        (dict(stage_times=[1, 2], m=2, hop_latency=-1), ValueError),
    ],
)
def test_rejects_bad_input(bad, exc):
    with pytest.raises(exc):
        forward_flow(**bad)
