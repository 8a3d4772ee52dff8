# expect: simulator=0 solver=0
# include: reference
# System V IPC through ctypes: leaves a shared memory segment, a message queue and a semaphore set
# with fixed keys, holding a secret, for the next submission graded in the same sandbox
# (z98_read_sysv_ipc.py looks for them), and tries to take 256 MB of shared memory in 32 MB segments
# (memory outside the address-space limit that outlived the process). Getting more than 128 MB gives
# full marks, so the expected 0 asserts shared memory counts against the sandbox's limit.
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmat.restype = ctypes.c_void_p
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.msgsnd.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
KEY, IPC_CREAT, IPC_PRIVATE = 0x5EC7E7, 0o1000, 0
SECRET = b"secret from a38\0"


class Message(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * 16)]


shmid = libc.shmget(KEY, 4096, IPC_CREAT | 0o666)
if shmid >= 0:
    addr = libc.shmat(shmid, None, 0)
    if addr not in (None, ctypes.c_void_p(-1).value):
        ctypes.memmove(addr, SECRET, len(SECRET))
        libc.shmdt(addr)
qid = libc.msgget(KEY, IPC_CREAT | 0o666)
if qid >= 0:
    message = Message(1, SECRET)
    libc.msgsnd(qid, ctypes.byref(message), 16, 0)
libc.semget(KEY, 1, IPC_CREAT | 0o666)

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
