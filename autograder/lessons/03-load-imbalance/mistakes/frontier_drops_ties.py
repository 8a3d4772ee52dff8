# expect: stage_times=2 partition=2 scheduling=2 frontier=0.9375
# include: reference
# frontier mistake: dominance without the strictness condition (y >= x in throughput and <= in latency
# is enough), so two points with identical throughput and latency knock each other out.

_reference_frontier = throughput_latency_frontier


def throughput_latency_frontier(*args, **kwargs):
    front = _reference_frontier(*args, **kwargs)
    # BUG: "not dominated" tested as "no other point is at least as good": equal twins both drop out
    return [x for x in front if not any(y is not x and y[2] >= x[2] and y[3] <= x[3] for y in front)]
