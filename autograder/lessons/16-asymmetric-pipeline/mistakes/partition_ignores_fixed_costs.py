# expect: simulator=1 min_microbatches=1 solver=0.875
# include: reference
# Solver mistake: a greedy that balances layer counts and ignores the head/tail fixed costs (an even
# split). Its counts are always a valid partition (P stages, each >= 1, summing to L), so with credit
# per part (issue 12) it earns the partition part (1 of 4) of every core test: 3 of 12; never the
# bottleneck or balance parts (every core case has fixed costs). Keeps the return type, the degenerate
# sizes and validation (the reference's, called first): 4 of 4. 7 of 16 = 0.875 (before: 0.5).

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        args = (total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages)
        super().solve_optimal_layer_partition(*args)  # the reference's checks (ValueError)
        counts = [1] * num_stages
        for _ in range(total_layers - num_stages):
            counts[counts.index(min(counts))] += 1  # BUG: least layers, not least time
        return counts
