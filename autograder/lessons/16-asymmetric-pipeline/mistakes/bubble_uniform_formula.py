# expect: simulator=0.625 min_microbatches=1 solver=2
# include: reference
# Simulator mistake: total_time is right, but the bubble is the uniform-stage formula (P-1)/(m+P-1)
# whatever the latencies. Credit per returned value (issue 12): the total_time part of every core test
# (3 + 1 + 2) and the bubble part of the uniform-stage test (1) = 7 of 12; edge tests m = 1 and P = 1
# (where the formula happens to agree), not-modified, float types and validation: 0.5 * 4 + 1 = 3 of 4.
# 10 of 16 = 0.625 of 1 (1.25 of 2 before issue 22; 0.625 of 2 when a wrong bubble cost the whole of each
# non-uniform test). Fails
# all-zero latencies (a non-zero bubble) and the tuple/numpy test (wrong bubble).

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        total, _ = super().simulate_1f1b_execution(stage_latencies, num_microbatches)
        p, m = len(stage_latencies), num_microbatches
        return total, (p - 1) / (m + p - 1)  # BUG: only true when all stages take the same time
