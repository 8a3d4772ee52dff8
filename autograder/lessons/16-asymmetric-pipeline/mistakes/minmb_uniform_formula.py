# expect: simulator=1 min_microbatches=0.125 solver=2
# include: reference
# min_microbatches mistake: inverts the uniform-stage bubble (P-1)/(m+P-1) <= b, m = ceil((P-1)(1-b)/b),
# whatever the latencies (and never None). Right for uniform stages only: keeps that test (2 of 16); the
# edge tests' ordinary case is not uniform, so none of them: 2 of 16 = 0.125.
import math

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        super().min_microbatches_for_bubble(stage_latencies, target_bubble)  # the reference's checks
        p = len(stage_latencies)
        if target_bubble == 0:
            return 1 if p == 1 else None
        return max(1, math.ceil((p - 1) * (1 - target_bubble) / target_bubble))  # BUG: uniform only
