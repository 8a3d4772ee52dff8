# expect: simulator=0 min_microbatches=1 solver=2
# include: reference
# An infinite loop in simulate only: each simulator test times out (per-call limit), the worker is
# restarted, and the solver (the reference) still gets every point.
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        while True:
            pass
