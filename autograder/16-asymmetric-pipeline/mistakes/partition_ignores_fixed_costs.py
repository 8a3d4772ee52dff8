# expect: simulator=2 solver=0.5
# Solver mistake: a greedy that balances layer counts and ignores the head/tail fixed costs (an even
# split). Wrong on every core case (they all have fixed costs); keeps the return type, the degenerate
# sizes and validation: 4 of 16.
import math


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
        counts = [1] * num_stages
        for _ in range(total_layers - num_stages):
            counts[counts.index(min(counts))] += 1  # BUG: least layers, not least time
        return counts
