# expect: stage_times=1.5 partition=2 scheduling=2 frontier=1
# include: reference
# stage_times mistake: the imbalance ratio is max/min instead of max/mean. (The whole function is
# redefined, so that its `def` can also be pasted into the notebook's cell on its own.)
# Issue 12, credit per returned value: the stage times are right, so the value tests give their
# times half (1.5 + 0.5 of 8 weight units); the type and not-modified tests only ask for right times
# as plausible core behaviour: 1 -> 1.5.


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
    if sum(counts) != len(costs):
        raise ValueError(f"partition 共 {sum(counts)} 层，但 layer_costs 有 {len(costs)} 层")
    times, start = [], 0
    for c in counts:
        times.append(float(sum(costs[start:start + c])))
        start += c
    low = min(times)
    ratio = max(times) / low if low > 0 else 1.0  # BUG: max/min, not max/mean
    return times, float(ratio)
