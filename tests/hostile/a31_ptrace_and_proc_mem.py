# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# Tries to read and write the zygote's memory through /proc/<ppid>/mem, to ptrace it, to read its
# environment and open file descriptors, and to open the control socket by fd number. Any success gives
# full marks: the zygote is not dumpable and the child has no capabilities.
import ctypes
import os
import stat

GOT = []
ppid = os.getppid()
for path, mode in (
    (f"/proc/{ppid}/mem", "r+b"),
    (f"/proc/{ppid}/environ", "rb"),
    (f"/proc/{ppid}/maps", "rb"),
):
    try:
        with open(path, mode) as fh:
            if fh.read(1):
                GOT.append(path)
    except OSError:
        pass
try:
    if os.listdir(f"/proc/{ppid}/fd"):
        GOT.append("fd")
except OSError:
    pass
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(16, ppid, None, None) == 0:  # PTRACE_ATTACH
    GOT.append("ptrace")
sockets = []
for fd in range(3, 256):
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        continue
    if stat.S_ISSOCK(mode):
        sockets.append(fd)
    else:
        GOT.append(f"fd {fd}")  # anything but its own result channel (one socket) is a leak
if len(sockets) != 1:
    GOT.append(f"sockets {sockets}")
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        if not GOT:
            raise NotImplementedError
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        if not GOT:
            raise NotImplementedError
        return super().solve_optimal_layer_partition(*args)

    def min_microbatches_for_bubble(self, *args):
        if not GOT:
            raise NotImplementedError
        return super().min_microbatches_for_bubble(*args)
