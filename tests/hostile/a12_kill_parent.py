# expect: simulator=0 min_microbatches=1 solver=2
# include: reference
# simulate kills its parent (the zygote) with SIGKILL on every call, then waits to be killed in turn
# (it would otherwise race the sandbox's teardown to answer). That call fails, the sandbox is
# restarted, and the solver (the reference) is still graded in full.
import os
import signal
import time

_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(30)
        return super().simulate_1f1b_execution(*args)
