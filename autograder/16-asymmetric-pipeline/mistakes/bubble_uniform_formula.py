# expect: simulator=0.625 solver=2
# Simulator mistake: total_time is right, but the bubble is the uniform-stage formula (P-1)/(m+P-1)
# whatever the latencies. Passes the uniform-stage test (2), m = 1 and P = 1 (where the formula happens
# to agree), not-modified, float types and validation: 2 + 0.5 * 4 + 1 = 5 of 16. Fails all-zero
# latencies (returns a non-zero bubble) and every non-uniform comparison.
import heapq
import math


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        lat, m = _check(stage_latencies, num_microbatches)
        p = len(lat)
        total = sum(lat) + (m - 1) * max(lat)
        return total, (p - 1) / (m + p - 1)  # BUG: only true when all stages take the same time

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        p, n, c = num_stages, total_layers, layer_cost
        if p < 1 or n < p or c <= 0 or s0_fixed_cost < 0 or s_tail_fixed_cost < 0:
            raise ValueError(
                "need num_stages >= 1, total_layers >= num_stages, layer_cost > 0, fixed costs >= 0"
            )
        fixed = [0.0] * p
        fixed[0] += s0_fixed_cost
        fixed[-1] += s_tail_fixed_cost
        counts = [1] * p
        heap = [(f + c, s) for s, f in enumerate(fixed)]
        heapq.heapify(heap)
        for _ in range(n - p):
            _, s = heapq.heappop(heap)
            counts[s] += 1
            heapq.heappush(heap, (fixed[s] + counts[s] * c, s))
        return counts


def _check(stage_latencies, num_microbatches):
    lat = [float(t) for t in stage_latencies]
    if not lat or any(not math.isfinite(t) or t < 0 for t in lat):
        raise ValueError("stage_latencies: a non-empty sequence of finite numbers >= 0")
    if type(num_microbatches) is not int or num_microbatches < 1:
        raise ValueError("num_microbatches must be an integer >= 1")
    return lat, num_microbatches
