# expect: simulator=1 min_microbatches=1 solver=2
# Correct alternative: the closed form T = sum(t) + (m-1)*max(t) (exact for this forward flow), and a
# partition that merges the stages' arithmetic sequences of "next layer" times (O(L log P)).
import heapq
import itertools
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
        p, n, c = num_stages, total_layers, layer_cost
        if p < 1 or n < p or c <= 0 or s0_fixed_cost < 0 or s_tail_fixed_cost < 0:
            raise ValueError(
                "need num_stages >= 1, total_layers >= num_stages, layer_cost > 0, fixed costs >= 0"
            )
        fixed = [0.0] * p
        fixed[0] += s0_fixed_cost
        fixed[-1] += s_tail_fixed_cost
        # Stage s holding k layers would take fixed[s] + k*c; the extra layers go, one by one, to the
        # smallest such "current time": the n-p smallest entries of the merged sequences.
        sequences = [_next_layer_times(fixed[s], c, s) for s in range(p)]
        counts = [1] * p
        for _, s in itertools.islice(heapq.merge(*sequences), n - p):
            counts[s] += 1
        return counts

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        lat = [float(t) for t in stage_latencies]
        if not lat or any(not math.isfinite(t) or t < 0 for t in lat):
            raise ValueError("stage_latencies: a non-empty sequence of finite numbers >= 0")
        if isinstance(target_bubble, bool) or not isinstance(target_bubble, int | float):
            raise ValueError("target_bubble must be a number in [0, 1)")
        if not (math.isfinite(target_bubble) and 0 <= target_bubble < 1):
            raise ValueError("target_bubble must be a number in [0, 1)")
        # bubble(m) <= b  <=>  m * (sum - (1-b) P max) >= (1-b) P (sum - max), in floats
        total, top, p, keep = math.fsum(lat), max(lat), len(lat), 1.0 - target_bubble
        if top == 0:
            return 1
        slope, need = total - keep * p * top, keep * p * (total - top)
        if slope <= 0:
            return 1 if slope == 0 and need == 0 else None
        return max(1, math.ceil(need / slope))


def _next_layer_times(fixed, c, stage):
    for k in itertools.count(1):
        yield fixed + k * c, stage
