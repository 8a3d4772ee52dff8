# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# System V IPC through ctypes: leaves a shared memory segment, a message queue and a semaphore set
# with fixed keys, holding a secret, for the next submission graded in the same sandbox
# (z98_read_sysv_ipc.py looks for them). Its own grade is unaffected.
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmat.restype = ctypes.c_void_p
libc.shmdt.argtypes = [ctypes.c_void_p]
libc.msgsnd.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
KEY, IPC_CREAT = 0x5EC7E7, 0o1000
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
