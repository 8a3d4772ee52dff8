"""V-shaped placement: ZB-V and DualPipeV (torch 2.13's ``ScheduleZBVZeroBubble``, ``ScheduleDualPipeV``).

With ``P`` ranks the model is cut into ``S = 2P`` stages and rank ``r`` holds stages ``r`` and
``2P−1−r``: the pipeline runs down the ranks and back up, so **stage 0 and stage 2P−1 — the two ends of
the model — share rank 0** (torch ``_utils.generate_stage_to_rank_mapping(style="v")``).  On a dumbbell
model that puts the heavy head (vision encoder, embedding) and the heavy tail (output layer, loss,
action head) on one GPU, as DeepSeek-V3 co-locates its embedding and output head.

Actions are ``(stage, kind, mb)`` with torch's kinds: ``"F"`` forward, ``"I"`` backward for the input
(torch ``BACKWARD_INPUT``), ``"W"`` backward for the weights, ``"B"`` the whole backward (``I`` then
``W`` as one op, torch ``FULL_BACKWARD``).  DualPipeV also runs :class:`Overlap` pairs
(torch ``OVERLAP_F_B``): a forward of one stage and a full backward of the other stage of the same rank,
issued together.  :meth:`PlacedSchedule.labels` prints them as torch does (``0F3``,
``(0F3;7B1)OVERLAP_F_B``); ``tests/pipelab/test_pipelab_vshape.py`` compares them with golden files
made from torch 2.13 by ``tools/make_goldens.py``.

:func:`simulate_placed` runs any placement (the V here, or the loop placement of
:mod:`pipelab.schedules` via :meth:`PlacedSchedule.from_schedule`) on the same event model as
:func:`pipelab.simulate`: a rank runs its list in order; ``F(s,k)`` needs ``F(s−1,k)``; ``I``/``B(s,k)``
need ``F(s,k)`` and the input gradient of stage ``s+1`` (from its ``I`` or ``B``); ``W(s,k)`` needs
``I(s,k)``; a transfer between different ranks takes ``hop_latency`` (free on one rank, so the V's turn
at stage ``P−1 → P`` costs nothing).  Costs: ``backward`` is the input-gradient time and ``weight`` the
weight-gradient time; a full ``B`` costs ``backward + weight`` (so with ``weight=None`` a schedule of
F and B alone means what it means in :func:`pipelab.simulate`).  An :class:`Overlap` pair starts when
the rank is free and *both* inputs have arrived and takes ``f + b − overlap·min(f, b)`` (``f``, ``b`` the
two ops' times): ``overlap=0`` (default) is two back-to-back computations; the communication that
DualPipe hides behind the other op's compute (expert all-to-all, pipeline sends) is not part of this
model, and ``overlap`` is the share of the shorter op it would hide.  Both outputs of a pair leave at its
end.  Buffers are unbounded.  Activations of ``(s,k)`` live from the start of ``F(s,k)`` to the end of its
``I`` or ``B`` (``free_after="W"``: to the end of ``W``, or of ``B``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from . import _validate as V
from .schedules import Schedule
from .timeline import Timeline

__all__ = [
    "Overlap",
    "PlacedSchedule",
    "stage_to_rank",
    "rank_to_stages",
    "zbv",
    "dualpipev",
    "simulate_placed",
]

Action = tuple[int, str, int]
_SINGLE = "FIWB"


@dataclass(frozen=True)
class Overlap:
    """An overlapped forward + full backward on one rank (torch ``OVERLAP_F_B``)."""

    forward: Action
    backward: Action

    @property
    def label(self) -> str:
        return f"({_fmt(self.forward)};{_fmt(self.backward)})OVERLAP_F_B"


def _fmt(a: Action) -> str:
    return f"{a[0]}{a[1]}{a[2]}"


def stage_to_rank(num_ranks: int, num_stages: int, placement: str = "v") -> tuple[int, ...]:
    """Rank of every stage: ``"loop"`` is ``s mod P``; ``"v"`` runs down the ranks and back up
    (``0, 1, …, P−1, P−1, …, 0`` for ``S = 2P``), as torch's ``generate_stage_to_rank_mapping``."""
    P = V.count(num_ranks, "num_ranks")
    S = V.count(num_stages, "num_stages")
    if placement == "loop":
        return tuple(s % P for s in range(S))
    if placement != "v":
        raise ValueError(f"placement must be 'loop' or 'v', got {placement!r}")
    if S % P:
        raise ValueError(f"a V placement needs num_stages ({S}) divisible by num_ranks ({P})")
    out = []
    for s in range(S):
        lap, i = divmod(s, P)
        out.append(i if lap % 2 == 0 else P - 1 - i)
    return tuple(out)


