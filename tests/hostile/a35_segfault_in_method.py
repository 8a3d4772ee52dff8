# expect: simulator=0 min_microbatches=1 solver=2
# include: reference
# A segmentation fault (ctypes reads address 8) inside simulate: that call fails with a clear message,
# the worker is restarted, the solver is graded in full.
import ctypes

_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        return ctypes.c_long.from_address(8).value
