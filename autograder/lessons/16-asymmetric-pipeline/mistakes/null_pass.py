# expect: simulator=0 min_microbatches=0 solver=0
# Null implementation: every method is `pass` (returns None; for min_microbatches, None is right only
# for unreachable targets, and every test that has one also asks for an answer on a reachable one).
# Nothing is computed, so no test may give credit: the core tests need the values, and every edge test also asks for a right total_time /
# a valid partition on an ordinary case (before issue 12, not modifying the input earned 0.0625).


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        pass

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        pass

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        pass