def rank_to_stages(num_ranks: int, num_stages: int, placement: str = "v") -> list[list[int]]:
    """The stages each rank holds, in increasing order."""
    m = stage_to_rank(num_ranks, num_stages, placement)
    out: list[list[int]] = [[] for _ in range(num_ranks)]
    for s, r in enumerate(m):
        out[r].append(s)
    return out


@dataclass(frozen=True, eq=False)
class PlacedSchedule:
    """Per-rank op lists with an explicit stage→rank placement.

    ``orders[r]`` is rank ``r``'s list of actions ``(stage, kind, mb)`` (kind ``F``/``I``/``W``/``B``)
    and :class:`Overlap` pairs, in execution order.
    """

    name: str
    num_ranks: int
    num_microbatches: int
    num_stages: int
    placement: str
    orders: tuple

    @property
    def stage_to_rank(self) -> tuple[int, ...]:
        return stage_to_rank(self.num_ranks, self.num_stages, self.placement)

    def labels(self) -> list[list[str]]:
        """torch's text form of every action (``str(_Action)``): ``0F3``, ``(0F3;7B1)OVERLAP_F_B``."""
        return [[a.label if isinstance(a, Overlap) else _fmt(a) for a in order] for order in self.orders]

    def __str__(self) -> str:
        return "\n".join(" ".join(row) for row in self.labels())

    @classmethod
    def from_schedule(cls, schedule: Schedule) -> PlacedSchedule:
        """A :class:`pipelab.schedules.Schedule` (loop placement) in this form: its ``B`` ops are
        ``I`` when the schedule has ``W`` ops (ZB-H1), the whole backward ``B`` otherwise."""
        b = "I" if schedule.has_w else "B"
        orders = tuple(
            tuple((s, b if k == "B" else k, mb) for s, k, mb in order) for order in schedule.orders
        )
        return cls(
            schedule.name, schedule.num_ranks, schedule.num_microbatches, schedule.num_stages, "loop", orders
        )


def zbv(P: int, m: int) -> PlacedSchedule:
    """ZB-V (Qi et al. 2024, §6), torch 2.13 ``ScheduleZBVZeroBubble._calculate_single_rank_operations``.

    Rank ``r`` (stages ``c0 = r`` and ``c1 = 2P−1−r``): ``2(P−r)−1`` forwards of ``c0``; ``r`` pairs
    ``F c1, F c0``; ``P−r`` triples ``F I W`` of ``c1``; then, while forwards remain, ``F I W`` of ``c0``
    and of ``c1``; cool-down ``r`` pairs ``I c0, I c1``, ``P−r`` pairs ``I c0, W c0``, then the pending
    ``W`` of ``c1`` and of ``c0``.  Built for ``max(2P−1, m)`` microbatches, then every action of a
    microbatch ``>= m`` dropped, as torch does.
    """
    P = V.count(P, "number of ranks P")
    m = V.count(m, "number of microbatches m")
    S = 2 * P
    n = max(2 * P - 1, m)
    orders = []
    for r in range(P):
        c0, c1 = r, S - 1 - r
        ops: list[Action] = []
        f0 = f1 = b0 = b1 = 0
        for _ in range(2 * (P - r) - 1):
            ops.append((c0, "F", f0))
            f0 += 1
        for _ in range(r):
            ops += [(c1, "F", f1), (c0, "F", f0)]
            f1 += 1
            f0 += 1
        for _ in range(P - r):
            ops += [(c1, "F", f1), (c1, "I", b1), (c1, "W", b1)]
            f1 += 1
            b1 += 1
        while f1 < f0 or f0 < n:
            if f0 < n:
                ops.append((c0, "F", f0))
                f0 += 1
            ops += [(c0, "I", b0), (c0, "W", b0), (c1, "F", f1), (c1, "I", b1), (c1, "W", b1)]
            b0 += 1
            f1 += 1
            b1 += 1
        w0, w1 = b0, b1
        for _ in range(r):
            ops += [(c0, "I", b0), (c1, "I", b1)]
            b0 += 1
            b1 += 1
        for _ in range(P - r):
            ops += [(c0, "I", b0), (c0, "W", w0)]
            b0 += 1
            w0 += 1
        ops += [(c1, "W", k) for k in range(w1, b1)]
        ops += [(c0, "W", k) for k in range(w0, b0)]
        orders.append(tuple(a for a in ops if a[2] < m))
    return PlacedSchedule("zbv", P, m, S, "v", tuple(orders))


