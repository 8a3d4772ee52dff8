"""Microbatches of different lengths, with backward: a static 1F1B order against a greedy dynamic policy,
and the uniform-stage throughput–latency model with its Pareto front (lesson 03's demonstrations).

Model (lesson 03, 练习 3): microbatch ``k`` takes ``fwd[k][p]`` / ``bwd[k][p]`` on stage ``p``;
``F(k,p)`` needs ``F(k,p−1)``; ``B(k,P−1)`` needs ``F(k,P−1)`` and ``B(k,p)`` needs ``B(k,p+1)``; a stage
runs one op at a time, without preemption; no transfer time, unbounded buffers.

* :func:`static_1f1b` — each stage follows PyTorch's 1F1B order: ``min(P−1−p, m)`` warm-up forwards,
  then one forward and one backward in turn, then the remaining backwards; an op starts when the
  stage is free and its input is ready.
* :func:`backward_first` — at every step, among the stages' next backward and next forward (the
  forward only while the stage holds fewer than ``P−p+extra_in_flight`` microbatches in flight), run
  the op that can start earliest; ties go to backwards, then to the lower stage.  Each op also costs
  ``overhead`` (decision time, counted as idle).

Both return a :class:`~pipelab.timeline.Timeline` (rows = stages) and the per-stage idle time
``makespan − compute`` in ``meta["idle"]``.
"""

from __future__ import annotations

import math
import numbers

from .timeline import Op, Timeline

__all__ = ["static_1f1b", "backward_first", "throughput_latency", "pareto_front"]


def _costs(fwd, bwd) -> tuple[list[list[float]], list[list[float]]]:
    F = [[float(x) for x in row] for row in fwd]
    B = [[float(x) for x in row] for row in bwd]
    if not F or not F[0] or len({len(r) for r in F + B}) != 1 or len(F) != len(B):
        raise ValueError("fwd and bwd must be non-empty m×P tables of the same shape")
    if not all(0 < x < math.inf for row in F + B for x in row):
        raise ValueError("every op time must be positive and finite")
    return F, B


def _finish(ops: list[Op], F, B) -> Timeline:
    m, P = len(F), len(F[0])
    ops.sort(key=lambda o: (o.start, o.stage))
    tl = Timeline(ops=ops, num_stages=P, num_microbatches=m)
    work = [sum(F[k][p] + B[k][p] for k in range(m)) for p in range(P)]
    tl.meta["idle"] = [tl.makespan - w for w in work]
    return tl


def _ready(done: dict, kind: str, k: int, p: int, P: int) -> float | None:
    """When the input of ``kind`` for microbatch ``k`` on stage ``p`` is ready (None: not yet known)."""
    if kind == "F":
        return 0.0 if p == 0 else done.get(("F", k, p - 1))
    return done.get(("F", k, p)) if p == P - 1 else done.get(("B", k, p + 1))


def static_1f1b(fwd, bwd) -> Timeline:
    """Every stage runs its 1F1B instruction list in order (see the module docstring)."""
    F, B = _costs(fwd, bwd)
    m, P = len(F), len(F[0])
    lists = []
    for p in range(P):
        warm = min(P - 1 - p, m)
        seq = [("F", k) for k in range(warm)]
        for i in range(m - warm):
            seq += [("F", warm + i), ("B", i)]
        lists.append(seq + [("B", k) for k in range(m - warm, m)])
    nxt, free, done, ops = [0] * P, [0.0] * P, {}, []
    progress = True
    while progress:
        progress = False
        for p in range(P):
            while nxt[p] < len(lists[p]):
                kind, k = lists[p][nxt[p]]
                ready = _ready(done, kind, k, p, P)
                if ready is None:
                    break
                start = max(free[p], ready)
                free[p] = done[(kind, k, p)] = start + (F if kind == "F" else B)[k][p]
                ops.append(Op(p, kind, k, start, free[p]))
                nxt[p] += 1
                progress = True
    return _finish(ops, F, B)


def backward_first(fwd, bwd, extra_in_flight: int = 0, overhead: float = 0.0) -> Timeline:
    """The greedy dynamic policy of the module docstring."""
    F, B = _costs(fwd, bwd)
    if isinstance(extra_in_flight, bool) or not isinstance(extra_in_flight, numbers.Integral):
        raise ValueError("extra_in_flight must be an integer >= 0")
    if extra_in_flight < 0 or not 0 <= float(overhead) < math.inf:
        raise ValueError("extra_in_flight must be >= 0 and overhead finite and >= 0")
    m, P = len(F), len(F[0])
    n_fwd, n_bwd, free, done, ops = [0] * P, [0] * P, [0.0] * P, {}, []
    for _ in range(2 * m * P):
        choices = []
        for p in range(P):
            if n_bwd[p] < n_fwd[p] and (r := _ready(done, "B", n_bwd[p], p, P)) is not None:
                choices.append((max(free[p], r), 0, p, "B", n_bwd[p]))
            cap = P - p + extra_in_flight
            if (
                n_fwd[p] < m
                and n_fwd[p] - n_bwd[p] < cap
                and (r := _ready(done, "F", n_fwd[p], p, P)) is not None
            ):
                choices.append((max(free[p], r), 1, p, "F", n_fwd[p]))
        start, _, p, kind, k = min(choices)
        free[p] = done[(kind, k, p)] = start + float(overhead) + (F if kind == "F" else B)[k][p]
        ops.append(Op(p, kind, k, start, free[p]))
        if kind == "F":
            n_fwd[p] += 1
        else:
            n_bwd[p] += 1
    return _finish(ops, F, B)


def throughput_latency(
    total_work, P, m, *, overhead=0.0, weight_mem=0.0, act_mem=0.0, schedule="1f1b", microbatch_size=1
) -> tuple[float, float, float]:
    """Uniform stages: ``t = W/P + o``, latency ``(m+P−1)·t``, throughput ``m·b/latency`` and memory per
    device ``(M_w + k·M_a)/P`` with ``k = min(m, P)`` (1F1B) or ``m`` (GPipe).
    Returns ``(throughput, latency, memory)``."""
    if schedule not in ("1f1b", "gpipe"):
        raise ValueError("schedule must be '1f1b' or 'gpipe'")
    latency = (m + P - 1) * (total_work / P + overhead)
    k = min(m, P) if schedule == "1f1b" else m
    return m * microbatch_size / latency, latency, (weight_mem + k * act_mem) / P


def pareto_front(points):
    """The points ``(..., throughput, latency)`` no other point beats in both (ties are kept), sorted by
    latency."""
    pts = list(points)
    front = [
        x
        for x in pts
        if not any(y[-2] >= x[-2] and y[-1] <= x[-1] and (y[-2] > x[-2] or y[-1] < x[-1]) for y in pts)
    ]
    return sorted(front, key=lambda x: x[-1])
