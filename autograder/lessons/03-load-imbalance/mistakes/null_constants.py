# expect: stage_times=0 partition=0 scheduling=0 frontier=0
# Null implementation: constants of the right type: ([1.0, 1.0], 1.0), [1, 1], a fixed
# static/dynamic summary and a one-point frontier.


def stage_times(layer_costs, partition):
    return [1.0, 1.0], 1.0


def min_max_partition(layer_costs, num_stages):
    return [1, 1]


def simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0):
    one = {"makespan": 10.0, "idle": [2.0, 2.0], "ops": []}
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
    return [(2, 4, 0.1, 40.0)]
