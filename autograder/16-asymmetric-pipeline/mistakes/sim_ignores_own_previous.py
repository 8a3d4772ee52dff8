# expect: simulator=0.375 solver=2
# Simulator mistake: a stage starts microbatch k as soon as stage p-1 has finished it, as if a stage
# could run several microbatches at once (ignores its own previous microbatch), so total_time = sum(t).
# Right only for m = 1 (and all-zero latencies); keeps m = 1, all-zero, not-modified, float types and
# validation: 0.5 * 4 + 1 = 3 of 16.
import heapq
import math


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        lat, m = _check(stage_latencies, num_microbatches)
        finish = [0.0] * m  # finish[k]: when the previous stage finished microbatch k
        for t in lat:
            finish = [f + t for f in finish]  # BUG: no wait for the stage's own microbatch k-1
        total = finish[-1]
        if total == 0:
            return 0.0, 0.0
        return total, 1.0 - m * sum(lat) / (len(lat) * total)

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