def dualpipev(P: int, m: int) -> PlacedSchedule:
    """DualPipeV (DeepSeek's DualPipe folded into a V), torch 2.13 ``ScheduleDualPipeV``.

    Rank ``r`` (stages ``s0 = r``, ``s1 = 2P−1−r``), eight steps: (1) ``2(P−r−1)`` forwards of ``s0``;
    (2) ``r+1`` pairs ``F s0, F s1``; (3) ``P−r−1`` times ``I s1``, the oldest pending ``W``, ``F s1``;
    (4) ``m−2P+r+1`` times the overlapped pairs ``(F s0; B s1)`` and ``(F s1; B s0)`` (the last rank's
    first ``F s0, B s1`` not overlapped); (5) ``P−r−1`` times ``B s1`` then ``(F s1; B s0)``; (6) ``r+1``
    backward pairs ``s1, s0``, full ``B`` for the first half and ``I`` (zero bubble) from the middle on;
    (7) ``P−r−1`` times a pending ``W`` then a backward of ``s0``; (8) the ``r+1`` pending ``W``.
    torch requires ``m >= 2P``; so does this function.
    """
    P = V.count(P, "number of ranks P")
    m = V.count(m, "number of microbatches m")
    S = 2 * P
    if m < S:
        raise ValueError(f"DualPipeV needs at least as many microbatches as stages (m >= 2P = {S}); got {m}")
    orders = tuple(_dualpipev_rank(P, m, r) for r in range(P))
    return PlacedSchedule("dualpipev", P, m, S, "v", orders)


def _dualpipev_rank(P: int, m: int, r: int) -> tuple:
    S = 2 * P
    s0, s1 = r, S - 1 - r
    ops: list = []
    nxt = {(s, k): 0 for s in (s0, s1) for k in "FIW"}  # next microbatch per (stage, F / backward / W)
    wq: list[tuple[int, int]] = []  # I ops whose W is pending, oldest first

    def act(s, kind):
        key = (s, "I" if kind == "B" else kind)
        k = nxt[key]
        ops.append((s, kind, k))
        if kind == "B":
            nxt[(s, "I")] += 1
            nxt[(s, "W")] += 1
        else:
            if kind == "I":
                wq.append((s, k))
            nxt[key] = k + 1

    def pair(fs, bs):
        fk, bk = nxt[(fs, "F")], nxt[(bs, "I")]
        ops.append(Overlap((fs, "F", fk), (bs, "B", bk)))
        nxt[(fs, "F")] += 1
        nxt[(bs, "I")] += 1
        nxt[(bs, "W")] += 1

    def pending_w():
        if wq:
            s, k = wq.pop(0)
            ops.append((s, "W", k))
            nxt[(s, "W")] += 1

    for _ in range(2 * (P - r - 1)):
        act(s0, "F")
    for _ in range(r + 1):
        act(s0, "F")
        act(s1, "F")
    for _ in range(P - r - 1):
        act(s1, "I")
        pending_w()
        act(s1, "F")
    for i in range(m - 2 * P + r + 1):
        if i == 0 and r == P - 1:
            act(s0, "F")
            act(s1, "B")
        else:
            pair(s0, s1)
        pair(s1, s0)
    for _ in range(P - r - 1):
        act(s1, "B")
        pair(s1, s0)
    zb = False
    steps = r + 1
    for i in range(steps):
        if i == steps // 2 and r % 2 == 1:
            zb = True
        act(s1, "I" if zb else "B")
        if i == steps // 2 and r % 2 == 0:
            zb = True
        act(s0, "I" if zb else "B")
    for _ in range(P - r - 1):
        pending_w()
        act(s0, "I" if zb else "B")
    for _ in range(r + 1):
        pending_w()
    return tuple(ops)


# -- simulation ------------------------------------------------------------------------------------


def _costs(value, S, what):
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return V.times([value] * S, what)
    vals = V.times(value, what)
    if len(vals) != S:
        raise ValueError(f"{what} has {len(vals)} entries; expected {S} (one per stage)")
    return vals


