# expect: simulator=1 min_microbatches=1 solver=2 challenge=1.125
# include: reference
# Challenge mistake: the right makespan, but the bubble counts only the forward work as busy time,
# 1 - m*sum(f)/(P*makespan): the backward passes are counted as idle.
# Earns every makespan half of the core tests (6 of 16), the all-zero, input-type and validation tests
# (0.5 + 1 + 1.5); loses m = 1 / P = 1, whose bubbles are wrong: 9 of 16.
_reference_1f1b = simulate_1f1b


def simulate_1f1b(forward_times, backward_times, num_microbatches):
    makespan, _ = _reference_1f1b(forward_times, backward_times, num_microbatches)
    f = [float(x) for x in forward_times]
    if makespan == 0:
        return 0.0, 0.0
    return makespan, 1.0 - int(num_microbatches) * sum(f) / (len(f) * makespan)
