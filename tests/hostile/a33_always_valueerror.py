# expect: simulator=0.125 solver=0.25
# Honest baseline for a32: raising ValueError on every call passes only the validation tests.


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        raise ValueError("always")

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        raise ValueError("always")
