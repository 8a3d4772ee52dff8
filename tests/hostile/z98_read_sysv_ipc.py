# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# Graded after a38_sysv_ipc_plant.py (sorted order; the same sandbox may have run it): looks for its
# shared memory segment, message queue and semaphore set. Finding any gives full marks, so the
# expected 0 asserts no System V IPC object survives into the next submission.
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
KEY = 0x5EC7E7
FOUND = libc.shmget(KEY, 0, 0) >= 0 or libc.msgget(KEY, 0) >= 0 or libc.semget(KEY, 0, 0) >= 0
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        if not FOUND:
            raise NotImplementedError
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        if not FOUND:
            raise NotImplementedError
        return super().solve_optimal_layer_partition(*args)

    def min_microbatches_for_bubble(self, *args):
        if not FOUND:
            raise NotImplementedError
        return super().min_microbatches_for_bubble(*args)
