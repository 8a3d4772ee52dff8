# expect: simulator=0.5625 min_microbatches=1 solver=2
# include: reference
# Simulator mistake: total_time is right, but the bubble is its m -> infinity limit
# 1 - sum(t) / (P * max(t)) (the share of time the non-bottleneck stages idle in steady state), which
# ignores the fill and drain. Half the contract right earns half the core: the total_time part of every
# core test (6 of 12 weight units); of the edge tests it keeps P = 1 (the limit is 0 there, as it should
# be), all-zero latencies, not-modified, float types and validation (3.5 of 4 minus m = 1 and the
# tuple/numpy test, whose bubbles are wrong: 3 of 4). 9 of 16 = 0.5625 of 1 (1.125 of 2 before issue 22
# halved the simulator item; before issue 12: 0.1875, all-or-nothing per test across both returned values).

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        total, _ = super().simulate_1f1b_execution(stage_latencies, num_microbatches)
        lat = [float(t) for t in stage_latencies]
        if total == 0:
            return 0.0, 0.0
        return total, 1.0 - sum(lat) / (len(lat) * max(lat))  # BUG: the m -> infinity limit
