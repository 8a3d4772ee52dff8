# expect: stage_times=2 partition=1.5 scheduling=2 frontier=1
# include: reference
# partition mistake: right counts, returned as numpy int64 values instead of Python ints (the contract
# asks for Python int).
import numpy as np
# Issue 12, credit per part: the element type belongs to the partition part (1 of 3 of each core
# test), the counts' values still reach the optimal bottleneck (2 of 3): 0.5 -> 1.5.

_reference_partition = min_max_partition


def min_max_partition(layer_costs, num_stages):
    counts = _reference_partition(layer_costs, num_stages)
    return list(np.array(counts, dtype=np.int64))  # BUG: elements are numpy.int64