def _validate(sched: PlacedSchedule):
    P, S, m = sched.num_ranks, sched.num_stages, sched.num_microbatches
    where = sched.stage_to_rank
    if len(sched.orders) != P:
        raise ValueError(f"schedule has {len(sched.orders)} rank lists for {P} ranks")
    seen: dict[tuple[int, str, int], int] = {}
    for r, order in enumerate(sched.orders):
        for item in order:
            parts = (item.forward, item.backward) if isinstance(item, Overlap) else (item,)
            if isinstance(item, Overlap) and (item.forward[1] != "F" or item.backward[1] != "B"):
                raise ValueError(f"an overlapped pair is a forward and a full backward, got {item.label}")
            for s, kind, k in parts:
                if kind not in _SINGLE or not (0 <= s < S) or not (0 <= k < m) or where[s] != r:
                    raise ValueError(f"invalid action {s}{kind}{k} on rank {r}")
                if (s, kind, k) in seen:
                    raise ValueError(f"action {s}{kind}{k} appears twice")
                seen[(s, kind, k)] = r
    for s in range(S):
        for k in range(m):
            if (s, "F", k) not in seen:
                raise ValueError(f"the schedule must run every forward: {s}F{k} is missing")
            full, inp, wgt = ((s, x, k) in seen for x in "BIW")
            if not (full and not inp and not wgt) and not (inp and wgt and not full):
                raise ValueError(f"stage {s}, microbatch {k}: run either B, or I and W (exactly once)")


def simulate_placed(
    schedule: PlacedSchedule,
    forward,
    backward,
    weight=None,
    *,
    hop_latency=0.0,
    activation_bytes=None,
    free_after: str = "B",
    overlap=0.0,
) -> Timeline:
    """Run a :class:`PlacedSchedule` (see the module docstring for the model).

    ``forward``, ``backward`` (input gradient), ``weight`` (weight gradient): a number or one value per
    stage; ``weight`` is required when the schedule has ``I``/``W`` ops, and a full ``B`` costs
    ``backward + weight``.  ``activation_bytes``: memory per microbatch per stage (default 1, so memory
    counts in-flight microbatches).  Returns a :class:`Timeline` whose rows are ranks
    (``stage_to_rank`` set), ops ``F``, ``B`` (an ``I`` or a full backward) and ``W``;
    ``meta["kinds"]`` holds torch's kind of every op in column order, ``meta["overlapped"]`` the
    ``(start, end, label)`` of every overlapped pair (its two ops are drawn back to back within it),
    ``peak_in_flight``/``peak_memory`` per rank and ``meta["peak_in_flight_per_stage"]``.
    """
    if not isinstance(schedule, PlacedSchedule):
        raise TypeError(
            "simulate_placed() needs a PlacedSchedule (zbv, dualpipev or PlacedSchedule.from_schedule)"
        )
    _validate(schedule)
    P, S, m = schedule.num_ranks, schedule.num_stages, schedule.num_microbatches
    where = schedule.stage_to_rank
    has_split = any(
        (a.backward if isinstance(a, Overlap) else a)[1] in "IW" for order in schedule.orders for a in order
    )
    if has_split and weight is None:
        raise ValueError(f"schedule {schedule.name} has I/W ops: give weight-gradient times")
    f = _costs(forward, S, "forward")
    b = _costs(backward, S, "backward")
    w = _costs(weight, S, "weight") if weight is not None else [0.0] * S
    lat = V.nonneg(hop_latency, "hop_latency")
    ov = V.nonneg(overlap, "overlap")
    if ov > 1:
        raise ValueError(f"overlap is a share of the shorter op, in [0, 1]; got {overlap!r}")
    if free_after not in ("B", "W"):
        raise ValueError("free_after must be 'B' or 'W'")
    dur = {"F": f, "I": b, "W": w, "B": [x + y for x, y in zip(b, w, strict=True)]}

    end: dict[tuple[int, str, int], float] = {}  # (stage, kind, mb) -> end time (kind B stands for I or B)

    def ready(a):
        """Time the inputs of action ``a`` are available, or None if not yet known."""
        s, kind, k = a
        if kind == "F":
            if s == 0:
                return 0.0
            e = end.get((s - 1, "F", k))
            return None if e is None else e + (lat if where[s - 1] != where[s] else 0.0)
        if kind == "W":
            return end.get((s, "B", k))
        t = end.get((s, "F", k))
        if t is None or s == S - 1:
            return t
        g = end.get((s + 1, "B", k))
        return None if g is None else max(t, g + (lat if where[s + 1] != where[s] else 0.0))

    rows: list[tuple[int, str, int, float, float, str]] = []  # stage, kind, mb, start, end, torch kind
    pairs = []
    ptr, clock = [0] * P, [0.0] * P
    progress = True
    while progress:
        progress = False
        for r in range(P):
            order = schedule.orders[r]
            while ptr[r] < len(order):
                item = order[ptr[r]]
                if isinstance(item, Overlap):
                    fa, ba = item.forward, item.backward
                    tf, tb = ready(fa), ready(ba)
                    if tf is None or tb is None:
                        break
                    st = max(clock[r], tf, tb)
                    df, db = f[fa[0]], dur["B"][ba[0]]
                    d = df + db - ov * min(df, db)
                    scale = d / (df + db) if df + db > 0 else 0.0
                    mid = st + df * scale
                    en = st + d
                    rows.append((fa[0], "F", fa[2], st, mid, "F"))
                    rows.append((ba[0], "B", ba[2], mid, en, "B"))
                    pairs.append((st, en, item.label))
                    end[(fa[0], "F", fa[2])] = en
                    end[(ba[0], "B", ba[2])] = en
                else:
                    s, kind, k = item
                    t = ready(item)
                    if t is None:
                        break
                    st = max(clock[r], t)
                    en = st + dur[kind][s]
                    rows.append((s, "B" if kind == "I" else kind, k, st, en, kind))
                    end[(s, "B" if kind == "I" else kind, k)] = en
                clock[r] = en
                ptr[r] += 1
                progress = True
    stuck = [r for r in range(P) if ptr[r] < len(schedule.orders[r])]
    if stuck:
        desc = []
        for r in stuck[:8]:
            item = schedule.orders[r][ptr[r]]
            desc.append(f"rank {r} waiting to run {item.label if isinstance(item, Overlap) else _fmt(item)}")
        raise RuntimeError("deadlock: the schedule waits on itself (" + "; ".join(desc) + ")")

    code = {"F": 0, "B": 1, "W": 2}
    cols = {
        "stage": np.array([x[0] for x in rows], dtype=np.int64),
        "kind": np.array([code[x[1]] for x in rows], dtype=np.int8),
        "mb": np.array([x[2] for x in rows], dtype=np.int64),
        "start": np.array([x[3] for x in rows], dtype=float),
        "end": np.array([x[4] for x in rows], dtype=float),
    }
    tl = Timeline(
        num_stages=P,
        num_microbatches=m,
        chunks=S // P,
        columns=cols,
        stage_to_rank=where,
        meta={
            "schedule": schedule.name,
            "placement": schedule.placement,
            "hop_latency": lat,
            "overlap": ov,
            "kinds": [x[5] for x in rows],
            "overlapped": pairs,
        },
    )
    _memory(tl, rows, where, P, S, m, activation_bytes, free_after)
    return tl


