# expect: simulator=1 min_microbatches=1 solver=2 challenge=0
# include: reference
# Challenge mistake: every stage warms up with min(m, P) forwards, as stage 0 does (the warm-up does not
# shrink with the stage index s). A valid order, but not 1F1B's: later stages run forwards they should
# have interleaved with backwards, which delays the gradients on their way back.
# Wrong on every core case (uniform stages included: the extra forwards delay the gradients) and on the
# ordinary case the edge tests check: 0 of 16.
_reference_1f1b = simulate_1f1b


def simulate_1f1b(forward_times, backward_times, num_microbatches):
    _reference_1f1b(forward_times, backward_times, num_microbatches)  # the reference's validation
    f = [float(x) for x in forward_times]
    b = [float(x) for x in backward_times]
    P, m = len(f), int(num_microbatches)
    orders = []
    for _s in range(P):
        warm = min(m, P)  # BUG: should be min(m, P - s)
        ops = [("F", k) for k in range(warm)]
        for k in range(m):
            ops.append(("B", k))
            if warm + k < m:
                ops.append(("F", warm + k))
        orders.append(ops)
    end = {"F": [[None] * m for _ in range(P)], "B": [[None] * m for _ in range(P)]}
    clock, nxt, left = [0.0] * P, [0] * P, 2 * P * m
    while left:
        for s in list(range(P)) + list(range(P - 1, -1, -1)):
            while nxt[s] < len(orders[s]):
                kind, k = orders[s][nxt[s]]
                if kind == "F":
                    ready, dur = (0.0 if s == 0 else end["F"][s - 1][k]), f[s]
                else:
                    ready, dur = (end["F"][s][k] if s == P - 1 else end["B"][s + 1][k]), b[s]
                if ready is None:
                    break
                clock[s] = max(clock[s], ready) + dur
                end[kind][s][k] = clock[s]
                nxt[s] += 1
                left -= 1
    makespan = max(clock)
    if makespan == 0:
        return 0.0, 0.0
    return makespan, 1.0 - m * (sum(f) + sum(b)) / (P * makespan)
