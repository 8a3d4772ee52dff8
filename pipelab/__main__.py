"""``python -m pipelab {order,simulate,partition,flags} …`` — see ``python -m pipelab -h``."""

from __future__ import annotations

import argparse
import sys

from . import _validate as V

SCHED_NAMES = ("gpipe", "1f1b", "interleaved-1f1b", "zb-h1")
V_NAMES = ("zbv", "dualpipev")  # V placement (pipelab.vshape), torch's labels: F, I, W, B, OVERLAP_F_B


def _floats(text: str, what: str) -> list[float] | float:
    parts = [p for p in text.replace(" ", ",").split(",") if p]
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"{what}: expected numbers separated by commas, got {text!r}") from None
    if not vals:
        raise ValueError(f"{what}: no numbers given")
    return vals[0] if len(vals) == 1 else vals


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m pipelab", description="pipeline-parallel schedules, simulation and partitioning"
    )
    sub = ap.add_subparsers(dest="cmd", required=True)

    o = sub.add_parser("order", help="print each rank's op order, e.g. 0F0 0F1 0B0 …")
    o.add_argument("name", choices=(*SCHED_NAMES, *V_NAMES))
    o.add_argument("--stages", "-p", type=int, required=True, help="number of ranks P")
    o.add_argument("--microbatches", "-m", type=int, required=True)
    o.add_argument(
        "--chunks", "-v", type=int, default=None, help="chunks per rank (interleaved-1f1b; default 2)"
    )

    s = sub.add_parser("simulate", help="simulate a schedule (or 'forward' flow) with per-stage costs")
    s.add_argument("name", choices=(*SCHED_NAMES, "forward"))
    s.add_argument(
        "--stages", "-p", type=int, default=None, help="ranks P (default: number of --forward values)"
    )
    s.add_argument("--microbatches", "-m", type=int, required=True)
    s.add_argument("--chunks", "-v", type=int, default=None)
    s.add_argument("--forward", "-f", required=True, help="F time per stage: one number or a comma list")
    s.add_argument("--backward", "-b", default=None, help="B time per stage (default 2×forward)")
    s.add_argument(
        "--weight",
        "-w",
        default=None,
        help="W time per stage (zb-h1; default = backward/2, and B becomes backward/2)",
    )
    s.add_argument("--hop-latency", type=float, default=0.0)
    s.add_argument("--buffer-size", type=int, default=None, help="receive slots per link (default unbounded)")
    s.add_argument("--activation-bytes", default=None, help="activation bytes per microbatch per stage")
    s.add_argument("--trace", default=None, help="write a Chrome trace JSON (Perfetto) to this file")
    s.add_argument("--plot", default=None, help="write the Gantt timeline image to this file")
    s.add_argument("--memory-plot", default=None, help="write the memory-over-time image to this file")

    q = sub.add_parser("partition", help="split layers into contiguous stages")
    q.add_argument("--layer-costs", "-c", default=None, help="per-layer costs, comma separated")
    q.add_argument(
        "--layers", "-L", type=int, default=None, help="number of uniform layers (with --layer-cost)"
    )
    q.add_argument("--layer-cost", type=float, default=1.0)
    q.add_argument("--stages", "-p", type=int, required=True)
    q.add_argument("--head", type=float, default=0.0, help="fixed cost on stage 0 (embedding)")
    q.add_argument("--tail", type=float, default=0.0, help="fixed cost on the last stage (head/loss)")
    q.add_argument("--speed", default=None, help="per-stage speed factors, comma separated")
    q.add_argument("--mem", default=None, help="per-layer memory (one number or a comma list)")
    q.add_argument("--mem-cap", default=None, help="per-stage memory cap (one number or a comma list)")
    q.add_argument("--method", choices=("min-max", "water-fill", "uniform", "spread"), default="min-max")

    g = sub.add_parser(
        "flags", help="a partition as Megatron-LM / torchtitan / torch.distributed.pipelining flags"
    )
    g.add_argument("layers", help="layers per stage in model order, e.g. 3,11,11,7")
    g.add_argument(
        "--placement", choices=("loop", "v"), default="loop", help="v: 2P stages, rank r holds r and 2P-1-r"
    )
    g.add_argument(
        "--schedule", default=None, help="schedule name for torchtitan/torch (default 1F1B, or ZBVZeroBubble)"
    )
    g.add_argument("--ranks", "-p", type=int, default=None, help="ranks P (loop: several stages per rank)")
    return ap


def _order(a) -> int:
    from .schedules import make_schedule

    if a.name in V_NAMES:
        from . import vshape

        if a.chunks not in (None, 2):
            raise ValueError(f"{a.name} has 2 stages per rank (got --chunks {a.chunks})")
        print({"zbv": vshape.zbv, "dualpipev": vshape.dualpipev}[a.name](a.stages, a.microbatches))
        return 0

    v = a.chunks if a.chunks is not None else (2 if a.name == "interleaved-1f1b" else 1)
    print(make_schedule(a.name, a.stages, a.microbatches, v))
    return 0


