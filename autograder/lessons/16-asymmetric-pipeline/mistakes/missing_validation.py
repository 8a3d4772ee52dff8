# expect: simulator=0.9375 min_microbatches=1 solver=1.75
# include: reference
# Correct results on valid input, but no input validation at all: loses exactly the two validation
# tests (simulator 1 of 16 -> 1 - 0.0625; solver 2 of 16 -> 2 - 0.25); min_microbatches is the reference's. Here both methods are the
# finish-time recurrence and water-filling without their checks.
import heapq
import math

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        lat = [float(v) for v in stage_latencies]  # BUG: empty, negative, NaN and infinite latencies go through
        m = num_microbatches  # BUG: 0, negative, 2.5 or "3" microbatches go through
        upstream = [0.0] * m  # finish times of microbatches 0..m-1 on the previous stage
        for t in lat:
            clock = 0.0
            for k in range(m):
                clock = max(clock, upstream[k]) + t  # own previous microbatch, then upstream's k
                upstream[k] = clock
        total = float(upstream[-1])
        if total == 0.0:
            return 0.0, 0.0
        return total, 1.0 - m * math.fsum(lat) / (len(lat) * total)

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        p, c = num_stages, layer_cost  # BUG: no check of any argument
        fixed = [0.0] * p
        if p:
            fixed[0] += s0_fixed_cost
            fixed[-1] += s_tail_fixed_cost
        counts = [1] * p
        heap = [(f + c, s) for s, f in enumerate(fixed)]
        heapq.heapify(heap)
        for _ in range(total_layers - p):
            _, s = heapq.heappop(heap)
            counts[s] += 1
            heapq.heappush(heap, (fixed[s] + counts[s] * c, s))
        return counts
