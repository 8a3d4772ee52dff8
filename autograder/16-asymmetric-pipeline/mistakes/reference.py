# expect: simulator=2 solver=2
# The reference: the finish-time recurrence for the forward flow, water-filling with a heap for the
# partition, and the contract's validation (bool is rejected as num_microbatches).
import heapq
import math
import numbers


class AsymmetricPipelineScheduler:
    def simulate_1f1b_execution(self, stage_latencies, num_microbatches):
        lat = _latencies(stage_latencies)
        m = _count(num_microbatches, "num_microbatches")
        upstream = [0.0] * m  # finish times of microbatches 0..m-1 on the previous stage
        for t in lat:
            clock = 0.0
            for k in range(m):
                clock = max(clock, upstream[k]) + t  # own previous microbatch, then upstream's k
                upstream[k] = clock
        total = float(upstream[-1])
        if total == 0.0:
            return 0.0, 0.0
        return total, 1.0 - m * math.fsum(lat) / (len(lat) * total)

    def solve_optimal_layer_partition(
        self, total_layers, layer_cost, s0_fixed_cost, s_tail_fixed_cost, num_stages
    ):
        p = _count(num_stages, "num_stages")
        total = _count(total_layers, "total_layers")
        if total < p:
            raise ValueError("total_layers must be >= num_stages (every stage keeps at least one layer)")
        c = _number(layer_cost, "layer_cost")
        if c <= 0:
            raise ValueError("layer_cost must be > 0")
        fixed = [0.0] * p
        fixed[0] += _number(s0_fixed_cost, "s0_fixed_cost")
        fixed[-1] += _number(s_tail_fixed_cost, "s_tail_fixed_cost")  # P = 1: both on stage 0
        if min(fixed) < 0:
            raise ValueError("fixed costs must be >= 0")
        counts = [1] * p
        heap = [(f + c, s) for s, f in enumerate(fixed)]
        heapq.heapify(heap)
        for _ in range(total - p):  # each further layer goes to the currently fastest stage
            _, s = heapq.heappop(heap)
            counts[s] += 1
            heapq.heappush(heap, (fixed[s] + counts[s] * c, s))
        return counts


def _latencies(values):
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ValueError(f"stage latencies must be numbers, got {v!r}")
        v = float(v)
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"stage latencies must be finite and >= 0, got {v!r}")
        out.append(v)
    if not out:
        raise ValueError("stage_latencies must not be empty")
    return out


def _count(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{what} must be an integer >= 1, got {value!r}")
    return int(value)


def _number(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number, got {value!r}")
    return float(value)
