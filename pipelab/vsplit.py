"""Partitions for the V placement of :mod:`pipelab.vshape`, and the placements compared on the
equal-layer model of lesson 16 (:func:`placement_table`).

With ``P`` ranks and ``2P`` stages, rank ``r`` holds stages ``r`` and ``2P−1−r``: rank 0 carries the
head (stage 0) and the tail (stage 2P−1).  For equal-cost layers only the layers per *rank* decide the
slowest rank (:func:`v_rank_layers`); how a rank's layers are shared between its two stages changes
the flow through the V, so :func:`best_v_split` simulates every split (:func:`v_splits`): all splits at
once, as numpy max-plus sweeps over the schedule's fixed dependency order (:func:`batch_makespans`), then
the fastest again with :func:`pipelab.vshape.simulate_placed` for its full timeline and memory.
"""

from __future__ import annotations

import numpy as np

from . import _validate as V
from .vshape import Overlap, PlacedSchedule, dualpipev, simulate_placed, zbv

__all__ = ["v_rank_layers", "v_splits", "v_chunk_times", "batch_makespans", "best_v_split", "placement_table"]


def v_rank_layers(total_layers, layer_cost, head_cost, tail_cost, num_ranks, *, min_layers_per_stage=1):
    """Layers per *rank* for a V placement with equal-cost layers: rank 0 carries both ``head_cost``
    (stage 0) and ``tail_cost`` (stage 2P−1); every rank holds two stages of at least
    ``min_layers_per_stage`` layers each.  Water-filling over the ranks (each next layer to the least
    loaded rank, ties to the lowest index), which minimises the slowest rank's time and then the
    variance for equal-cost layers, as :func:`pipelab.partition.water_fill` does for one stage per rank.
    """
    L = V.count(total_layers, "total_layers")
    P = V.count(num_ranks, "num_ranks")
    lo = V.count(min_layers_per_stage, "min_layers_per_stage", minimum=0)
    c = V.nonneg(layer_cost, "layer_cost")
    if c <= 0:
        raise ValueError("layer_cost must be positive")
    h, t = V.nonneg(head_cost, "head_cost"), V.nonneg(tail_cost, "tail_cost")
    if L < 2 * P * lo:
        raise ValueError(f"{L} layers cannot give each of {2 * P} stages {lo} layers")
    counts = [2 * lo] * P
    loads = [c * n + (h + t if r == 0 else 0.0) for r, n in enumerate(counts)]
    for _ in range(L - 2 * P * lo):
        r = min(range(P), key=lambda i: (loads[i], i))
        counts[r] += 1
        loads[r] += c
    return counts


def v_splits(rank_layers, *, min_layers_per_stage=1):
    """Every split of each rank's layers over its two V stages: yields per-stage layer counts
    ``n[0..2P−1]`` with ``n[r] + n[2P−1−r] = rank_layers[r]``."""
    import itertools

    P = len(rank_layers)
    lo = V.count(min_layers_per_stage, "min_layers_per_stage", minimum=0)
    ranges = [range(lo, int(n) - lo + 1) for n in rank_layers]
    for first in itertools.product(*ranges):
        n = [0] * (2 * P)
        for r, a in enumerate(first):
            n[r] = a
            n[2 * P - 1 - r] = int(rank_layers[r]) - a
        yield n


def v_chunk_times(stage_layers, layer_cost, head_cost, tail_cost) -> list[float]:
    """Forward time of every stage: ``layer_cost·n[s]``, plus ``head_cost`` on stage 0 and
    ``tail_cost`` on the last stage."""
    c = V.nonneg(layer_cost, "layer_cost")
    n = [V.count(x, "stage_layers[i]", minimum=0) for x in stage_layers]
    out = [c * x for x in n]
    out[0] += V.nonneg(head_cost, "head_cost")
    out[-1] += V.nonneg(tail_cost, "tail_cost")
    return out


