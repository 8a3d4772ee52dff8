# expect: simulator=1 min_microbatches=0.125 solver=2
# include: reference
# min_microbatches mistake (off by one): solves m*(sum - (1-b)*P*max) >= (1-b)*P*(sum - max) for the real
# threshold X and returns int(X), the last m that does NOT reach the target, instead of ceil(X). Right
# only where the threshold is at most 1 (clamped to 1) and, within the stated 1e-6, on the huge answers:
# keeps the huge-answer test (2 of 16); every other core test and, through their ordinary case, every
# edge test is lost: 2 of 16 = 0.125.
import math

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        if super().min_microbatches_for_bubble(stage_latencies, target_bubble) is None:
            return None
        lat = [float(v) for v in stage_latencies]
        total, top, p, keep = math.fsum(lat), max(lat), len(lat), 1.0 - target_bubble
        slope = total - keep * p * top
        if top == 0 or slope <= 0:
            return 1
        return max(1, int(keep * p * (total - top) / slope))  # BUG: rounds down, should be ceil
