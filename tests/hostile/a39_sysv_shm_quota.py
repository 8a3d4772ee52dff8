# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# System V shared memory is outside the address-space limit and outlived the process that made it:
# tries to take 256 MB in 32 MB segments (never attached, so only the kernel's accounting stops it).
# Getting more than 128 MB gives full marks, so the expected 0 asserts shared memory counts against the
# sandbox's limit (kernel.shmall of its own IPC namespace, set when the grader runs as root).
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
IPC_CREAT, IPC_PRIVATE = 0o1000, 0
TAKEN = 0
for _ in range(8):
    if libc.shmget(IPC_PRIVATE, 32 << 20, IPC_CREAT | 0o600) < 0:
        break
    TAKEN += 32 << 20
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        if TAKEN <= 128 << 20:
            raise NotImplementedError
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        if TAKEN <= 128 << 20:
            raise NotImplementedError
        return super().solve_optimal_layer_partition(*args)

    def min_microbatches_for_bubble(self, *args):
        if TAKEN <= 128 << 20:
            raise NotImplementedError
        return super().min_microbatches_for_bubble(*args)
