# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# Correct alternative in floating point: the floor test 1 - sum/(P*max) < target, then an exponential and
# binary search over m on the closed-form bubble 1 - m*sum/(P*(sum + (m-1)*max)), all in floats. The
# hidden cases keep targets 1e-9 from the floor and thresholds 0.01 from integers (and allow 1e-6 on
# answers above 10^6), so this earns every point: the rules are fair to a sound float method.
import math

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        super().min_microbatches_for_bubble(stage_latencies, target_bubble)  # the reference's checks
        lat = [float(v) for v in stage_latencies]
        total, top, p = math.fsum(lat), max(lat), len(lat)
        if top == 0:
            return 1

        def bubble(m):
            return 1.0 - m * total / (p * (total + (m - 1) * top))

        if total == top:  # one busy stage: the bubble does not depend on m
            return 1 if bubble(1) <= target_bubble else None
        if 1.0 - total / (p * top) >= target_bubble:  # at or below the floor: never reached
            return None
        hi = 1
        while bubble(hi) > target_bubble:
            hi *= 2
        lo = hi // 2  # bubble(lo) > target (or lo = 0)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if bubble(mid) <= target_bubble:
                hi = mid
            else:
                lo = mid
        return hi
