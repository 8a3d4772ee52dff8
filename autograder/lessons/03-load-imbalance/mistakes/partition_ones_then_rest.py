# expect: stage_times=2 partition=0 scheduling=2 frontier=1
# include: reference
# partition mistake: never minimises anything -- one layer on each of the first P − 1 stages and the
# rest on the last, [1]·(P−1) + [L−P+1]. Always a well-formed partition, and right when P = L or P = 1
# (the only partitions there are). Issue 21: that credit is given only when the submission's partition
# of an ordinary case is also optimal, so it earns nothing.

_reference_partition = min_max_partition


def min_max_partition(layer_costs, num_stages):
    _reference_partition(layer_costs, num_stages)  # the reference's checks (ValueError)
    P, L = int(num_stages), len(layer_costs)
    return [1] * (P - 1) + [L - P + 1]  # BUG: no minimisation at all
