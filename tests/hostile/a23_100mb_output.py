# expect: simulator=1 min_microbatches=1 solver=2
# include: reference
# 100 MB printed while loading (stdout and stderr) and more on every call. Output is drained and
# capped by the sandbox: it neither stalls the batch nor costs a point.
import sys

line = "x" * 1023 + "\n"
for _ in range(50 * 1024):
    sys.stdout.write(line)
    sys.stderr.write(line)
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        print("y" * 100_000)
        return super().simulate_1f1b_execution(*args)
