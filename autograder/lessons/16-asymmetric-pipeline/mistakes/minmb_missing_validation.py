# expect: simulator=1 min_microbatches=0.9375 solver=2
# include: reference
# min_microbatches mistake: right answers on valid input, no validation: negative, NaN or infinite
# latencies and targets outside [0, 1) go through (a target >= 1 gives 1, NaN compares false), an empty
# sequence returns 1. Loses exactly the validation test (1 of 16 -> 1 - 0.0625).
import math
from fractions import Fraction

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        try:
            lat = [Fraction(abs(float(v))) if math.isfinite(float(v)) else Fraction(0) for v in stage_latencies]
            keep = 1 - Fraction(min(max(float(target_bubble), 0.0), 1.0))
        except (TypeError, ValueError, OverflowError):
            return 1  # BUG: "0.3", NaN targets and the like are not rejected
        if not lat or max(lat) == 0:
            return 1
        total, top, p = sum(lat), max(lat), len(lat)
        slope, need = total - keep * p * top, keep * p * (total - top)
        if slope <= 0:
            return 1 if slope == 0 and need == 0 else None
        return max(1, math.ceil(need / slope))
