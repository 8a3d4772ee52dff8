# expect: simulator=0 min_microbatches=0 solver=0
# numpy subclasses with always-true comparisons and lying tolist/__iter__/__len__/dtype/size. The
# real data underneath is wrong (-1 everywhere, an empty int array), and that is all that crosses
# (nothing right returned: 0, as for a01).
import numpy as np


class LiarArray(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(other), dtype=bool) if np.ndim(other) else True

    def tolist(self):
        return [3, 11, 11, 7]

    def __iter__(self):
        return iter([3, 11, 11, 7])

    def __len__(self):
        return 4

    @property
    def size(self):
        return 0


class LiarScalar(np.float64):
    def __eq__(self, other):
        return True

    def item(self):
        return 280.0


class LiarInt64(np.int64):
    def __eq__(self, other):
        return True

    def item(self):
        return 17


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        return LiarArray((2,), dtype=float, buffer=np.array([-1.0, -1.0]))

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        return np.zeros(0, dtype=np.int64).view(LiarArray)

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        return LiarInt64(-1)
