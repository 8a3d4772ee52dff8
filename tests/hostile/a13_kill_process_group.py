# expect: simulator=1 min_microbatches=1 solver=0
# include: reference
# solve kills its own process group and then everything it may signal (kill -1): the call fails, the
# sandbox is restarted, the simulator (the reference) is graded in full.
import os
import signal

_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(self, *args):
        try:
            os.killpg(0, signal.SIGKILL)
        finally:
            os.kill(-1, signal.SIGKILL)
