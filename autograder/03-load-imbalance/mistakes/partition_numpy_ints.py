# expect: stage_times=2 partition=0.5 scheduling=2 frontier=1
# include: reference
# partition mistake: right counts, returned as numpy int64 values instead of Python ints (the contract
# asks for Python int).
import numpy as np

_reference_partition = min_max_partition


def min_max_partition(layer_costs, num_stages):
    counts = _reference_partition(layer_costs, num_stages)
    return list(np.array(counts, dtype=np.int64))  # BUG: elements are numpy.int64
