# expect: simulator=0 min_microbatches=1 solver=2
# include: reference
# sys.exit() inside simulate: recorded as that call's failure (SystemExit); the solver is graded in full.
import sys

_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        sys.exit(0)
