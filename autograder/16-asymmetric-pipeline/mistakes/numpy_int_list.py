# expect: simulator=2 solver=1.875
# Right partition, wrong element type: a list of numpy.int64 (the contract asks for Python ints).
# Loses only the solver's return-type test (1 of 16 -> 2 - 0.125).
import math

import numpy as np


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        lat = [float(t) for t in stage_latencies]
        if not lat or any(not math.isfinite(t) or t < 0 for t in lat):
            raise ValueError("stage_latencies: a non-empty sequence of finite numbers >= 0")
        m = num_microbatches
        if type(m) is not int or m < 1:
            raise ValueError("num_microbatches must be an integer >= 1")
        total = sum(lat) + (m - 1) * max(lat)
        if total == 0:
            return 0.0, 0.0
        return total, 1.0 - m * sum(lat) / (len(lat) * total)

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        if (
            num_stages < 1
            or total_layers < num_stages
            or layer_cost <= 0
            or min(s0_fixed_cost, s_tail_fixed_cost) < 0
        ):
            raise ValueError(
                "need num_stages >= 1, total_layers >= num_stages, layer_cost > 0, fixed costs >= 0"
            )
        fixed = np.zeros(num_stages)
        fixed[0] += s0_fixed_cost
        fixed[-1] += s_tail_fixed_cost
        counts = np.ones(num_stages, dtype=np.int64)
        for _ in range(total_layers - num_stages):
            counts[np.argmin(fixed + counts * layer_cost)] += 1
        return list(counts)  # BUG: elements stay numpy.int64
