# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# A correct answer that writes debug lines and a warning to stderr on every call: full marks (nbgrader
# gives 0 for any stderr output).
import sys
import warnings

_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        print("debug: simulate", args, file=sys.stderr)
        warnings.warn("just a warning", stacklevel=1)
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        print("debug: solve", args, file=sys.stderr)
        return super().solve_optimal_layer_partition(*args)
