# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# Correct but slow-ish: the seed's greedy in plain Python, O(L*P) (scan every stage for each layer).
# About 0.25 s at 10^4 layers / 256 stages on the reference machine: inside the per-call limit.
# (Validation is the reference's: the override calls it first.)

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
        counts = [1] * num_stages
        for _ in range(total_layers - num_stages):  # a full scan of the stages for every layer
            best = 0
            for s in range(1, num_stages):
                if fixed[s] + counts[s] * layer_cost < fixed[best] + counts[best] * layer_cost:
                    best = s
            counts[best] += 1
        return counts
