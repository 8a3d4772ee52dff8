# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# memfd_create: 100 x 15 MB held outside the address-space limit (1.5 GB on 000f3b4, whose open-file limit
# was the grader's 20 000). Full marks if more than 1 GB is held, so the expected 0 asserts the sandbox's
# cgroup charges it (or, without one, that memfd_create is denied) and the open-file limit is low.
import os

_HELD, _FDS = 0, []
try:
    for _ in range(100):
        _fd = os.memfd_create("hoard")
        _FDS.append(_fd)
        os.ftruncate(_fd, 15 << 20)
        os.pwrite(_fd, b"x" * (15 << 20), 0)
        _HELD += 15 << 20
except OSError:
    pass
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        if _HELD <= 1 << 30:
            raise NotImplementedError
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        if _HELD <= 1 << 30:
            raise NotImplementedError
        return super().solve_optimal_layer_partition(*args)

    def min_microbatches_for_bubble(self, *args):
        if _HELD <= 1 << 30:
            raise NotImplementedError
        return super().min_microbatches_for_bubble(*args)
