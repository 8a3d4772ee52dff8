# expect: stage_times=2 partition=1 scheduling=2 frontier=1
# include: reference
# partition mistake: splits by layer count (water-filling by count), ignoring the per-layer costs --
# the case study's 3-3-...-3. (Validation is the reference's: it is called first.)
# Issue 12, credit per part: its counts are always a valid partition, so it earns the partition part
# (1 of 3) of the three core tests: 0.5 -> 1 (the bottleneck part, 2 of 3, is never optimal).

_reference_partition = min_max_partition


def min_max_partition(layer_costs, num_stages):
    _reference_partition(layer_costs, num_stages)  # the reference's checks (ValueError)
    P, L = int(num_stages), len(layer_costs)
    return [L // P + (1 if i < L % P else 0) for i in range(P)]  # BUG: equal counts, not equal time
