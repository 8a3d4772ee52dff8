# expect: stage_times=2 partition=0.5 scheduling=2 frontier=1
# include: reference
# partition mistake: one greedy pass that closes a stage as soon as it reaches the average load (a
# common heuristic) instead of searching the bottleneck. (Validation is the reference's: it is called
# first.)
import itertools

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
