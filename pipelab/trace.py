"""Chrome trace export (opens in Perfetto, ui.perfetto.dev, and chrome://tracing)."""

from __future__ import annotations

import json
from pathlib import Path

from .timeline import Timeline

__all__ = ["chrome_trace", "write_chrome_trace"]


def chrome_trace(timeline: Timeline, *, us_per_unit: float = 1000.0, memory: bool = True) -> dict:
    """The Trace Event Format document for a timeline.

    One process (``pid`` 0), one thread per rank (``tid`` = rank, named ``rank r``); every op is a
    complete event (``ph: "X"``) named like ``F3`` with ``ts``/``dur`` in microseconds
    (``us_per_unit`` µs per simulator time unit, default 1 unit = 1 ms) and its stage, microbatch and
    chunk in ``args``.  Blocked sends become ``blocked send`` events; activation memory per rank becomes
    counter events (``ph: "C"``) when available.
    """
    if not isinstance(timeline, Timeline):
        raise TypeError("chrome_trace() needs a pipelab Timeline")
    k = float(us_per_unit)
    P = timeline.num_stages
    ev = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "pipeline"}}]
    for r in range(P):
        ev.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": r, "args": {"name": f"rank {r}"}})
        ev.append({"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": r, "args": {"sort_index": r}})
    for o in timeline.ops:
        ev.append(
            {
                "name": f"{o.kind}{o.mb}",
                "cat": o.kind,
                "ph": "X",
                "pid": 0,
                "tid": timeline.rank_of(o),
                "ts": o.start * k,
                "dur": (o.end - o.start) * k,
                "args": {"stage": o.stage, "microbatch": o.mb, "chunk": o.chunk, "kind": o.kind},
            }
        )
    for r, s, e in timeline.blocked:
        ev.append(
            {
                "name": "blocked send",
                "cat": "blocked",
                "ph": "X",
                "pid": 0,
                "tid": r,
                "ts": s * k,
                "dur": (e - s) * k,
                "args": {},
            }
        )
    if memory and timeline.memory is not None:
        for r, (ts, vals) in enumerate(timeline.memory):
            for t, v in zip(ts.tolist(), vals.tolist(), strict=True):
                ev.append(
                    {
                        "name": f"activation memory rank {r}",
                        "ph": "C",
                        "pid": 0,
                        "ts": t * k,
                        "args": {"bytes": v},
                    }
                )
    return {
        "traceEvents": ev,
        "displayTimeUnit": "ms",
        "otherData": {
            "generator": "pipelab",
            **{key: val for key, val in timeline.meta.items() if isinstance(val, (int, float, str))},
        },
    }


def write_chrome_trace(timeline: Timeline, path, **kw) -> Path:
    """Write :func:`chrome_trace` as JSON to ``path``; returns the path."""
    path = Path(path)
    path.write_text(json.dumps(chrome_trace(timeline, **kw)), encoding="utf-8")
    return path