def _plan(schedule: PlacedSchedule) -> list[tuple[int, object]]:
    """``(rank, item)`` of every op in an order where each op follows its inputs and the op before it on
    its rank: the order :func:`pipelab.vshape.simulate_placed` runs them in (it does not depend on the
    costs).  ``RuntimeError`` if the schedule waits on itself."""
    S = schedule.num_stages
    done: set[tuple[int, str, int]] = set()

    def ready(a) -> bool:
        s, kind, k = a
        if kind == "F":
            return s == 0 or (s - 1, "F", k) in done
        if kind == "W":
            return (s, "B", k) in done
        return (s, "F", k) in done and (s == S - 1 or (s + 1, "B", k) in done)

    plan, ptr = [], [0] * schedule.num_ranks
    progress = True
    while progress:
        progress = False
        for r, order in enumerate(schedule.orders):
            while ptr[r] < len(order):
                item = order[ptr[r]]
                parts = (item.forward, item.backward) if isinstance(item, Overlap) else (item,)
                if not all(ready(a) for a in parts):
                    break
                for s, kind, k in parts:
                    done.add((s, "B" if kind == "I" else kind, k))
                plan.append((r, item))
                ptr[r] += 1
                progress = True
    if any(p < len(o) for p, o in zip(ptr, schedule.orders, strict=True)):
        raise RuntimeError(f"deadlock: schedule {schedule.name} waits on itself")
    return plan


def batch_makespans(schedule: PlacedSchedule, forward, backward, weight, *, hop_latency=0.0, overlap=0.0):
    """Makespans of ``schedule`` for many cost vectors at once: ``forward``, ``backward``, ``weight`` are
    ``(N, S)`` arrays (one row per case, one column per stage); returns the ``N`` makespans that
    :func:`pipelab.vshape.simulate_placed` gives row by row (the same float operations in the same
    order, so equal, not just close; ``tests/pipelab/test_pipelab_vshape.py``).  Memory is not tracked."""
    S, P = schedule.num_stages, schedule.num_ranks
    f = np.atleast_2d(np.asarray(forward, dtype=float))
    b = np.atleast_2d(np.asarray(backward, dtype=float))
    w = np.atleast_2d(np.asarray(weight, dtype=float))
    if not (f.shape == b.shape == w.shape) or f.shape[1] != S:
        raise ValueError(f"forward, backward and weight must all have shape (N, {S})")
    if min(f.min(), b.min(), w.min()) < 0:
        raise ValueError("costs must be non-negative")
    lat = V.nonneg(hop_latency, "hop_latency")
    ov = V.nonneg(overlap, "overlap")
    where = schedule.stage_to_rank
    dur = {"F": f, "I": b, "W": w, "B": b + w}
    zero = np.zeros(f.shape[0])
    end: dict[tuple[int, str, int], np.ndarray] = {}
    clock = [zero] * P

    def ready(a):
        s, kind, k = a
        if kind == "F":
            return zero if s == 0 else end[(s - 1, "F", k)] + (lat if where[s - 1] != where[s] else 0.0)
        if kind == "W":
            return end[(s, "B", k)]
        t = end[(s, "F", k)]
        if s == S - 1:
            return t
        return np.maximum(t, end[(s + 1, "B", k)] + (lat if where[s + 1] != where[s] else 0.0))

    for r, item in _plan(schedule):
        if isinstance(item, Overlap):
            fa, ba = item.forward, item.backward
            st = np.maximum(np.maximum(clock[r], ready(fa)), ready(ba))
            df, db = f[:, fa[0]], dur["B"][:, ba[0]]
            en = st + (df + db - ov * np.minimum(df, db))
            end[(fa[0], "F", fa[2])] = end[(ba[0], "B", ba[2])] = en
        else:
            s, kind, k = item
            en = np.maximum(clock[r], ready(item)) + dur[kind][:, s]
            end[(s, "B" if kind == "I" else kind, k)] = en
        clock[r] = en
    return np.max(np.stack(clock), axis=0)


def best_v_split(
    schedule: PlacedSchedule,
    rank_layers,
    layer_cost,
    head_cost,
    tail_cost,
    *,
    min_layers_per_stage=1,
    backward_ratio=1.0,
    weight_ratio=1.0,
    **simulate_kw,
):
    """Simulate ``schedule`` on every :func:`v_splits` of ``rank_layers`` and return
    ``(timeline, stage_layers)`` of the shortest makespan (the first in :func:`v_splits` order on
    ties).  Stage times come from :func:`v_chunk_times`; ``I`` costs ``backward_ratio·f`` and ``W``
    ``weight_ratio·f`` (a full ``B`` both); activations are counted in layers (``activation_bytes`` =
    the stage's layer count) and held until ``W``; ``simulate_kw`` goes to :func:`simulate_placed`.
    The splits are compared with :func:`batch_makespans`; the winner is simulated in full."""
    simulate_kw.setdefault("free_after", "W")
    splits = list(v_splits(rank_layers, min_layers_per_stage=min_layers_per_stage))
    if not splits:
        raise ValueError("no split of rank_layers gives every stage min_layers_per_stage layers")
    fs = [v_chunk_times(n, layer_cost, head_cost, tail_cost) for n in splits]
    spans = batch_makespans(
        schedule,
        fs,
        [[backward_ratio * x for x in f] for f in fs],
        [[weight_ratio * x for x in f] for f in fs],
        hop_latency=simulate_kw.get("hop_latency", 0.0),
        overlap=simulate_kw.get("overlap", 0.0),
    )
    i = int(np.argmin(spans))  # the first minimum
    f, n = fs[i], splits[i]
    tl = simulate_placed(
        schedule,
        f,
        [backward_ratio * x for x in f],
        [weight_ratio * x for x in f],
        activation_bytes=n,
        **simulate_kw,
    )
    return tl, n


