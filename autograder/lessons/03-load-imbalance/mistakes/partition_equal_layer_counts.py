# expect: stage_times=2 partition=0 scheduling=2 frontier=1
# include: reference
# partition mistake: splits by layer count (water-filling by count), ignoring the per-layer costs --
# the case study's 3-3-...-3. (Validation is the reference's: it is called first.)
# Issue 12 gave it the partition part (1 of 3) of the three core tests for a valid partition, and the
# P = L and P = 1 edge tests: 1 of 2. Issue 21: that credit needs an optimal partition of an ordinary
# case too, which an even split is not: 0.

_reference_partition = min_max_partition


def min_max_partition(layer_costs, num_stages):
    _reference_partition(layer_costs, num_stages)  # the reference's checks (ValueError)
    P, L = int(num_stages), len(layer_costs)
    return [L // P + (1 if i < L % P else 0) for i in range(P)]  # BUG: equal counts, not equal time
