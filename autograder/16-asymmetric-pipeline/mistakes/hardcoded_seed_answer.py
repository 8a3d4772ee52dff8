# expect: simulator=0.125 solver=0.125
# Fakes the seed's visible checks: returns the seed scenario's answers whatever the input. It passes
# only "does not modify the input" and "returns floats" (simulator, 0.5 + 0.5 of 16) and "returns a
# list of Python ints" (solver, 1 of 16).


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        return 280.0, 0.5

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        return [3, 11, 11, 7]
