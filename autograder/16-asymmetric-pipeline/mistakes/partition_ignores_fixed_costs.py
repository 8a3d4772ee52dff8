# expect: simulator=2 solver=0.5
# include: reference
# Solver mistake: a greedy that balances layer counts and ignores the head/tail fixed costs (an even
# split). Wrong on every core case (they all have fixed costs); keeps the return type, the degenerate
# sizes and validation (the reference's, called first): 4 of 16.

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
