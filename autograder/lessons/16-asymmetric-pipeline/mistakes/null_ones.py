# expect: simulator=0 min_microbatches=0 solver=0
# Null implementation, right type with wrong values: (1.0, 1.0) and one layer per stage. [1] * P has
# the right length and every count >= 1, which is why the partition's counts are credited only
# together with their sum; it is right when total_layers == num_stages, which the degenerate-size test
# checks together with other sizes.
# min_microbatches: always 1, right only where m = 1 suffices (checked beside an ordinary case).


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        return 1.0, 1.0

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        return [1] * num_stages

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        return 1
