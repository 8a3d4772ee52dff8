# expect: stage_times=2 partition=2 scheduling=2 frontier=0.5
# include: reference
# frontier mistake: activation memory always uses min(m, P) in flight, so GPipe's memory is not charged
# for all m microbatches (every schedule is costed as 1F1B).

_reference_frontier = throughput_latency_frontier


def throughput_latency_frontier(*args, schedule="1f1b", **kwargs):
    if schedule not in ("1f1b", "gpipe"):
        raise ValueError(f"schedule 只能是 '1f1b' 或 'gpipe'，收到 {schedule!r}")
    return _reference_frontier(*args, schedule="1f1b", **kwargs)  # BUG: k = min(m, P) for GPipe too
