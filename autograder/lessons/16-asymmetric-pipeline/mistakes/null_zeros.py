# expect: simulator=0 min_microbatches=0 solver=0
# Null implementation, right type with wrong values: (0.0, 0.0) and a list of num_stages zeros. The
# all-zero-latency test's answer is (0.0, 0.0) too, but that test also checks an ordinary case, so a
# constant earns nothing (before issue 12 it earned 0.125 for the simulator).
# min_microbatches: 0, never a valid m.


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        return 0.0, 0.0

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        return [0] * num_stages

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        return 0
