# expect: stage_times=2 partition=2 scheduling=1 frontier=1
# include: reference
# scheduling mistake: on equal start times the dynamic policy prefers the forward instead of the
# backward. The static run (and validation) are the reference's; the dynamic run is redone here.
# Issue 12, credit per returned value: the ops test weighs the static and the dynamic timelines
# separately, and the static one is right: + 0.5 of 8 weight units, 0.875 -> 1.

_reference_simulate = simulate_static_vs_dynamic


def simulate_static_vs_dynamic(fwd, bwd, extra_in_flight=0, overhead=0.0):
    out = _reference_simulate(fwd, bwd, extra_in_flight, overhead)
    F, B = [[float(v) for v in r] for r in fwd], [[float(v) for v in r] for r in bwd]
    n, P, delta = len(F), len(F[0]), float(overhead)
    nf, nb, free, end, ops = [0] * P, [0] * P, [0.0] * P, {}, []
    while len(ops) < 2 * n * P:
        best = None
        for p in range(P):
            if nb[p] < nf[p]:
                ready = end.get(("F", nb[p], p)) if p == P - 1 else end.get(("B", nb[p], p + 1))
                if ready is not None:
                    cand = (max(free[p], ready), p, 1, "B", nb[p])  # BUG: B ranks after F on a tie
                    best = cand if best is None or cand < best else best
            if nf[p] < n and nf[p] - nb[p] < P - p + extra_in_flight:
                ready = end.get(("F", nf[p], p - 1)) if p > 0 else 0.0
                if ready is not None:
                    cand = (max(free[p], ready), p, 0, "F", nf[p])
                    best = cand if best is None or cand < best else best
        start, p, _, kind, k = best
        free[p] = end[(kind, k, p)] = start + delta + (F[k][p] if kind == "F" else B[k][p])
        ops.append([p, kind, k, start, free[p]])
        if kind == "F":
            nf[p] += 1
        else:
            nb[p] += 1
    makespan = max(o[4] for o in ops)
    idle = [makespan - sum(F[k][p] + B[k][p] for k in range(n)) for p in range(P)]
    out["dynamic"] = {"makespan": makespan, "idle": idle, "ops": sorted(ops, key=lambda o: (o[3], o[0]))}
    return out
