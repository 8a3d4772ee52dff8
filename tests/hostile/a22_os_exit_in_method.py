# expect: simulator=1 min_microbatches=1 solver=0
# include: reference
# os._exit() inside solve: the process dies on each solver call, the worker is restarted, the
# simulator is graded in full.
import os

_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(self, *args):
        os._exit(7)
