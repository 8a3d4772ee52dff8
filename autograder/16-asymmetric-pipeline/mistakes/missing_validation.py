# expect: simulator=1.875 solver=1.75
# Correct results on valid input, but no input validation at all: loses exactly the two validation
# tests (simulator 1 of 16 -> 2 - 0.125; solver 2 of 16 -> 2 - 0.25).
import heapq


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        lat = [float(t) for t in stage_latencies]
        m = num_microbatches
        total = sum(lat) + (m - 1) * max(lat) if lat else 0.0
        if total == 0:
            return 0.0, 0.0
        return total, 1.0 - m * sum(lat) / (len(lat) * total)

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        p, n, c = num_stages, total_layers, layer_cost
        fixed = [0.0] * p
        if p:
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
