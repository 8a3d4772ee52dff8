# expect: stage_times=2 partition=2 scheduling=2 frontier=0.5
# include: reference
# frontier mistake: 1F1B's activation memory counts min(m, P − 1) microbatches in flight (the warm-up
# forwards only) instead of min(m, P): stage 0 also holds the steady state's first forward before its
# first backward. Issue 21: a hidden case puts the memory cap between the two (P = 8: 36 ≤ 38 < 40), so
# it loses that test (weight 1 of 8): 0.875.
# Issue 27 (per-student hidden cases): the random-configurations test (weight 3) catches it only when one
# of its random 1F1B configurations puts the cap there (about one seed in ten); a fixed 1F1B configuration
# in that test now does for every student, so it loses 3 + 1 of 8 weight units: 0.5.

_reference_frontier = throughput_latency_frontier


def throughput_latency_frontier(total_work, stage_options, microbatch_options, *, overhead=0.0,
                                weight_mem=0.0, act_mem=0.0, mem_cap=None, schedule="1f1b",
                                microbatch_size=1):
    kwargs = dict(overhead=overhead, weight_mem=weight_mem, act_mem=act_mem, mem_cap=mem_cap,
                  schedule=schedule, microbatch_size=microbatch_size)
    _reference_frontier(total_work, stage_options, microbatch_options, **kwargs)  # the checks (ValueError)
    points = []
    for P in sorted(set(stage_options)):
        for m in sorted(set(microbatch_options)):
            k = min(m, P - 1) if schedule == "1f1b" else m  # BUG: min(m, P) in flight on stage 0
            if mem_cap is not None and (weight_mem + k * act_mem) / P > mem_cap:
                continue
            latency = (m + P - 1) * (total_work / P + overhead)
            points.append((P, m, m * microbatch_size / latency, latency))
    front = [x for x in points
             if not any(y[2] >= x[2] and y[3] <= x[3] and (y[2] > x[2] or y[3] < x[3]) for y in points)]
    return sorted(front, key=lambda x: (x[3], x[0], x[1]))