def placement_table(
    total_layers, layer_cost, head_cost, tail_cost, num_ranks, num_microbatches, *, min_layers_per_stage=1
) -> list[dict]:
    """1F1B and ZB-H1 (loop placement) against ZB-V and DualPipeV (V placement) on the equal-layer model
    of :func:`pipelab.partition.water_fill` (``total_layers`` layers of ``layer_cost``, ``head_cost`` on
    the first stage, ``tail_cost`` on the last).  Backward costs: 1F1B's ``B = 2f``; the zero-bubble
    schedules split it into ``I = W = f``.  Each schedule on an even split and on its best split: loop —
    :func:`pipelab.partition.uniform_partition` and :func:`pipelab.partition.water_fill`; V — an even
    split into ``2P`` stages and the fastest (simulated) :func:`v_splits` of :func:`v_rank_layers`.

    Returns one dict per row: ``schedule``, ``placement``, ``split`` (``"even"``/``"balanced"``),
    ``stage_layers``, ``stage_times`` (forward, per stage), ``makespan``, ``bubble_ratio``,
    ``peak_memory`` (per rank, in units of one layer's activations for one microbatch; activations
    held until ``W`` for the zero-bubble schedules, head/tail activations not counted) and
    ``timeline``.
    """
    from .partition import stage_loads, uniform_partition, water_fill
    from .schedules import make_schedule
    from .simulate import simulate

    L = V.count(total_layers, "total_layers")
    P = V.count(num_ranks, "num_ranks")
    m = V.count(num_microbatches, "num_microbatches")
    rows = []
    for split, counts in (
        ("even", uniform_partition(L, P)),
        ("balanced", water_fill(L, layer_cost, head_cost, tail_cost, P)),
    ):
        f = stage_loads([layer_cost] * L, counts, head_cost=head_cost, tail_cost=tail_cost)
        for name, args, kw in (
            ("1f1b", ([2 * x for x in f],), {}),
            ("zb-h1", (f, f), {"free_after": "W"}),
        ):
            tl = simulate(make_schedule(name, P, m), f, *args, activation_bytes=counts, **kw)
            rows.append(_row(name, "loop", split, counts, f, tl))
    even_v = uniform_partition(L, 2 * P)
    rank_layers = v_rank_layers(
        L, layer_cost, head_cost, tail_cost, P, min_layers_per_stage=min_layers_per_stage
    )
    for name, build in (("zbv", zbv), ("dualpipev", dualpipev)):
        if name == "dualpipev" and m < 2 * P:
            continue
        sched = build(P, m)
        f = v_chunk_times(even_v, layer_cost, head_cost, tail_cost)
        tl = simulate_placed(sched, f, f, f, activation_bytes=even_v, free_after="W")
        rows.append(_row(name, "v", "even", even_v, f, tl))
        tl, n = best_v_split(
            sched,
            rank_layers,
            layer_cost,
            head_cost,
            tail_cost,
            min_layers_per_stage=min_layers_per_stage,
        )
        rows.append(_row(name, "v", "balanced", n, v_chunk_times(n, layer_cost, head_cost, tail_cost), tl))
    return rows


def _row(name, placement, split, counts, f, tl):
    return {
        "schedule": name,
        "placement": placement,
        "split": split,
        "stage_layers": list(counts),
        "stage_times": list(f),
        "makespan": tl.makespan,
        "bubble_ratio": tl.bubble_ratio,
        "peak_memory": list(tl.peak_memory),
        "timeline": tl,
    }
