# expect: simulator=1 min_microbatches=0.875 solver=2
# include: reference
# slow: one call runs into the per-call time limit on purpose
# min_microbatches mistake (brute force): knows the floor (returns None below it) and the closed form
# T(m) = sum(t) + (m-1)*max(t), but tries m = 1, 2, 3, ... until the bubble is low enough instead of
# solving for m. Fast enough for answers up to 2*10^5 (about 0.1 s); near the floor the answer is in the
# hundreds of millions and the scan runs out of the 2 s per call: loses exactly the huge-answer test
# (2 of 16 -> 1 - 0.125). (Validation is the reference's: the override calls it first.)
import itertools

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        if super().min_microbatches_for_bubble(stage_latencies, target_bubble) is None:
            return None  # (the floor is handled right; only the search is the point here)
        lat = [float(v) for v in stage_latencies]
        total, top, p = sum(lat), max(lat), len(lat)
        if top == 0:
            return 1
        for m in itertools.count(1):  # BUG: a linear search where a formula gives m directly
            if 1.0 - m * total / (p * (total + (m - 1) * top)) <= target_bubble:
                return m
