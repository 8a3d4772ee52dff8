# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# Double-forks a sleeper that calls setsid and ignores SIGTERM/SIGHUP (the classic daemon), at load and
# on every solver call. Its grade is unaffected; after the batch no such process exists on the host.
import os
import signal


def daemon():
    try:
        pid = os.fork()
    except OSError:  # the process limit: no daemon this time
        return
    if pid == 0:  # the intermediate child never returns into the caller, whatever happens
        try:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                os.execv("/bin/sleep", ["sleep", "{{MARKER}}"])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


daemon()
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def solve_optimal_layer_partition(self, *args):
        daemon()
        return super().solve_optimal_layer_partition(*args)
