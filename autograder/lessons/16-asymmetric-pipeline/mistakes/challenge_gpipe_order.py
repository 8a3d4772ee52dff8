# expect: simulator=1 min_microbatches=1 solver=2 challenge=0.375
# include: reference
# Challenge mistake: simulates GPipe instead of 1F1B (every stage runs all m forwards, then all m
# backwards in microbatch order), with the right dependencies and bubble. The same makespan as 1F1B for
# uniform stages, m = 1 and P = 1; different once the stages differ.
# Earns the uniform (2) and heavy-tail (1) tests, where GPipe's makespan is 1F1B's; the ordinary case
# every edge test checks is not: 3 of 16.
_reference_1f1b = simulate_1f1b


def simulate_1f1b(forward_times, backward_times, num_microbatches):
    _reference_1f1b(forward_times, backward_times, num_microbatches)  # the reference's validation
    f = [float(x) for x in forward_times]
    b = [float(x) for x in backward_times]
    P, m = len(f), int(num_microbatches)
    f_end = [[0.0] * m for _ in range(P)]
    clock = [0.0] * P
    for s in range(P):
        for k in range(m):
            ready = f_end[s - 1][k] if s > 0 else 0.0
            clock[s] = max(clock[s], ready) + f[s]
            f_end[s][k] = clock[s]
    b_end = [[0.0] * m for _ in range(P)]
    for s in range(P - 1, -1, -1):
        for k in range(m):
            ready = b_end[s + 1][k] if s < P - 1 else f_end[s][k]
            clock[s] = max(clock[s], ready) + b[s]
            b_end[s][k] = clock[s]
    makespan = max(clock)
    if makespan == 0:
        return 0.0, 0.0
    return makespan, 1.0 - m * (sum(f) + sum(b)) / (P * makespan)
