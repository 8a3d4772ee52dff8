# expect: simulator=0 min_microbatches=0 solver=0
# Null implementation: returns the input. The simulator hands back the latency list (a pair when there
# are two stages, so it passes the shape check and fails on the values); the solver returns
# [total_layers], which is right only for one stage (checked together with other sizes).
# min_microbatches hands back the latencies (a list, not an int).


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        return stage_latencies

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        return [total_layers]

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        return stage_latencies
