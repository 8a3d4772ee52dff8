# expect: simulator=1 min_microbatches=0.75 solver=2
# include: reference
# min_microbatches mistake (no floor): the right formula ceil(X) for reachable targets, but never returns
# None: below the floor 1 - mean/max the coefficient of m is negative, X is negative and max(1, ceil(X))
# answers 1. Loses the either-side-of-the-floor test (3 of 16), the constant-bubble test, whose
# [0, 5, 0] with target 0.5 is unreachable, and the return-type test, which asks for None itself on an
# unreachable target (0.5 + 0.5 of 16): 12 of 16 = 0.75.
import math

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        answer = super().min_microbatches_for_bubble(stage_latencies, target_bubble)  # (its validation)
        if answer is not None:
            return answer
        lat = [float(v) for v in stage_latencies]
        total, top, p, keep = math.fsum(lat), max(lat), len(lat), 1.0 - target_bubble
        slope = total - keep * p * top
        if slope == 0:
            return 1
        return max(1, math.ceil(keep * p * (total - top) / slope))  # BUG: a negative slope means "never"
