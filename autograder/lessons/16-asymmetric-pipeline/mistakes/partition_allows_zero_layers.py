# expect: simulator=1 min_microbatches=1 solver=1.625
# include: reference
# Solver mistake: water-filling from zero layers per stage, so a stage whose fixed cost alone exceeds
# the others' load ends with 0 layers. Right whenever no stage needs the ">= 1" floor; loses the
# heavy-ends test (2 of 16) and the layers == stages case of the degenerate test (1 of 16).
# (Validation is the reference's: the override calls it first.)
import heapq

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        args = (total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages)
        super().solve_optimal_layer_partition(*args)  # the reference's checks (ValueError)
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
