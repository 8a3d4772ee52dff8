# expect: simulator=0 min_microbatches=0 solver=0
# include: reference
# Graded after a00_leave_files_in_tmp.py (sorted order; the same zygote may have run it): looks for
# the files a00 left. Finding any gives full marks, so the expected 0 asserts each submission starts
# with an empty /tmp and scratch directory.
import os

FOUND = []
for top in ("/tmp", os.path.expanduser("~"), "/dev/shm"):
    for root, _dirs, files in os.walk(top):
        FOUND += [os.path.join(root, f) for f in files if "leak" in f]
_Reference = AsymmetricPipelineScheduler  # noqa: F821


class AsymmetricPipelineScheduler(_Reference):
    def simulate_1f1b_execution(self, *args):
        if not FOUND:
            raise NotImplementedError
        return super().simulate_1f1b_execution(*args)

    def solve_optimal_layer_partition(self, *args):
        if not FOUND:
            raise NotImplementedError
        return super().solve_optimal_layer_partition(*args)

    def min_microbatches_for_bubble(self, *args):
        if not FOUND:
            raise NotImplementedError
        return super().min_microbatches_for_bubble(*args)
