# expect: stage_times=0 partition=0 scheduling=0 frontier=0
# Null implementation, right type with wrong values: zeros of the right shape computed from the
# input's size (one zero time per stage, one layer per stage, an all-zero summary, every (P, m) with
# zero throughput and latency).


def stage_times(layer_costs, partition):
    times = [0.0] * len(partition)
    return times, 1.0


def min_max_partition(layer_costs, num_stages):
    return [1] * num_stages


def simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0):
    p = len(fwd[0]) if len(fwd) else 0
    one = {"makespan": 0.0, "idle": [0.0] * p, "ops": []}
    return {"static": one, "dynamic": dict(one)}


def throughput_latency_frontier(
    total_work,
    stage_options,
    microbatch_options,
    *,
    overhead=0.0,
    weight_mem=0.0,
    act_mem=0.0,
    mem_cap=None,
    schedule="1f1b",
    microbatch_size=1,
):
    return [(int(p), int(m), 0.0, 0.0) for p in stage_options for m in microbatch_options]
