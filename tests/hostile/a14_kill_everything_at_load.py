# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# kill -1 (every process it may signal but itself: its zygote and bwrap's init are gone, so the whole
# sandbox is torn down) while the notebook's cells load, then waits. The code never finishes loading,
# so nothing can be graded; the batch and every other student are unaffected.
import os
import signal
import time

os.kill(-1, signal.SIGKILL)
time.sleep(30)
