# expect: simulator=2 solver=1.625
# Solver mistake: water-filling from zero layers per stage, so a stage whose fixed cost alone exceeds
# the others' load ends with 0 layers. Right whenever no stage needs the ">= 1" floor; loses the
# heavy-ends test (2 of 16) and the layers == stages case of the degenerate test (1 of 16).
import heapq
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
        counts = [0] * num_stages  # BUG: should start from one layer per stage
        heap = [(f + layer_cost, s) for s, f in enumerate(fixed)]
        heapq.heapify(heap)
        for _ in range(total_layers):
            _, s = heapq.heappop(heap)
            counts[s] += 1
            heapq.heappush(heap, (fixed[s] + (counts[s] + 1) * layer_cost, s))
        return counts
