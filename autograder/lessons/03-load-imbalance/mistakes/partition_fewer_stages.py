# expect: stage_times=2 partition=1.125 scheduling=2 frontier=1
# include: reference
# partition mistake: the bisection is right, but when the greedy pass needs fewer than P stages the
# result is not split up to exactly P stages. Here: the reference's answer gives the optimal bottleneck
# (the bisection's result), and the greedy pass at that bottleneck is returned as it is.
import itertools

_reference_partition = min_max_partition


def min_max_partition(layer_costs, num_stages):
    best = _reference_partition(layer_costs, num_stages)
    prefix = list(itertools.accumulate((float(v) for v in layer_costs), initial=0.0))
    ends = list(itertools.accumulate(best))
    cap = max(prefix[e] - prefix[e - c] for e, c in zip(ends, best, strict=True))
    L, counts, start = len(prefix) - 1, [], 0
    while start < L:  # the greedy pass: as many layers per stage as fit under cap
        end = start + 1
        while end < L and prefix[end + 1] - prefix[start] <= cap:
            end += 1
        counts.append(end - start)
        start = end
    return counts  # BUG: fewer than num_stages stages when the greedy pass needs fewer
