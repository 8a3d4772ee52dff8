# expect: simulator=2 solver=1.25
# Correct but exponential: tries every composition of the layers (C(L-1, P-1) of them). Fine on the
# small cases, times out on hundreds of layers: loses exactly the two large-size tests (4 + 2 of 16).
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
        best = None

        def search(prefix, left):
            nonlocal best
            if len(prefix) == num_stages - 1:
                counts = [*prefix, left]
                times = [f + n * layer_cost for f, n in zip(fixed, counts, strict=True)]
                mean = sum(times) / len(times)
                key = (max(times), sum((t - mean) ** 2 for t in times))
                if best is None or key < best[0]:
                    best = (key, counts)
                return
            for n in range(1, left - (num_stages - len(prefix) - 1) + 1):
                search([*prefix, n], left - n)

        search([], total_layers)
        return best[1]
