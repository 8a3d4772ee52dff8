# expect: stage_times=0 partition=0 scheduling=0 frontier=0
# Null implementation: hands the input back.


def stage_times(layer_costs, partition):
    return list(layer_costs), 1.0


def min_max_partition(layer_costs, num_stages):
    return [len(layer_costs)]


def simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0):
    return {"static": fwd, "dynamic": bwd}


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
    return list(stage_options)
