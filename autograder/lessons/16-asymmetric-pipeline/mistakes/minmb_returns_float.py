# expect: simulator=1 min_microbatches=0.9688 solver=2
# include: reference
# min_microbatches mistake: the right m, returned as a float (17.0): the contract asks for an int. Loses
# only the return-type test (0.5 of 16 -> 1 - 0.03125); the value tests accept an integral float.

_Reference = AsymmetricPipelineScheduler


class AsymmetricPipelineScheduler(_Reference):
    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        answer = super().min_microbatches_for_bubble(stage_latencies, target_bubble)
        return None if answer is None else float(answer)  # BUG: m is a count, an int
