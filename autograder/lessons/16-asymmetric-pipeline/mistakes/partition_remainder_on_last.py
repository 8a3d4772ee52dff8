# expect: simulator=1 min_microbatches=1 solver=0.6875
# include: reference
# Solver mistake: aims every stage at the continuous optimum (sum(fixed) + L*c) / P, rounds down, and
# puts all the layers left over on the last stage, which then becomes the bottleneck (or, when rounding
# overshoots, the last stage is driven below one layer). Never optimal; with credit per part (issue 12)
# its partitions are still valid in the small, larger and largest tests (partition part, 1 + 1 + 0.5),
# not in the heavy-ends test (a stage below one layer). Fails the "layers == stages" case of the
# degenerate test; keeps the return type (1) and validation (2, the reference's, called first).
# 5.5 of 16 = 0.6875 (before: 0.375).

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
        target = (sum(fixed) + total_layers * layer_cost) / num_stages
        counts = [max(1, int((target - f) / layer_cost)) for f in fixed]
        counts[-1] += total_layers - sum(counts)  # BUG: the whole remainder lands on the last stage
        return counts
