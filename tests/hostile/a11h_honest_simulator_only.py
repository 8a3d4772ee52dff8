# expect: simulator=1 min_microbatches=0 solver=0
# include: reference
# An honest submission that finished only the simulator (the solver and min_microbatches are still the
# release's stubs).
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(self, *args):
        raise NotImplementedError("TODO")

    def min_microbatches_for_bubble(self, *args):
        raise NotImplementedError("TODO")
