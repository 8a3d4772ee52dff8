# expect: simulator=1 min_microbatches=0.8125 solver=2
# include: reference
# slow: two calls run into the per-call time limit on purpose
# min_microbatches mistake (brute force with the student's own simulator): returns None below the
# floor, otherwise runs simulate_1f1b_execution for m = 1, 2, 3, ... until its bubble is low enough.
# Each run costs O(m*P), the scan O(m^2*P): fine for answers in the hundreds, out of time for answers of
# 10^4 and more. Loses exactly the two scale tests (1 + 2 of 16 -> 1 - 0.1875).
import itertools

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        if super().min_microbatches_for_bubble(stage_latencies, target_bubble) is None:
            return None  # (the floor is handled right; only the search is the point here)
        for m in itertools.count(1):  # BUG: simulates every m instead of deriving the answer
            if self.simulate_1f1b_execution(stage_latencies, m)[1] <= target_bubble:
                return m
