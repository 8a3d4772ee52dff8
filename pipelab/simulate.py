"""Event-driven simulator for per-rank F/B/W op lists.

Model (all times in the caller's unit):

* Each rank runs its op list strictly in order, one op at a time.
* ``F(s,k)`` needs the output of ``F(s−1,k)``; ``B(s,k)`` needs ``F(s,k)`` and the gradient from
  ``B(s+1,k)``; ``W(s,k)`` needs ``B(s,k)``.  A transfer between different ranks takes ``hop_latency``;
  between chunks on the same rank it is free.
* ``buffer_size=None``: sends are asynchronous (unbounded receive buffers).  ``buffer_size=B``: every
  directed link (stage ``s`` → ``s+1`` for activations, ``s`` → ``s−1`` for gradients) has ``B`` receive
  slots; an output occupies a slot from when it is accepted until the receiver *starts* the op that
  consumes it.  The send of microbatch ``k`` is accepted at ``max(end, start of the receiver's op for
  microbatch k−B)`` and the sending rank is blocked until then (blocked time is idle time, recorded in
  ``Timeline.blocked``).  This is the backpressure of blocking point-to-point sends.
* Activations of ``(s,k)`` are allocated when ``F(s,k)`` starts and freed when ``B(s,k)`` ends (or
  ``W(s,k)``, with ``free_after="W"``); at equal times frees happen first.

Since every op's start is ``max(rank free, inputs ready)``, the simulation is a longest-path
computation on the dependency graph.  Two engines compute it:

* ``"events"``: a worklist resolves ops as soon as their inputs are known (pure Python, any buffer
  size); a cycle (a schedule that waits on itself, e.g. blocking sends waiting on each other) raises
  ``RuntimeError`` naming the stuck ops.
* ``"fast"`` (unbounded buffers only): alternating sweeps over the ranks; on one rank, given every op's
  ready time ``R``, the starts are a max-plus prefix scan ``start_j = D_j + max_{i<=j}(R_i − D_i)``
  (``D`` = prefix sums of durations), one ``numpy.maximum.accumulate``.  Sweeps repeat until nothing
  changes (values only grow, so this is the least fixed point = the event-driven answer).  If it does
  not settle within a bound it falls back to ``"events"`` (which also diagnoses deadlocks).
* ``"auto"`` (default): ``"fast"`` for unbounded buffers, positive durations and >= 20 000 ops,
  otherwise ``"events"``.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _validate as V
from .schedules import Schedule, format_action, make_schedule
from .timeline import Timeline

__all__ = ["simulate", "run", "activation_bytes_per_layer", "stage_costs"]

_KIND = {"F": 0, "B": 1, "W": 2}
_KINDS = "FBW"


def activation_bytes_per_layer(seq_len, micro_batch, hidden, heads) -> float:
    """Activation memory of one transformer layer for one microbatch, in bytes:
    ``s·b·h·(34 + 5·a·s/h)`` (Korthikanti et al. 2022: fp16, no recomputation, no tensor parallelism)."""
    s = V.count(seq_len, "seq_len")
    b = V.count(micro_batch, "micro_batch")
    h = V.count(hidden, "hidden")
    a = V.count(heads, "heads")
    return float(s * b * h * (34 + 5 * a * s / h))


def stage_costs(value, S: int, P: int, what: str) -> list[float]:
    """Expand a cost spec to one value per global stage.

    A number applies to every stage; a list of length ``S`` (= ranks × chunks) is per stage; with
    chunks > 1 a list of length ``P`` is per *rank* and is split evenly over that rank's chunks.
    """
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return V.times([value] * S, what)
    vals = V.times(value, what)
    if len(vals) == S:
        return vals
    if len(vals) == P and S % P == 0:
        v = S // P
        return [vals[s % P] / v for s in range(S)]
    raise ValueError(
        f"{what} has {len(vals)} entries; expected {S} (one per stage)"
        + (f" or {P} (one per rank)" if S != P else "")
    )


def _compile(schedule: Schedule):
    """Per-rank numpy arrays of op ids ``kind·S·m + stage·m + mb``, validated."""
    P, S, m = schedule.num_ranks, schedule.num_stages, schedule.num_microbatches
    SM = S * m
    if len(schedule.arrays) != P:
        raise ValueError(f"schedule has {len(schedule.arrays)} rank lists for {P} ranks")
    comp = []
    for r, arr in enumerate(schedule.arrays):
        s, kind, mb = arr[:, 0], arr[:, 1], arr[:, 2]
        bad = (s < 0) | (s >= S) | (s % P != r) | (mb < 0) | (mb >= m) | (kind < 0) | (kind > 2)
        if bad.any():
            j = int(np.argmax(bad))
            s0, k0, m0 = arr[j].tolist()
            raise ValueError(f"invalid action {s0}{_KINDS[k0] if 0 <= k0 <= 2 else '?'}{m0} on rank {r}")
        comp.append(kind * SM + s * m + mb)
    flat = np.concatenate(comp) if comp else np.zeros(0, dtype=np.int64)
    seen = np.bincount(flat, minlength=3 * SM)
    if len(flat) and seen.max() > 1:
        oid = int(np.argmax(seen > 1))
        kind, s_k = divmod(oid, SM)
        raise ValueError(f"action {format_action((s_k // m, _KINDS[kind], s_k % m))} appears twice")
    counts = np.bincount(flat // SM, minlength=3)
    if counts[0] != SM:
        raise ValueError(
            f"the schedule must run every forward F(stage, mb) exactly once ({counts[0]} of {SM})"
        )
    for k in (1, 2):
        if counts[k] not in (0, SM):
            raise ValueError(f"the schedule runs {counts[k]} of {SM} {_KINDS[k]} ops: all or none")
    if counts[2] and not counts[1]:
        raise ValueError("W ops need B ops")
    return comp


def simulate(
    schedule: Schedule,
    forward,
    backward=None,
    weight=None,
    *,
    hop_latency=0.0,
    buffer_size=None,
    activation_bytes=None,
    free_after: str = "B",
    track_memory: bool = True,
    engine: str = "auto",
) -> Timeline:
    """Run a :class:`~pipelab.schedules.Schedule` with per-stage op times.

    ``forward``/``backward``/``weight``: time of F/B/W per microbatch on each global stage (see
    :func:`stage_costs`).  ``backward`` is required when the schedule has B ops, ``weight`` when it has
    W ops.  ``activation_bytes``: activation memory per microbatch on each stage (default 1 per stage,
    so memory counts in-flight microbatches); ``free_after="W"`` keeps activations until W.
    ``engine``: ``"auto"``, ``"events"`` or ``"fast"`` (see the module docstring).

    Returns a :class:`Timeline` with ``ops``, ``blocked``, ``memory`` (per rank ``(times, bytes)``
    arrays), ``peak_in_flight`` and ``peak_memory`` per rank, and
    ``meta["peak_in_flight_per_stage"]`` / ``meta["peak_memory_per_stage"]`` per global stage.
    """
    if not isinstance(schedule, Schedule):
        raise TypeError("simulate() needs a pipelab.schedules.Schedule (see make_schedule)")
    P, S, m = schedule.num_ranks, schedule.num_stages, schedule.num_microbatches
    comp = _compile(schedule)
    SM = S * m
    kinds_present = {
        _KINDS[k] for k, c in enumerate(np.bincount(np.concatenate(comp) // SM, minlength=3)) if c
    }
    dur = [stage_costs(forward, S, P, "forward")]
    if "B" in kinds_present and backward is None:
        raise ValueError(f"schedule {schedule.name} has backward ops: give backward times")
    dur.append(stage_costs(backward, S, P, "backward") if backward is not None else [0.0] * S)
    if "W" in kinds_present and weight is None:
        raise ValueError(f"schedule {schedule.name} has W ops: give weight-gradient times")
    dur.append(stage_costs(weight, S, P, "weight") if weight is not None else [0.0] * S)
    c = V.nonneg(hop_latency, "hop_latency")
    Bsz = V.buffer(buffer_size)
    if free_after not in ("B", "W"):
        raise ValueError("free_after must be 'B' or 'W'")
    if engine not in ("auto", "events", "fast"):
        raise ValueError("engine must be 'auto', 'events' or 'fast'")
    lat = c if P > 1 else 0.0
    n_ops = sum(len(x) for x in comp)
    positive = all(min(dur[k]) > 0 for k in range(3) if _KINDS[k] in kinds_present)
    if engine == "fast" and Bsz is not None:
        raise ValueError("engine='fast' handles unbounded buffers only; use engine='events'")
    use_fast = engine == "fast" or (engine == "auto" and Bsz is None and positive and n_ops >= 20_000)
    res = _fast(comp, dur, P, S, m, lat) if use_fast else None
    if res is None:
        st, en, blocked = _events(comp, dur, P, S, m, lat, Bsz)
        eng = "events"
    else:
        st, en = res
        blocked = []
        eng = "fast"
    ids = np.concatenate(comp)
    kind, s_k = np.divmod(ids, SM)
    stage, mb = np.divmod(s_k, m)
    cols = {"stage": stage, "kind": kind.astype(np.int8), "mb": mb, "start": st[ids], "end": en[ids]}
    tl = Timeline(
        num_stages=P,
        num_microbatches=m,
        chunks=schedule.chunks,
        blocked=blocked,
        columns=cols,
        meta={"schedule": schedule.name, "hop_latency": c, "buffer_size": Bsz, "engine": eng},
    )
    if track_memory:
        _memory(
            tl,
            schedule,
            st,
            en,
            S,
            m,
            activation_bytes,
            2 if (free_after == "W" and "W" in kinds_present) else 1,
        )
    return tl


def _fast(comp, dur, P, S, m, lat, max_sweeps=64):
    SM = S * m
    N = 3 * SM
    en = np.zeros(N + 1)
    st = np.zeros(N + 1)
    durs = np.concatenate([np.repeat(np.asarray(d, dtype=float), m) for d in dur])
    prep = []
    for ids in comp:
        kind, s_k = np.divmod(ids, SM)
        s = s_k // m
        d = durs[ids]
        d1 = np.full(len(ids), N, dtype=np.int64)
        l1 = np.zeros(len(ids))
        d2 = np.full(len(ids), N, dtype=np.int64)
        l2 = np.zeros(len(ids))
        f = kind == 0
        fm = f & (s > 0)
        d1[fm] = ids[fm] - m
        l1[fm] = lat
        b = kind == 1
        d1[b] = s_k[b]
        bm = b & (s < S - 1)
        d2[bm] = ids[bm] + m
        l2[bm] = lat
        w = kind == 2
        d1[w] = ids[w] - SM
        dex = np.concatenate(([0.0], np.cumsum(d)[:-1]))
        prep.append((ids, d, d1, l1, d2, l2, dex))
    last = [None] * P
    order = list(range(P))
    dirty = [True] * P  # a rank's inputs come only from its neighbours (r±1, wrapping for chunks)
    for sweep in range(max_sweeps):
        changed = False
        for r in order if sweep % 2 == 0 else order[::-1]:
            if not dirty[r]:
                continue
            dirty[r] = False
            ids, d, d1, l1, d2, l2, dex = prep[r]
            ready = np.maximum(en[d1] + l1, en[d2] + l2)
            s_r = dex + np.maximum.accumulate(ready - dex)
            e_r = s_r + d
            if last[r] is None or not np.array_equal(e_r, last[r]):
                changed = True
                last[r] = e_r
                en[ids] = e_r
                st[ids] = s_r
                dirty[(r - 1) % P] = dirty[(r + 1) % P] = True
        if not changed:
            return st, en
    return None


def _events(comp, dur, P, S, m, lat, Bsz):
    SM = S * m
    N = 3 * SM
    start = [-1.0] * N
    end = [-1.0] * N
    rel = [-1.0] * N
    comp = [ids.tolist() for ids in comp]
    wait: dict[int, list[int]] = {}  # key >= 0: waiting for rel[key]; key < 0: waiting for start[-key-1]
    ptr = [0] * P
    clock = [0.0] * P
    pending = [-1] * P  # op id whose blocking send is not yet accepted
    blocked: list[tuple[int, float, float]] = []
    ready = list(range(P - 1, -1, -1))
    last_stage = S - 1
    finite = Bsz is not None and P > 1
    durF, durB, durW = dur
    while ready:
        r = ready.pop()
        ids = comp[r]
        i = ptr[r]
        t = clock[r]
        n = len(ids)
        pid = pending[r]
        if pid >= 0:
            # blocked in a send: wait until the receiver started microbatch k-B
            cid = pid - Bsz + (m if pid < SM else -m)  # same kind, neighbour stage, microbatch k-B
            cs = start[cid]
            if cs < 0:
                wait.setdefault(-cid - 1, []).append(r)
                continue
            e = end[pid]
            rv = cs if cs > e else e
            rel[pid] = rv
            if rv > e:
                blocked.append((r, e, rv))
            w = wait.pop(pid, None)
            if w:
                ready.extend(w)
            t = rv
            pending[r] = -1
        while i < n:
            oid = ids[i]
            kind, s_k = divmod(oid, SM)
            s, k = divmod(s_k, m)
            if kind == 0:
                if s:
                    dep = oid - m
                    d = rel[dep]
                    if d < 0:
                        wait.setdefault(dep, []).append(r)
                        break
                    d += lat
                    st = d if d > t else t
                else:
                    st = t
                en = st + durF[s]
                send = s < last_stage
            elif kind == 1:
                fe = end[s_k]
                if fe < 0:
                    wait.setdefault(s_k, []).append(r)
                    break
                st = fe if fe > t else t
                if s < last_stage:
                    dep = oid + m
                    d = rel[dep]
                    if d < 0:
                        wait.setdefault(dep, []).append(r)
                        break
                    d += lat
                    if d > st:
                        st = d
                en = st + durB[s]
                send = s > 0
            else:
                dep = oid - SM
                be = end[dep]
                if be < 0:
                    wait.setdefault(dep, []).append(r)
                    break
                st = be if be > t else t
                en = st + durW[s]
                send = False
            start[oid] = st
            end[oid] = en
            if wait:
                w = wait.pop(-oid - 1, None)
                if w:
                    ready.extend(w)
            i += 1
            if finite and send and k >= Bsz:
                cid = oid - Bsz + (m if kind == 0 else -m)
                cs = start[cid]
                if cs < 0:
                    pending[r] = oid
                    wait.setdefault(-cid - 1, []).append(r)
                    t = en
                    break
                if cs > en:
                    blocked.append((r, en, cs))
                    en = cs
            rel[oid] = en
            if wait:
                w = wait.pop(oid, None)
                if w:
                    ready.extend(w)
            t = en
        ptr[r] = i
        clock[r] = t
    stuck = [r for r in range(P) if ptr[r] < len(comp[r]) or pending[r] >= 0]
    if stuck:
        desc = []
        for r in stuck[:8]:
            oid = comp[r][ptr[r]] if pending[r] < 0 else pending[r]
            kind, s_k = divmod(oid, SM)
            s, k = divmod(s_k, m)
            what = "blocked sending" if pending[r] >= 0 else "waiting to run"
            desc.append(f"rank {r} {what} {format_action((s, _KINDS[kind], k))}")
        raise RuntimeError("deadlock: the schedule waits on itself (" + "; ".join(desc) + ")")
    st = np.array(start + [0.0])
    en = np.array(end + [0.0])
    return st, en, blocked


def _memory(tl, schedule, st, en, S, m, activation_bytes, free_kind):
    P = schedule.num_ranks
    SM = S * m
    act = np.asarray(
        [1.0] * S if activation_bytes is None else stage_costs(activation_bytes, S, P, "activation_bytes")
    )
    stage_peak_n = [0] * S
    stage_peak_b = [0.0] * S
    rank_mem = []
    rank_peak_n = []
    rank_peak_b = []
    for r in range(P):
        stages = np.arange(r, S, P)
        base = (stages[:, None] * m + np.arange(m)[None, :]).ravel()
        t_alloc = st[base]
        t_free = en[free_kind * SM + base]
        a = np.repeat(act[stages], m)
        sid = np.repeat(stages, m)
        times = np.concatenate((t_alloc, t_free))
        alloc = np.concatenate((np.ones(len(base), dtype=np.int8), np.zeros(len(base), dtype=np.int8)))
        order = np.lexsort((alloc, times))  # frees first at equal times
        sgn = np.where(alloc[order] == 1, 1, -1)
        cnt = np.cumsum(sgn)
        byt = np.cumsum(np.concatenate((a, a))[order] * sgn)
        ts = times[order]
        keep = np.r_[ts[1:] != ts[:-1], True] if len(ts) else np.zeros(0, dtype=bool)
        rank_mem.append((ts[keep], byt[keep]))
        rank_peak_n.append(int(cnt.max()) if len(cnt) else 0)
        rank_peak_b.append(float(byt.max()) if len(byt) else 0.0)
        sids = np.concatenate((sid, sid))[order]
        for s in stages.tolist():
            msk = sids == s
            stage_peak_n[s] = int(np.cumsum(sgn[msk]).max())
            stage_peak_b[s] = stage_peak_n[s] * float(act[s])
    tl.memory = rank_mem
    tl.peak_in_flight = rank_peak_n
    tl.peak_memory = rank_peak_b
    tl.meta["peak_in_flight_per_stage"] = stage_peak_n
    tl.meta["peak_memory_per_stage"] = stage_peak_b


def run(
    name: str,
    forward,
    backward=None,
    weight=None,
    *,
    microbatches: int,
    stages: int | None = None,
    chunks: int = 1,
    **kw,
) -> Timeline:
    """Build the schedule ``name`` and simulate it.  ``stages`` (ranks ``P``) defaults to
    ``len(forward) // chunks`` when ``forward`` is a list."""
    if stages is None:
        if isinstance(forward, numbers.Real):
            raise ValueError("give stages=P when forward is a single number")
        n = len(list(forward))
        stages = n // chunks if n % chunks == 0 and n >= chunks else n
    sched = make_schedule(name, stages, microbatches, chunks)
    return simulate(sched, forward, backward, weight, **kw)
