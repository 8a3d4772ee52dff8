# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# Stops its parent (the zygote) with SIGSTOP while loading. Its own calls are answered by its own
# process, so its grade is unaffected; the stuck zygote is detected when the submission ends and the
# sandbox is restarted, so later submissions are graded normally.
import os
import signal

os.kill(os.getppid(), signal.SIGSTOP)
