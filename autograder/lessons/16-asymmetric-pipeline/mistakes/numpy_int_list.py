# expect: simulator=1 min_microbatches=1 solver=1.875
# include: reference
# Right partition, wrong element type: a list of numpy.int64 (the contract asks for Python ints).
# Loses only the solver's return-type test (1 of 16 -> 2 - 0.125).
import numpy as np

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        counts = np.array(
            super().solve_optimal_layer_partition(
                total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
            ),
            dtype=np.int64,
        )
        return list(counts)  # BUG: elements stay numpy.int64
