# expect: simulator=0 min_microbatches=0 solver=0
# Null implementation: every method returns an empty list.


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        return []

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        return []

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        return []
