"""Timeline data structures shared by the forward-flow model and the event-driven simulator."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Op", "Timeline"]

KINDS = ("F", "B", "W")
_KIND_CODE = {"F": 0, "B": 1, "W": 2}


class Op(NamedTuple):
    """One executed operation.

    ``stage`` is the *global* pipeline stage (model chunk) index; with interleaving, rank ``r`` of ``P``
    holds stages ``r, r+P, r+2P, ...`` and ``chunk = stage // P``.  ``kind`` is ``"F"`` (forward),
    ``"B"`` (backward, input gradient; the whole backward when there is no ``"W"``) or ``"W"``
    (weight gradient, zero-bubble schedules).  ``start``/``end`` are in the caller's time unit.
    """

    stage: int
    kind: str
    mb: int
    start: float
    end: float
    chunk: int = 0

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def label(self) -> str:
        return f"{self.stage}{self.kind}{self.mb}"


class Timeline:
    """The result of running a pipeline: every op with its start and end time.

    Attributes: ``ops`` (list of :class:`Op`), ``num_stages`` (number of *rows* = ranks/devices; an
    interleaved schedule with ``v`` chunks per rank still has ``num_stages == P`` rows and ops are
    placed on row ``stage % P``, or on ``stage_to_rank[stage]`` when given, e.g. the V placement of
    :mod:`pipelab.vshape`), ``num_microbatches``, ``chunks``, ``blocked`` (``(rank, start, end)``
    intervals a rank spent blocked in a send; idle time), and, from :func:`pipelab.simulate`,
    ``memory`` (per rank a pair of numpy arrays ``(times, bytes)``: activation memory as a step
    function, value holding from each time on), ``peak_in_flight`` and ``peak_memory`` (per rank) and
    ``meta`` (``peak_in_flight_per_stage``, ``peak_memory_per_stage`` per global stage, …).

    Derived: ``makespan``, ``busy_per_stage``, ``idle_per_stage``, ``bubble_ratio``
    (= 1 − total busy / (rows · makespan)), ``blocked_per_stage``, :meth:`order`, :meth:`summary`.
    Large simulations keep ops as numpy columns (``columns``) and build the ``Op`` list on first use.
    """

    def __init__(
        self,
        ops=None,
        num_stages: int = 1,
        num_microbatches: int = 0,
        chunks: int = 1,
        *,
        blocked=None,
        memory=None,
        peak_in_flight=None,
        peak_memory=None,
        meta=None,
        columns=None,
        stage_to_rank=None,
    ):
        self.stage_to_rank = None if stage_to_rank is None else tuple(int(r) for r in stage_to_rank)
        self._ops = list(ops) if ops is not None else None
        if columns is None:
            o = self._ops or []
            columns = {
                "stage": np.fromiter((x.stage for x in o), dtype=np.int64, count=len(o)),
                "kind": np.fromiter((_KIND_CODE[x.kind] for x in o), dtype=np.int8, count=len(o)),
                "mb": np.fromiter((x.mb for x in o), dtype=np.int64, count=len(o)),
                "start": np.fromiter((x.start for x in o), dtype=float, count=len(o)),
                "end": np.fromiter((x.end for x in o), dtype=float, count=len(o)),
            }
        self.columns = columns
        self.num_stages = int(num_stages)
        self.num_microbatches = int(num_microbatches)
        self.chunks = int(chunks)
        self.blocked = list(blocked or [])
        self.memory = memory
        self.peak_in_flight = peak_in_flight
        self.peak_memory = peak_memory
        self.meta = dict(meta or {})

    @property
    def ops(self) -> list[Op]:
        if self._ops is None:
            c = self.columns
            P = self.num_stages
            self._ops = [
                Op(s, KINDS[k], mb, st, en, s // P)
                for s, k, mb, st, en in zip(
                    c["stage"].tolist(),
                    c["kind"].tolist(),
                    c["mb"].tolist(),
                    c["start"].tolist(),
                    c["end"].tolist(),
                    strict=True,
                )
            ]
        return self._ops

    def __len__(self) -> int:
        return len(self.columns["start"])

    # -- geometry -----------------------------------------------------------------------------
    def rank_of(self, op: Op) -> int:
        if self.stage_to_rank is not None:
            return self.stage_to_rank[op.stage]
        return op.stage % self.num_stages

    def _ranks(self, stages: np.ndarray) -> np.ndarray:
        if self.stage_to_rank is not None:
            return np.asarray(self.stage_to_rank, dtype=np.int64)[stages]
        return stages % self.num_stages

    @property
    def makespan(self) -> float:
        e = self.columns["end"]
        return float(e.max()) if len(e) else 0.0

    @property
    def busy_per_stage(self) -> list[float]:
        c = self.columns
        if not len(c["start"]):
            return [0.0] * self.num_stages
        busy = np.bincount(self._ranks(c["stage"]), weights=c["end"] - c["start"], minlength=self.num_stages)
        return busy.tolist()

    @property
    def idle_per_stage(self) -> list[float]:
        T = self.makespan
        return [T - b for b in self.busy_per_stage]

    @property
    def total_busy(self) -> float:
        return float(sum(self.busy_per_stage))

    @property
    def total_idle(self) -> float:
        return float(sum(self.idle_per_stage))

    @property
    def bubble_ratio(self) -> float:
        """1 − total busy time / (rows · makespan): the idle share of the whole device-time rectangle."""
        T = self.makespan
        if T <= 0:
            return 0.0
        return 1.0 - self.total_busy / (self.num_stages * T)

    @property
    def blocked_per_stage(self) -> list[float]:
        out = [0.0] * self.num_stages
        for r, s, e in self.blocked:
            out[r] += e - s
        return out

    def ops_of_rank(self, rank: int) -> list[Op]:
        """Ops executed by row ``rank``, in time order."""
        return sorted((o for o in self.ops if self.rank_of(o) == rank), key=lambda o: (o.start, o.end))

    def order(self) -> list[list[str]]:
        """Per-rank op labels (``"0F3"``) in execution order."""
        return [[o.label for o in self.ops_of_rank(r)] for r in range(self.num_stages)]

    def find(self, stage: int, kind: str, mb: int) -> Op:
        for o in self.ops:
            if o.stage == stage and o.kind == kind and o.mb == mb:
                return o
        raise KeyError(f"{stage}{kind}{mb}")

    def summary(self) -> dict:
        d = {
            "makespan": self.makespan,
            "bubble_ratio": self.bubble_ratio,
            "busy_per_stage": self.busy_per_stage,
            "idle_per_stage": self.idle_per_stage,
        }
        if self.blocked:
            d["blocked_per_stage"] = self.blocked_per_stage
        if self.peak_in_flight is not None:
            d["peak_in_flight"] = list(self.peak_in_flight)
        if self.peak_memory is not None:
            d["peak_memory"] = list(self.peak_memory)
        return d

    def __repr__(self) -> str:  # keep notebooks readable
        return (
            f"Timeline(rows={self.num_stages}, ops={len(self)}, makespan={self.makespan:g}, "
            f"bubble_ratio={self.bubble_ratio:.4f})"
        )
