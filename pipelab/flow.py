"""Forward-only flow of identical microbatches through a chain of stages (lesson 16's model)."""

from __future__ import annotations

from . import _validate as V
from .timeline import Op, Timeline

__all__ = ["forward_flow", "forward_closed_form", "bubble_limit", "uniform_bubble"]


def forward_flow(stage_times, m, *, hop_latency=0.0, buffer_size=None) -> Timeline:
    """Simulate ``m`` identical microbatches flowing forward through stages ``0..P-1``.

    Let ``t[p]`` be stage ``p``'s time per microbatch, ``c = hop_latency`` and ``S[p][k]``/``E[p][k]``
    the start/end of microbatch ``k`` on stage ``p`` (``E = S + t[p]``).

    *Unbounded buffers* (``buffer_size=None``): sends are asynchronous, so
    ``S[p][k] = max(E[p][k-1], E[p-1][k] + c)``.

    *Finite buffers with blocking sends* (``buffer_size=B >= 1``): between stage ``p`` and ``p+1``
    there are ``B`` receive slots.  A finished output occupies a slot from the moment it is accepted
    until stage ``p+1`` *starts* computing on it.  Stage ``p``'s send of microbatch ``k`` is accepted at
    ``R[p][k] = max(E[p][k], S[p+1][k-B])`` (the slot of microbatch ``k-B`` frees when ``p+1`` starts
    it), and stage ``p`` is blocked — it cannot start microbatch ``k+1`` — until then:
    ``S[p][k] = max(R[p][k-1], R[p-1][k] + c)``.  The last stage never blocks.  The blocked
    intervals ``[E, R)`` are recorded in ``Timeline.blocked`` and count as idle time.

    *No buffer, a rendezvous* (``buffer_size=0``): stage ``p``'s send of microbatch ``k`` completes only
    when stage ``p+1`` posts the matching receive, which it does once it is free again, i.e. when its own
    send of microbatch ``k-1`` has completed: ``R[p][k] = max(E[p][k], R[p+1][k-1])``.

    The closed form for unbounded buffers is :func:`forward_closed_form`; blocking can only delay
    (``buffer_size=1`` never beats unbounded).
    """
    t = V.times(stage_times)
    m = V.count(m, "m (number of microbatches)")
    c = V.nonneg(hop_latency, "hop_latency")
    B = 0 if buffer_size == 0 and not isinstance(buffer_size, bool) else V.buffer(buffer_size)
    P = len(t)
    S = [[0.0] * m for _ in range(P)]
    R = [[0.0] * m for _ in range(P)]  # time the output of (p, k) is accepted downstream
    ops: list[Op] = []
    blocked: list[tuple[int, float, float]] = []
    if B is None:
        for p in range(P):
            tp = t[p]
            prev_free = 0.0
            Sp, Rp = S[p], R[p]
            up = R[p - 1] if p else None
            for k in range(m):
                s = prev_free
                if up is not None and up[k] + c > s:
                    s = up[k] + c
                Sp[k] = s
                prev_free = Rp[k] = s + tp
    else:
        # S[p][k] depends on R[p-1][k] and R[p][k-1]; R[p][k] depends on S[p+1][k-B] (k-B < k), so
        # sweeping microbatch-major (k outer, p inner) respects every dependency.
        for k in range(m):
            for p in range(P):
                s = R[p][k - 1] if k else 0.0
                if p and R[p - 1][k] + c > s:
                    s = R[p - 1][k] + c
                S[p][k] = s
                e = s + t[p]
                r = e
                if p + 1 < P and B == 0 and k and R[p + 1][k - 1] > r:
                    r = R[p + 1][k - 1]  # rendezvous: the receiver posts its recv once its own send is done
                elif p + 1 < P and B and k - B >= 0 and S[p + 1][k - B] > r:
                    r = S[p + 1][k - B]
                R[p][k] = r
    for p in range(P):
        for k in range(m):
            s = S[p][k]
            e = s + t[p]
            ops.append(Op(p, "F", k, s, e))
            if R[p][k] > e:
                blocked.append((p, e, R[p][k]))
    ops.sort(key=lambda o: (o.start, o.stage))
    return Timeline(
        ops=ops,
        num_stages=P,
        num_microbatches=m,
        blocked=blocked,
        meta={"model": "forward_flow", "hop_latency": c, "buffer_size": B},
    )


def forward_closed_form(stage_times, m, *, hop_latency=0.0) -> float:
    """Makespan of :func:`forward_flow` with unbounded buffers: ``Σt + (P−1)·c + (m−1)·max t``."""
    t = V.times(stage_times)
    m = V.count(m, "m (number of microbatches)")
    c = V.nonneg(hop_latency, "hop_latency")
    return sum(t) + (len(t) - 1) * c + (m - 1) * max(t)


def bubble_limit(stage_times) -> float:
    """Bubble ratio of the forward flow as ``m → ∞``: ``1 − mean(t)/max(t)``."""
    t = V.times(stage_times)
    if max(t) == 0:
        return 0.0
    return 1.0 - (sum(t) / len(t)) / max(t)


def uniform_bubble(num_stages, m) -> float:
    """Bubble ratio of GPipe / 1F1B / forward flow with uniform stages: ``(P−1)/(m+P−1)``."""
    P = V.count(num_stages, "num_stages")
    m = V.count(m, "m (number of microbatches)")
    return (P - 1) / (m + P - 1)
