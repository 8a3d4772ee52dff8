# expect: simulator=0 min_microbatches=0 solver=0
# The nbgrader trick: an IPython input transformer that blanks every later cell (the hidden tests).
# There is no IPython in the grader's worker, and no later cells to blank: the attempt simply fails
# (NameError, recorded as a cell error) and the stub below it never runs either.
get_ipython().input_transformers_cleanup.append(lambda lines: [])  # noqa: F821


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        return 280.0, 0.5

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        return [3, 11, 11, 7]
