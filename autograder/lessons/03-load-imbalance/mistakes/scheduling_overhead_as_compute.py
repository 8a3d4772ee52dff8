# expect: stage_times=2 partition=2 scheduling=1.875 frontier=1
# include: reference
# scheduling mistake: the dynamic decision overhead is counted as busy time, so idle[p] misses it
# (makespan and ops are right): idle is makespan minus the operations' end - start.
# Issue 12, credit per returned value: the overhead test weighs makespan and idle separately, and
# the makespan is right: + 0.5 of 8 weight units, 1.75 -> 1.875.

_reference_simulate = simulate_static_vs_dynamic


def simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0):
    out = _reference_simulate(fwd, bwd, extra_in_flight, overhead)
    for r in out.values():
        P = len(r["idle"])
        # BUG: busy time = sum of end - start, which includes the decision overhead
        r["idle"] = [r["makespan"] - sum(o[4] - o[3] for o in r["ops"] if o[0] == p) for p in range(P)]
    return out
