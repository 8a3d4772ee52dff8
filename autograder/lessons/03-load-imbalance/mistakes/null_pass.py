# expect: stage_times=0 partition=0 scheduling=0 frontier=0
# Null implementation: every exercise is `pass` (returns None).


def stage_times(layer_costs, partition):
    pass


def min_max_partition(layer_costs, num_stages):
    pass


def simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0):
    pass


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
    pass
