# expect: simulator=1 min_microbatches=1 solver=2
# numpy where the contract allows it: the simulator returns numpy.float64 values (accepted) and the
# solver computes with numpy but converts the counts to Python ints with .tolist().
import numpy as np


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        m = num_microbatches
        if isinstance(m, bool) or not isinstance(m, int | np.integer) or m < 1:
            raise ValueError("num_microbatches must be an integer >= 1")
        lat = np.array(stage_latencies, dtype=np.float64)  # a copy: the input is left alone
        if lat.ndim != 1 or lat.size == 0 or not np.all(np.isfinite(lat)) or np.any(lat < 0):
            raise ValueError("stage_latencies: a non-empty sequence of finite numbers >= 0")
        k = np.arange(m)
        finish = np.zeros(m)  # finish times on the previous stage (all 0 before stage 0)
        for t in lat:  # F(p,k) = max(F(p,k-1), F(p-1,k)) + t = (k+1)t + max_{j<=k}(F(p-1,j) - j t)
            finish = (k + 1) * t + np.maximum.accumulate(finish - k * t)
        total = finish[-1]
        if total == 0:
            return np.float64(0.0), np.float64(0.0)
        return total, 1.0 - m * lat.sum() / (lat.size * total)

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        if (
            num_stages < 1
            or total_layers < num_stages
            or layer_cost <= 0
            or min(s0_fixed_cost, s_tail_fixed_cost) < 0
        ):
            raise ValueError(
                "need num_stages >= 1, total_layers >= num_stages, layer_cost > 0, fixed costs >= 0"
            )
        fixed = np.zeros(num_stages)
        fixed[0] += s0_fixed_cost
        fixed[-1] += s_tail_fixed_cost
        counts = np.ones(num_stages, dtype=np.int64)
        for _ in range(total_layers - num_stages):
            counts[np.argmin(fixed + counts * layer_cost)] += 1
        return counts.tolist()

    def min_microbatches_for_bubble(self, stage_latencies, target_bubble):
        lat = np.array(stage_latencies, dtype=np.float64)
        if lat.ndim != 1 or lat.size == 0 or not np.all(np.isfinite(lat)) or np.any(lat < 0):
            raise ValueError("stage_latencies: a non-empty sequence of finite numbers >= 0")
        if isinstance(target_bubble, bool) or not isinstance(target_bubble, int | float | np.floating):
            raise ValueError("target_bubble must be a number in [0, 1)")
        if not (np.isfinite(target_bubble) and 0 <= target_bubble < 1):
            raise ValueError("target_bubble must be a number in [0, 1)")
        total, top, keep = lat.sum(), lat.max(), 1.0 - target_bubble
        if top == 0:
            return np.int64(1)
        slope, need = total - keep * lat.size * top, keep * lat.size * (total - top)
        if slope <= 0:
            return np.int64(1) if slope == 0 and need == 0 else None
        return np.maximum(np.int64(1), np.ceil(need / slope).astype(np.int64))  # a numpy integer: accepted
