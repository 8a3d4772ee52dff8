# expect: simulator=0 min_microbatches=0 solver=0
# A reply whose parsing costs the grader, not the student: every call is answered straight on the
# result channel with 48 MB of nested empty lists (16 million JSON values, inside the old 64 MB
# message cap). Parsing that in the grader held the GIL for many seconds, so students graded at the
# same time hit their call timeouts. The grader now refuses it from the length prefix alone.
# tests/test_hostile.py::test_honest_students_beside_a_flooding_submission_keep_their_scores grades
# honest students beside it.
import os
import socket
import stat
import struct

FLOOD = b"[" + b"[]," * 16_000_000 + b"[]]"


def _flood():
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd <= 2 or not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
            chan = socket.socket(fileno=os.dup(fd))
            chan.sendall(struct.pack("!I", len(FLOOD)) + FLOOD)
        except OSError:
            pass


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, *args, **kwargs):
        _flood()
        raise NotImplementedError

    def solve_optimal_layer_partition(self, *args, **kwargs):
        _flood()
        raise NotImplementedError
