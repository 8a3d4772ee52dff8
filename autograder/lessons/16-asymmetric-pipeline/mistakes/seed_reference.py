# expect: simulator=0.9062 min_microbatches=0 solver=1.75
# The seed's original reference, unchanged apart from formatting. Its forward-flow numbers are right,
# but: it validates nothing (simulator loses the validation test, 1 of 16; solver loses it, 2 of 16,
# e.g. total_layers < num_stages returns [1] * num_stages, which breaks conservation instead of raising),
# and all-zero latencies divide 0 by 0 (simulator loses 0.5 of 16). With P = 1 it overwrites the head
# cost with the tail cost; the returned partition [L] is still the only valid one, so no test sees it.
# Its O(L*P) greedy with numpy.argmin takes about 0.5 s at 10^4 layers / 256 stages: inside the limit.
# The seed has no min_microbatches_for_bubble (the task is the lesson's, issue 22): 0 on that item;
# simulator 14.5 of 16 of 1 point = 0.90625.
import numpy as np


class AsymmetricPipelineScheduler:
    def __init__(self):
        pass

    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        P = len(stage_latencies)
        m = num_microbatches
        stage_available = [0.0] * P
        mb_ready = [[0.0] * P for _ in range(m)]
        for mb in range(m):
            for p in range(P):
                data_ready = mb_ready[mb][p] if p == 0 else mb_ready[mb][p]
                start_time = max(stage_available[p], data_ready)
                cost = stage_latencies[p]
                end_time = start_time + cost
                stage_available[p] = end_time
                if p + 1 < P:
                    mb_ready[mb][p + 1] = end_time
        total_time = stage_available[-1]
        useful_work = sum(stage_latencies) * m
        total_cluster_capacity = P * total_time
        bubble_ratio = 1.0 - (useful_work / total_cluster_capacity)
        return total_time, max(0.0, bubble_ratio)

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        P = num_stages
        fixed_costs = [0.0] * P
        fixed_costs[0] = s0_fixed_cost
        fixed_costs[-1] = s_tail_fixed_cost
        layers = [1] * P
        remaining_layers = total_layers - P
        for _ in range(remaining_layers):
            current_latencies = [fixed_costs[i] + layers[i] * layer_cost for i in range(P)]
            min_idx = int(np.argmin(current_latencies))
            layers[min_idx] += 1
        return layers
