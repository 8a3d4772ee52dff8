# expect: simulator=0.9688 min_microbatches=1 solver=2
# include: reference
# Right numbers, but the simulator sorts the caller's list in place to find the bottleneck (harmless
# for the result, which does not depend on the order, but it changes the caller's data). Loses only
# the not-modified test (0.5 of 16 -> 1 - 0.03125).

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        lat = stage_latencies if isinstance(stage_latencies, list) else list(stage_latencies)
        lat.sort()  # BUG: a list is sorted in place, so the caller's list is reordered
        return super().simulate_1f1b_execution(lat, num_microbatches)
