# expect: stage_times=1.75 partition=2 scheduling=2 frontier=1
# include: reference
# stage_times mistake: a partition whose sum differs from the number of layers is not rejected (the
# slices silently stop early).


def stage_times(layer_costs, partition):
    import math
    import numbers

    costs = []
    for v in layer_costs:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ValueError(f"layer_costs 只能包含数字，收到 {v!r}")
        v = float(v)
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"layer_costs 必须是有限的非负数，收到 {v}")
        costs.append(v)
    if not costs:
        raise ValueError("layer_costs 不能为空")
    counts = []
    for c in partition:
        if isinstance(c, bool) or not isinstance(c, numbers.Integral) or c < 1:
            raise ValueError(f"partition 的每一项都必须是 ≥ 1 的整数，收到 {c!r}")
        counts.append(int(c))
    if not counts:
        raise ValueError("partition 不能为空")
    # BUG: no check that sum(partition) == len(layer_costs): the slices below silently stop early
    times, start = [], 0
    for c in counts:
        times.append(float(sum(costs[start:start + c])))
        start += c
    mean = sum(times) / len(times)
    ratio = max(times) / mean if mean > 0 else 1.0
    return times, float(ratio)
