# expect: simulator=1 min_microbatches=0 solver=0
# include: reference
# An honest submission that finished only the simulator (the solver is still the release's stub).
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(self, *args):
        raise NotImplementedError("TODO")
