# expect: simulator=0.625 solver=2
# include: reference
# Simulator mistake: total_time is right, but the bubble is the uniform-stage formula (P-1)/(m+P-1)
# whatever the latencies. Passes the uniform-stage test (2), m = 1 and P = 1 (where the formula happens
# to agree), not-modified, float types and validation: 2 + 0.5 * 4 + 1 = 5 of 16. Fails all-zero
# latencies (returns a non-zero bubble) and every non-uniform comparison.

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        total, _ = super().simulate_1f1b_execution(stage_latencies, num_microbatches)
        p, m = len(stage_latencies), num_microbatches
        return total, (p - 1) / (m + p - 1)  # BUG: only true when all stages take the same time
