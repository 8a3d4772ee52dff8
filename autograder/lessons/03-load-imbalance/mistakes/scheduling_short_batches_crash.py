# expect: stage_times=2 partition=2 scheduling=0.875 frontier=1
# include: reference
# scheduling mistake: the 1F1B warm-up is P − 1 − p forwards, not min(P − 1 − p, n), so the static order
# asks for microbatches that do not exist whenever n ≤ P − 2 (here: an IndexError). Issue 21: the hidden
# random cases include such short batches, so it loses the static test and both dynamic random tests
# (2 + 1 + 1 of 8) and the one-microbatch edge test (0.5): 3.5 of 8 -> 0.875 instead of 1.875.

_reference_scheduling = simulate_static_vs_dynamic


def simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0):
    n, P = len(fwd), len(fwd[0]) if len(fwd) else 0
    if n and P and n <= P - 2:
        fwd[P - 2]  # BUG: the warm-up of stage 0 reads microbatch P − 2, which does not exist
    return _reference_scheduling(fwd, bwd, extra_in_flight, overhead)
