# expect: simulator=0 min_microbatches=0 solver=0
# Null implementation: always raises ValueError. Every invalid input "is rejected", but the validation
# tests also call with valid input, which must not raise (before issue 12 this earned the validation
# tests: 0.125 + 0.25).
# (min_microbatches as well: its validation test also asks for an answer on valid input.)


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        raise ValueError("invalid input")

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        raise ValueError("invalid input")

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        raise ValueError("invalid input")
