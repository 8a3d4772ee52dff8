# expect: simulator=1.9375 solver=2
# Right numbers, but the simulator sorts the caller's list in place to find the bottleneck (harmless
# for the closed form, which does not depend on the order, but it changes the caller's data). Loses
# only the not-modified test (0.5 of 16 -> 2 - 0.0625).
import heapq
import math


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        lat = stage_latencies if isinstance(stage_latencies, list) else list(stage_latencies)
        for i, t in enumerate(lat):
            if not math.isfinite(t) or t < 0:
                raise ValueError("stage latencies must be finite and >= 0")
            lat[i] = float(t)  # BUG: writes into the caller's list
        if not lat:
            raise ValueError("stage_latencies must not be empty")
        m = num_microbatches
        if type(m) is not int or m < 1:
            raise ValueError("num_microbatches must be an integer >= 1")
        lat.sort()  # BUG: reorders the caller's list
        total = sum(lat) + (m - 1) * lat[-1]
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
        counts = [1] * num_stages
        heap = [(f + layer_cost, s) for s, f in enumerate(fixed)]
        heapq.heapify(heap)
        for _ in range(total_layers - num_stages):
            _, s = heapq.heappop(heap)
            counts[s] += 1
            heapq.heappush(heap, (fixed[s] + counts[s] * layer_cost, s))
        return counts
