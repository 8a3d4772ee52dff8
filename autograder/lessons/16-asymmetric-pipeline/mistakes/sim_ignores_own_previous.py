# expect: simulator=0.0312 min_microbatches=1 solver=2
# include: reference
# Simulator mistake: a stage starts microbatch k as soon as stage p-1 has finished it, as if a stage
# could run several microbatches at once (ignores its own previous microbatch), so total_time = sum(t).
# Right only for m = 1 (and all-zero latencies): keeps the m = 1 test, 0.5 of 16. Its core values are
# all wrong (the bubble follows the wrong total), so since issue 12 the other edge tests, which also ask
# for a right total on an ordinary case, give nothing (before: 0.375 for all-zero, not-modified, float
# types and validation). (Validation is the reference's: the override calls it first.)

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        super().simulate_1f1b_execution(stage_latencies, num_microbatches)  # the reference's checks (ValueError)
        lat, m = [float(v) for v in stage_latencies], int(num_microbatches)
        finish = [0.0] * m  # finish[k]: when the previous stage finished microbatch k
        for t in lat:
            finish = [f + t for f in finish]  # BUG: no wait for the stage's own microbatch k-1
        total = finish[-1]
        if total == 0:
            return 0.0, 0.0
        return total, 1.0 - m * sum(lat) / (len(lat) * total)
