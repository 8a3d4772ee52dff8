# expect: simulator=1 min_microbatches=1 solver=0
# include: reference
# A thread storm in solve (threads that spin forever; the process limit counts threads): the solver
# call times out, the simulator is graded in full.
import threading

_Reference = AsymmetricPipelineScheduler  # noqa: F821


def spin():
    while True:
        pass


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(self, *args):
        while True:
            try:
                threading.Thread(target=spin, daemon=True).start()
            except RuntimeError:
                pass