def _simulate(a) -> int:
    from .flow import forward_flow
    from .simulate import run

    fwd = _floats(a.forward, "--forward")
    v = a.chunks if a.chunks is not None else (2 if a.name == "interleaved-1f1b" else 1)
    if a.name == "forward":
        if isinstance(fwd, float):
            if a.stages is None:
                raise ValueError("give --stages P when --forward is a single number")
            fwd = [fwd] * a.stages
        tl = forward_flow(fwd, a.microbatches, hop_latency=a.hop_latency, buffer_size=a.buffer_size)
    else:
        if isinstance(fwd, float) and a.stages is None:
            raise ValueError("give --stages P when --forward is a single number")
        bwd = (
            _floats(a.backward, "--backward")
            if a.backward
            else (2 * fwd if isinstance(fwd, float) else [2 * x for x in fwd])
        )
        w = None
        if a.name == "zb-h1":
            if a.weight:
                w = _floats(a.weight, "--weight")
            else:
                w = bwd / 2 if isinstance(bwd, float) else [x / 2 for x in bwd]
                bwd = w
        act = _floats(a.activation_bytes, "--activation-bytes") if a.activation_bytes else None
        tl = run(
            a.name,
            fwd,
            bwd,
            w,
            microbatches=a.microbatches,
            stages=a.stages,
            chunks=v,
            hop_latency=a.hop_latency,
            buffer_size=a.buffer_size,
            activation_bytes=act,
        )
    print(f"schedule: {a.name}  ranks: {tl.num_stages}  microbatches: {tl.num_microbatches}  chunks: {v}")
    print(f"makespan: {tl.makespan:g}")
    print(f"bubble: {tl.bubble_ratio:.6f}")
    print("idle per rank: " + " ".join(f"{x:g}" for x in tl.idle_per_stage))
    if tl.blocked:
        print("blocked per rank: " + " ".join(f"{x:g}" for x in tl.blocked_per_stage))
    if tl.peak_in_flight is not None:
        print("peak in-flight per rank: " + " ".join(str(x) for x in tl.peak_in_flight))
        print("peak memory per rank: " + " ".join(f"{x:g}" for x in tl.peak_memory))
    if a.trace:
        from .trace import write_chrome_trace

        write_chrome_trace(tl, a.trace)
        print(f"trace: {a.trace}")
    if a.plot or a.memory_plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from .plot import gantt, memory_over_time

        if a.plot:
            ax = gantt(tl)
            ax.figure.savefig(a.plot, dpi=120, bbox_inches="tight")
            plt.close(ax.figure)
            print(f"plot: {a.plot}")
        if a.memory_plot:
            if tl.memory is None:
                raise ValueError("--memory-plot needs a schedule simulation (not 'forward')")
            ax = memory_over_time(tl, unit="B")
            ax.figure.savefig(a.memory_plot, dpi=120, bbox_inches="tight")
            plt.close(ax.figure)
            print(f"memory plot: {a.memory_plot}")
    return 0


def _partition(a) -> int:
    from . import partition as pt

    if (a.layer_costs is None) == (a.layers is None):
        raise ValueError("give exactly one of --layer-costs or --layers")
    if a.layer_costs is not None:
        costs = _floats(a.layer_costs, "--layer-costs")
        costs = [costs] if isinstance(costs, float) else costs
    else:
        V.count(a.layers, "--layers")
        costs = [a.layer_cost] * a.layers
    speed = _floats(a.speed, "--speed") if a.speed else None
    mem = _floats(a.mem, "--mem") if a.mem else None
    cap = _floats(a.mem_cap, "--mem-cap") if a.mem_cap else None
    if a.method != "min-max" and (speed is not None or mem is not None or cap is not None):
        raise ValueError("--speed/--mem/--mem-cap are supported by --method min-max only")
    if a.method == "min-max":
        counts = pt.min_max_partition(
            costs, a.stages, head_cost=a.head, tail_cost=a.tail, mem=mem, mem_cap=cap, speed=speed
        )
    elif a.method == "water-fill":
        if len(set(costs)) != 1:
            raise ValueError("water-fill needs uniform layer costs (use --layers/--layer-cost)")
        counts = pt.water_fill(len(costs), costs[0], a.head, a.tail, a.stages)
    elif a.method == "uniform":
        counts = pt.uniform_partition(len(costs), a.stages)
    else:
        if a.head or a.tail:
            raise ValueError("--method spread ignores head/tail costs; drop --head/--tail")
        counts = pt.spread_balance_partition(costs, a.stages)
    loads = pt.stage_loads(costs, counts, head_cost=a.head, tail_cost=a.tail, speed=speed)
    print("layers per stage: " + " ".join(str(c) for c in counts))
    print("stage times: " + " ".join(f"{x:g}" for x in loads))
    print(f"slowest stage: {max(loads):g}")
    return 0


def _flags(a) -> int:
    from .launch import launch_flags

    parts = [p for p in a.layers.replace(" ", ",").split(",") if p]
    if not parts or not all(p.isdigit() for p in parts):
        raise ValueError(f"layers: expected whole numbers separated by commas, got {a.layers!r}")
    print(
        launch_flags([int(p) for p in parts], placement=a.placement, schedule=a.schedule, ranks=a.ranks)[
            "text"
        ]
    )
    return 0


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    try:
        return {"order": _order, "simulate": _simulate, "partition": _partition, "flags": _flags}[a.cmd](a)
    except (ValueError, TypeError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
