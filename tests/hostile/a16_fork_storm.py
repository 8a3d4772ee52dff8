# expect: simulator=0 min_microbatches=1 solver=2
# include: reference
# A fork storm while loading (sleepers that exec "sleep MARKER"; the process limit stops it, the load
# goes on) and a fork bomb in simulate (every process keeps forking): the simulator times out, the
# solver is graded in full, and no process survives the batch (the test scans the host's /proc).
import os

for _ in range(500):
    try:
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", "{{MARKER}}"])
    except OSError:
        break
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        while True:
            try:
                os.fork()
            except OSError:
                pass
