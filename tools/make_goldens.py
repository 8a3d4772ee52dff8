"""Generate the golden per-rank schedule orders from PyTorch (dev-only; run once, commit the JSON).

torch is NOT a dependency of this project.  Run this script with a throwaway environment:

    python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0
    /tmp/torchenv/bin/python tools/make_goldens.py

It writes ``tests/golden/pipelab/torch_schedules.json`` with the per-rank orders that
``torch.distributed.pipelining._schedule_visualizer.get_schedule_ops`` builds (no process group
needed) for GPipe, 1F1B and Interleaved1F1B over a grid of (P, m[, v]), including m < P, and
``tests/golden/pipelab/torch_v_schedules.json`` with the V-placement schedules ZBVZeroBubble and
DualPipeV (2 stages per rank) over a grid of (P, m): every action as torch prints it (``str(_Action)``:
``0F3``, ``7I1``, ``(0F3;7B1)OVERLAP_F_B``), only the ``None`` spacing entries dropped.

Post-processing, all explicit:
* ``None`` entries (idle slots the visualizer inserts for spacing) and non-compute actions such as
  ``REDUCE_GRAD`` are dropped: the goldens are the order of F/B ops on each rank.
* torch 2.13's visualizer mislabels the *last rank's* forward microbatches for 1F1B as ``1..m``
  instead of ``0..m-1`` (the runtime is correct).  For 1F1B we check that the last rank's forward
  microbatches are exactly ``1..m`` (or already ``0..m-1``, if a later torch fixes it) and relabel
  ``k -> k-1``; the JSON records ``"relabelled_last_rank_forwards": true`` for those cases.  Any other
  pattern aborts the script rather than being silently "fixed".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "golden" / "pipelab" / "torch_schedules.json"

GRID_P = [1, 2, 3, 4, 5, 8]
GRID_M = [1, 2, 3, 4, 5, 6, 8, 12, 16]
GRID_V_P = [1, 2, 3, 4, 5, 8]
GRID_V_M = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20]
V_SCHEDULES = ("ZBVZeroBubble", "DualPipeV")
OUT_V = OUT.with_name("torch_v_schedules.json")
GRID_INTERLEAVED = [(P, m, v) for P in (2, 3, 4) for m in (1, 2, 3, 4, 6, 8, 9, 12, 16) for v in (2, 3)]


def _import_torch():
    try:
        import torch
        from torch.distributed.pipelining._schedule_visualizer import get_schedule_ops
    except ImportError:
        sys.exit(
            "make_goldens.py needs torch (dev-only, never a project dependency):\n"
            "  python3 -m venv /tmp/torchenv && /tmp/torchenv/bin/pip install torch==2.13.0\n"
            "  /tmp/torchenv/bin/python tools/make_goldens.py"
        )
    return torch, get_schedule_ops


def _parse(a):
    s = str(a)
    for i, ch in enumerate(s):
        if ch in "FBIW" and s[:i].isdigit() and s[i + 1 :].isdigit():
            return int(s[:i]), ch, int(s[i + 1 :])
    return None  # e.g. REDUCE_GRAD, communication ops


def _orders(get_schedule_ops, name, P, m, v):
    raw = get_schedule_ops(name, P, m, num_stages_per_rank=v)
    orders = []
    for rank_ops in raw:
        acts = [_parse(a) for a in rank_ops if a is not None]
        orders.append([a for a in acts if a is not None])
    return orders


def _fix_1f1b_last_rank(orders, m):
    last = orders[-1]
    fwd = sorted(k for _, kind, k in last if kind == "F")
    if fwd == list(range(m)):
        return orders, False
    if fwd != list(range(1, m + 1)):
        raise SystemExit(f"unexpected 1F1B last-rank forward labels {fwd}; refusing to guess")
    orders[-1] = [(s, kind, k - 1 if kind == "F" else k) for s, kind, k in last]
    return orders, True


def main() -> None:
    torch, get_schedule_ops = _import_torch()
    cases = []
    for name in ("GPipe", "1F1B"):
        for P in GRID_P:
            for m in GRID_M:
                case = {"schedule": name, "P": P, "m": m, "v": 1}
                try:
                    orders = _orders(get_schedule_ops, name, P, m, 1)
                except Exception as e:  # torch rejects some (P, m) combinations; record why
                    case["error"] = f"{type(e).__name__}: {e}"
                    cases.append(case)
                    continue
                if name == "1F1B":
                    orders, fixed = _fix_1f1b_last_rank(orders, m)
                    case["relabelled_last_rank_forwards"] = fixed
                case["orders"] = [[f"{s}{k}{mb}" for s, k, mb in o] for o in orders]
                cases.append(case)
    for P, m, v in GRID_INTERLEAVED:
        case = {"schedule": "Interleaved1F1B", "P": P, "m": m, "v": v}
        try:
            orders = _orders(get_schedule_ops, "Interleaved1F1B", P, m, v)
            case["orders"] = [[f"{s}{k}{mb}" for s, k, mb in o] for o in orders]
        except Exception as e:  # torch rejects some (P, m) combinations; record why
            case["error"] = f"{type(e).__name__}: {e}"
        cases.append(case)
    doc = {
        "generated_by": "tools/make_goldens.py",
        "torch_version": torch.__version__,
        "source": "torch.distributed.pipelining._schedule_visualizer.get_schedule_ops",
        "notes": [
            "None spacing entries and non-compute actions (REDUCE_GRAD) dropped",
            "1F1B: last rank's forward microbatch labels relabelled 1..m -> 0..m-1 where torch 2.13 "
            "mislabels them (see relabelled_last_rank_forwards)",
        ],
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {OUT}")
    write_v_goldens(torch, get_schedule_ops)


def write_v_goldens(torch, get_schedule_ops) -> None:
    """ZB-V and DualPipeV: stage 0 and stage 2P-1 on rank 0 (torch's ``style="v"`` placement)."""
    from torch.distributed.pipelining._utils import generate_stage_to_rank_mapping

    cases = []
    for name in V_SCHEDULES:
        for P in GRID_V_P:
            for m in GRID_V_M:
                case = {"schedule": name, "P": P, "m": m, "v": 2}
                try:
                    raw = get_schedule_ops(name, P, m, num_stages_per_rank=2)
                except Exception as e:  # torch rejects some (P, m) combinations; record why
                    case["error"] = f"{type(e).__name__}: {e}"
                    cases.append(case)
                    continue
                case["stage_to_rank"] = [
                    generate_stage_to_rank_mapping(P, 2 * P, style="v")[s] for s in range(2 * P)
                ]
                case["orders"] = [[str(a) for a in rank_ops if a is not None] for rank_ops in raw]
                cases.append(case)
    doc = {
        "generated_by": "tools/make_goldens.py",
        "torch_version": torch.__version__,
        "source": "torch.distributed.pipelining._schedule_visualizer.get_schedule_ops(name, P, m, num_stages_per_rank=2)",
        "notes": ["None spacing entries dropped; every other action kept as str(_Action)"],
        "cases": cases,
    }
    OUT_V.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {OUT_V}")


if __name__ == "__main__":
    main()
