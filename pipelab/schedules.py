"""Pipeline schedules as per-rank op lists.

An *action* is a tuple ``(stage, kind, mb)``: global stage index, ``"F"``/``"B"``/``"W"`` and the
microbatch.  A :class:`Schedule` holds one list of actions per rank, in execution order.  With ``v``
chunks per rank (interleaved), rank ``r`` of ``P`` holds stages ``r, r+P, …, r+(v−1)P``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _validate as V

__all__ = [
    "Schedule",
    "SCHEDULES",
    "gpipe",
    "one_f_one_b",
    "interleaved_1f1b",
    "zb_h1",
    "make_schedule",
    "format_action",
    "format_orders",
    "parse_action",
]

Action = tuple[int, str, int]
_KINDS = "FBW"
_CODE = {"F": 0, "B": 1, "W": 2}


@dataclass(frozen=True, eq=False)
class Schedule:
    """Per-rank op lists of a pipeline schedule.

    ``arrays[r]`` is an ``(n, 3)`` int64 array of ``(stage, kind code 0/1/2 = F/B/W, microbatch)`` rows
    in rank ``r``'s execution order; :attr:`orders` gives the same as tuples ``(stage, "F", mb)``.
    Build custom schedules with :meth:`from_orders`.
    """

    name: str
    num_ranks: int
    num_microbatches: int
    chunks: int
    arrays: tuple
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_orders(
        cls, name: str, num_ranks: int, num_microbatches: int, orders, chunks: int = 1
    ) -> Schedule:
        """A schedule from per-rank lists of actions ``(stage, kind, mb)`` or labels ``"0F3"``."""
        P = V.count(num_ranks, "num_ranks")
        m = V.count(num_microbatches, "num_microbatches")
        v = V.count(chunks, "chunks")
        orders = list(orders)
        if len(orders) != P:
            raise ValueError(f"expected {P} per-rank lists, got {len(orders)}")
        arrays = []
        for r, order in enumerate(orders):
            rows = []
            for a in order:
                s, kind, k = parse_action(a) if isinstance(a, str) else a
                if kind not in _CODE:
                    raise ValueError(f"invalid op kind {kind!r} on rank {r} (use F, B or W)")
                rows.append((int(s), _CODE[kind], int(k)))
            arrays.append(np.array(rows, dtype=np.int64).reshape(-1, 3))
        return cls(name, P, m, v, tuple(arrays))

    @property
    def num_stages(self) -> int:
        """Number of global stages (model chunks) = ranks × chunks."""
        return self.num_ranks * self.chunks

    @property
    def orders(self) -> tuple[tuple[Action, ...], ...]:
        if "orders" not in self._cache:
            self._cache["orders"] = tuple(
                tuple((s, _KINDS[k], mb) for s, k, mb in a.tolist()) for a in self.arrays
            )
        return self._cache["orders"]

    @property
    def has_w(self) -> bool:
        return any(bool((a[:, 1] == 2).any()) for a in self.arrays)

    def labels(self) -> list[list[str]]:
        return [[f"{s}{_KINDS[k]}{mb}" for s, k, mb in a.tolist()] for a in self.arrays]

    def __str__(self) -> str:
        return "\n".join(" ".join(row) for row in self.labels())


def format_action(a: Action) -> str:
    return f"{a[0]}{a[1]}{a[2]}"


def parse_action(s: str) -> Action:
    for i, ch in enumerate(s):
        if ch in "FBW" and s[:i].isdigit() and s[i + 1 :].isdigit():
            return int(s[:i]), ch, int(s[i + 1 :])
    raise ValueError(f"not an action: {s!r} (expected e.g. 0F3)")


def format_orders(orders) -> str:
    """One line per rank, actions separated by spaces (the CLI's ``order`` output)."""
    if isinstance(orders, Schedule):
        return str(orders)
    return "\n".join(" ".join(format_action(a) for a in order) for order in orders)


def _check(P, m):
    return V.count(P, "number of stages P"), V.count(m, "number of microbatches m")


def _rows(stage, kind, mb):
    return np.stack(
        [np.asarray(stage, dtype=np.int64), np.asarray(kind, dtype=np.int64), np.asarray(mb, dtype=np.int64)],
        axis=1,
    )


def _one_f_one_b_rows(f_stage, f_mb, b_stage, b_mb, warm):
    """``warm`` forwards, then alternately one forward and one backward, then the remaining backwards."""
    n = len(f_stage)
    steady = n - warm
    fs, fm = f_stage[warm:], f_mb[warm:]
    mid_s = np.empty(2 * steady, dtype=np.int64)
    mid_m = np.empty(2 * steady, dtype=np.int64)
    mid_k = np.empty(2 * steady, dtype=np.int64)
    mid_s[0::2], mid_m[0::2], mid_k[0::2] = fs, fm, 0
    mid_s[1::2], mid_m[1::2], mid_k[1::2] = b_stage[:steady], b_mb[:steady], 1
    return np.concatenate(
        [
            _rows(f_stage[:warm], np.zeros(warm), f_mb[:warm]),
            _rows(mid_s, mid_k, mid_m),
            _rows(b_stage[steady:], np.ones(n - steady), b_mb[steady:]),
        ]
    )


def gpipe(P: int, m: int) -> Schedule:
    """All forwards, then all backwards in microbatch order (PyTorch ``ScheduleGPipe``)."""
    P, m = _check(P, m)
    k = np.arange(m)
    arrays = tuple(_rows(np.full(2 * m, r), np.repeat([0, 1], m), np.concatenate([k, k])) for r in range(P))
    return Schedule("gpipe", P, m, 1, arrays)


def one_f_one_b(P: int, m: int) -> Schedule:
    """1F1B (PipeDream-Flush): rank ``r`` runs ``min(m, P−r)`` forwards, then alternates B and F,
    then drains the remaining backwards.  (Megatron phrases the same order as ``P−r−1`` warm-up
    forwards followed by F-B pairs.)  Peak in-flight microbatches on rank ``r``: ``min(m, P−r)``."""
    P, m = _check(P, m)
    k = np.arange(m)
    arrays = []
    for r in range(P):
        st = np.full(m, r)
        arrays.append(_one_f_one_b_rows(st, k, st, k, min(m, P - r) - 1))
    return Schedule("1f1b", P, m, 1, tuple(arrays))


def _groups(m: int, P: int) -> list[np.ndarray]:
    rounds = max(1, m // P)
    q, rem = divmod(m, rounds)
    out, start = [], 0
    for g in range(rounds):
        size = q + (1 if g < rem else 0)
        out.append(np.arange(start, start + size))
        start += size
    return out


def interleaved_1f1b(P: int, m: int, v: int = 2) -> Schedule:
    """Interleaved 1F1B (Narayanan et al. 2021) with ``v`` chunks per rank.

    Microbatches are processed in rounds: ``rounds = max(1, m // P)`` groups of consecutive
    microbatches (sizes differ by at most one; all equal ``P`` when ``P`` divides ``m``).  Within a
    round a rank runs every microbatch of the round on chunk 0, then on chunk 1, … (backwards: the
    chunks in reverse).  Rank ``r`` first runs ``min(v·m, (v−1)·G + 2·(P−1−r))`` forwards (``G`` = the
    largest round), then alternates one forward and one backward, then drains the backwards.  This is
    PyTorch's ``ScheduleInterleaved1F1B`` order (which requires ``rounds`` to divide ``m``; here any
    ``m`` works).
    """
    P, m = _check(P, m)
    v = V.count(v, "chunks per rank v")
    groups = _groups(m, P)
    G = len(groups[0])
    f_c = np.concatenate([np.repeat(np.arange(v), len(g)) for g in groups])
    f_m = np.concatenate([np.tile(g, v) for g in groups])
    b_c = np.concatenate([np.repeat(np.arange(v)[::-1], len(g)) for g in groups])
    b_m = f_m
    total = v * m
    arrays = []
    for r in range(P):
        warm = min(total, (v - 1) * G + 2 * (P - 1 - r))
        arrays.append(_one_f_one_b_rows(r + f_c * P, f_m, r + b_c * P, b_m, warm))
    return Schedule("interleaved-1f1b", P, m, v, tuple(arrays))


def zb_h1(P: int, m: int) -> Schedule:
    """ZB-H1 (Qi et al. 2024): 1F1B with the backward split into B (input gradient, on the critical
    path) and W (weight gradient, deferrable).  Rank ``r`` keeps 1F1B's order of F and B and runs
    ``W(k)`` right after ``B(k + min(m, r))`` (the remaining Ws at the end): later ranks defer more Ws,
    which fill the bubbles of the drain phase.  Peak in-flight activations equal 1F1B's.  With
    ``T_F = T_B = T_W`` and ``m >= P`` the makespan is ``m(T_F+T_B+T_W) + (P−1)(T_F+T_B−T_W)``."""
    P, m = _check(P, m)
    base = one_f_one_b(P, m)
    arrays = []
    for r in range(P):
        delay = min(m, r)
        rows = []
        nb = nw = 0
        for s, kind, k in base.arrays[r].tolist():
            rows.append((s, kind, k))
            if kind == 1:
                nb += 1
                if nb - nw > delay:
                    rows.append((r, 2, nw))
                    nw += 1
        rows.extend((r, 2, k) for k in range(nw, m))
        arrays.append(np.array(rows, dtype=np.int64))
    return Schedule("zb-h1", P, m, 1, tuple(arrays))


SCHEDULES = {
    "gpipe": gpipe,
    "1f1b": one_f_one_b,
    "interleaved-1f1b": interleaved_1f1b,
    "zb-h1": zb_h1,
}


def make_schedule(name: str, P: int, m: int, v: int = 1) -> Schedule:
    """Build a schedule by CLI name: ``gpipe``, ``1f1b``, ``interleaved-1f1b`` (uses ``v``), ``zb-h1``."""
    key = name.lower().replace("_", "-")
    if key not in SCHEDULES:
        raise ValueError(f"unknown schedule {name!r}; choose one of {', '.join(SCHEDULES)}")
    v = V.count(v, "chunks per rank v")
    if key == "interleaved-1f1b":
        return interleaved_1f1b(P, m, v)
    if v != 1:
        raise ValueError(f"--chunks applies to interleaved-1f1b only (got {v} for {key})")
    return SCHEDULES[key](P, m)
