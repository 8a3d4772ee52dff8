# expect: stage_times=2 partition=0.5 scheduling=2 frontier=1
# include: reference
# partition mistake: splits by layer count (water-filling by count), ignoring the per-layer costs --
# the case study's 3-3-...-3. (Validation is the reference's: it is called first.)

_reference_partition = min_max_partition


def min_max_partition(layer_costs, num_stages):
    _reference_partition(layer_costs, num_stages)  # the reference's checks (ValueError)
    P, L = int(num_stages), len(layer_costs)
    return [L // P + (1 if i < L % P else 0) for i in range(P)]  # BUG: equal counts, not equal time
