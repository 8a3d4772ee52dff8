# expect: stage_times=2 partition=1 scheduling=2 frontier=1
# include: reference
# partition mistake: one greedy pass that closes a stage as soon as it reaches the average load (a
# common heuristic) instead of searching the bottleneck. (Validation is the reference's: it is called
# first.)
import itertools
# Issue 12, credit per part: its counts are always a valid partition, so it earns the partition part
# (1 of 3) of the three core tests: 0.5 -> 1 (the bottleneck part, 2 of 3, is never optimal).

_reference_partition = min_max_partition


def min_max_partition(layer_costs, num_stages):
    _reference_partition(layer_costs, num_stages)  # the reference's checks (ValueError)
    prefix = list(itertools.accumulate((float(v) for v in layer_costs), initial=0.0))
    P, L = int(num_stages), len(prefix) - 1
    # BUG: greedy against the average, no search for the smallest feasible bottleneck
    target, counts, start = prefix[-1] / P, [], 0
    for p in range(P - 1):
        end = start + 1
        while end < L - (P - 1 - p) and prefix[end] - prefix[start] < target:
            end += 1
        counts.append(end - start)
        start = end
    return counts + [L - start]
