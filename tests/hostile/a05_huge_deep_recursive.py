# expect: simulator=0 min_microbatches=0 solver=0
# Results that cannot cross: a list containing itself, a structure nested 10^5 deep, 3 million items,
# a 64-bit-overflowing array, a dict with 2·10^5 keys. The worker refuses them (the call fails); nothing
# hangs and nothing else is affected.
import numpy as np


def deep(n):
    x = 0.0
    for _ in range(n):
        x = [x]
    return x


class AsymmetricPipelineScheduler:
    calls = 0

    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        kind = len(stage_latencies) % 3
        if kind == 0:
            a = [1.0]
            a.append(a)
            return a
        if kind == 1:
            return deep(100_000)
        return {str(i): float(i) for i in range(200_000)}

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        if num_stages % 2:
            return [1] * 3_000_000
        return np.ones(2_100_000, dtype=np.int64)