def _memory(tl, rows, where, P, S, m, activation_bytes, free_after):
    act = [1.0] * S if activation_bytes is None else _costs(activation_bytes, S, "activation_bytes")
    alloc: dict[tuple[int, int], float] = {}
    free: dict[tuple[int, int], float] = {}
    # an overlapped pair's F starts at the pair's start and its B ends at its end
    for s, kind, k, st, en, tk in rows:
        if kind == "F":
            alloc[(s, k)] = st
        elif tk == "B" or (tk == "I" and free_after == "B") or (tk == "W" and free_after == "W"):
            free[(s, k)] = en
    rank_mem, peak_n, peak_b = [], [], []
    stage_peak = [0] * S
    for r in range(P):
        ev = []  # (time, +1 alloc / −1 free, stage)
        for s in range(S):
            if where[s] != r:
                continue
            for k in range(m):
                ev.append((alloc[(s, k)], 1, s))
                ev.append((free[(s, k)], -1, s))
        ev.sort(key=lambda e: (e[0], e[1]))  # frees first at equal times
        n = 0
        byt = 0.0
        per = dict.fromkeys({e[2] for e in ev}, 0)
        ts, bs = [], []
        pn, pb = 0, 0.0
        for t, sgn, s in ev:
            n += sgn
            byt += sgn * act[s]
            per[s] += sgn
            stage_peak[s] = max(stage_peak[s], per[s])
            pn, pb = max(pn, n), max(pb, byt)
            if ts and ts[-1] == t:
                bs[-1] = byt
            else:
                ts.append(t)
                bs.append(byt)
        rank_mem.append((np.array(ts), np.array(bs)))
        peak_n.append(pn)
        peak_b.append(float(pb))
    tl.memory = rank_mem
    tl.peak_in_flight = peak_n
    tl.peak_memory = peak_b
    tl.meta["peak_in_flight_per_stage"] = stage_peak
    tl.meta["peak_memory_per_stage"] = [stage_peak[s] * float(act[s]) for s in range(S)]
