# expect: simulator=1.875 solver=1.75
# include: reference
# Correct results on valid input, but no input validation at all: loses exactly the two validation
# tests (simulator 1 of 16 -> 2 - 0.125; solver 2 of 16 -> 2 - 0.25). Here the reference's checking
# helpers accept anything, and the solver is the reference's without its checks.

_Reference = AsymmetricPipelineScheduler


def _latencies(values):
    return [float(v) for v in values]  # BUG: empty, negative, NaN and infinite latencies go through


def _count(value, what):
    return value  # BUG: 0, negative, 2.5 or "3" microbatches go through


class AsymmetricPipelineScheduler(_Reference):
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
