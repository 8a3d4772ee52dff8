# expect: simulator=2 solver=0.375
# Solver mistake: aims every stage at the continuous optimum (sum(fixed) + L*c) / P, rounds down, and
# puts all the layers left over on the last stage, which then becomes the bottleneck (or, when rounding
# overshoots, the last stage is driven below one layer). Fails every core case and the
# "layers == stages" case of the degenerate test; keeps the return type (1) and validation (2): 3 of 16.
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
        fixed = [0.0] * num_stages
        fixed[0] += s0_fixed_cost
        fixed[-1] += s_tail_fixed_cost
        target = (sum(fixed) + total_layers * layer_cost) / num_stages
        counts = [max(1, int((target - f) / layer_cost)) for f in fixed]
        counts[-1] += total_layers - sum(counts)  # BUG: the whole remainder lands on the last stage
        return counts
