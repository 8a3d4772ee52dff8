# expect: stage_times=2 partition=2 scheduling=0.875 frontier=1
# include: reference
# scheduling mistake: the static policy replays GPipe (all forwards, then all backwards) instead of
# 1F1B. The dynamic run (and validation) are the reference's; the static run is redone here.
# Issue 12, credit per returned value: the ops test weighs the static and the dynamic timelines
# separately, and the dynamic one is right: + 0.5 of 8 weight units, 0.875 -> 1.
# Issue 21: the one-microbatch/one-stage edge test also asks for the static result of an ordinary case,
# which GPipe's order gets wrong: - 0.5 of 8, 1 -> 0.875.

_reference_simulate = simulate_static_vs_dynamic


def simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0):
    out = _reference_simulate(fwd, bwd, extra_in_flight, overhead)
    F, B = [[float(v) for v in r] for r in fwd], [[float(v) for v in r] for r in bwd]
    n, P = len(F), len(F[0])
    order = [("F", k) for k in range(n)] + [("B", k) for k in range(n)]  # BUG: GPipe, on every stage
    pos, free, end, ops = [0] * P, [0.0] * P, {}, []
    while len(ops) < 2 * n * P:
        for p in range(P):
            while pos[p] < len(order):
                kind, k = order[pos[p]]
                if kind == "F":
                    ready = end.get(("F", k, p - 1)) if p > 0 else 0.0
                else:
                    ready = end.get(("F", k, p)) if p == P - 1 else end.get(("B", k, p + 1))
                if ready is None:
                    break
                start = max(free[p], ready)
                free[p] = end[(kind, k, p)] = start + (F[k][p] if kind == "F" else B[k][p])
                ops.append([p, kind, k, start, free[p]])
                pos[p] += 1
    makespan = max(o[4] for o in ops)
    idle = [makespan - sum(F[k][p] + B[k][p] for k in range(n)) for p in range(P)]
    out["static"] = {"makespan": makespan, "idle": idle, "ops": sorted(ops, key=lambda o: (o[3], o[0]))}
    return out
